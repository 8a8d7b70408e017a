//===- ChunkFeedForward.cpp - feed-forwards in chunks of positions --------===//
//
// Reformer's feed-forward chunking as a rewrite: every attn.feed_forward
// runs over its positions in `chunks` chunks, so that its [positions,
// d_ff] intermediate exists for one chunk at a time, in the forward and in
// the backward (which recomputes each chunk's hidden activations). The
// lowering does the chunking; this pass decides it for the whole model.
// The result is unchanged but for rounding.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialects/Attn/IR/AttnOps.h"

namespace lcc {
#define GEN_PASS_DEF_CHUNKFEEDFORWARD
#include "passes/Passes.h.inc"
} // namespace lcc

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;

namespace {

struct ChunkFeedForwardPass
    : lcc::impl::ChunkFeedForwardBase<ChunkFeedForwardPass> {
  using ChunkFeedForwardBase::ChunkFeedForwardBase;

  void runOnOperation() override {
    if (chunks < 1) {
      getOperation().emitError() << "attn-chunk-ff: expected chunks >= 1, got "
                                 << static_cast<int64_t>(chunks);
      return signalPassFailure();
    }
    SmallVector<FeedForwardOp> ops;
    getOperation().walk([&](FeedForwardOp op) { ops.push_back(op); });
    if (ops.empty()) {
      getOperation().emitWarning(
          "attn-chunk-ff: the model has no attn.feed_forward to chunk");
      return;
    }
    for (FeedForwardOp op : ops) {
      int64_t seq =
          cast<RankedTensorType>(op.getInput().getType()).getDimSize(1);
      if (chunks > seq) {
        op.emitError() << "'attn.feed_forward' cannot run in "
                       << static_cast<int64_t>(chunks)
                       << " chunks: its sequence has only " << seq
                       << " positions; give at most " << seq;
        return signalPassFailure();
      }
      int64_t written = op.getChunks();
      if (written != 1 && written != chunks)
        op.emitRemark() << "'attn.feed_forward' written with " << written
                        << " chunks now runs in "
                        << static_cast<int64_t>(chunks);
      op.setChunks(chunks);
    }
  }
};

} // namespace
