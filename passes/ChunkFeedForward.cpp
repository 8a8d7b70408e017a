//===- ChunkFeedForward.cpp - feed-forwards in chunks of positions --------===//
//
// Reformer's feed-forward chunking as a rewrite (and, with
// attention-chunks, its attention chunking over batch x heads): every
// attn.feed_forward runs over its positions in `chunks` chunks, so that its
// [positions, d_ff] intermediate exists for one chunk at a time, in the forward
// and in the backward (which recomputes each chunk's hidden activations). The
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

  /// Every attention form that attends in groups of rows (batch x heads),
  /// LSH attention among them, in `attentionChunks` groups.
  LogicalResult chunkAttention() {
    SmallVector<AttentionFormInterface> forms;
    getOperation().walk([&](AttentionFormInterface form) {
      if (form.getChunkableRows() > 0)
        forms.push_back(form);
    });
    if (forms.empty())
      getOperation().emitWarning(
          "attn-chunk-ff: attention-chunks applies to attention that runs "
          "in groups of rows (attn.lsh_attention), and the model has none "
          "(dense, sparse and routed attention work tile by tile already)");
    for (AttentionFormInterface form : forms) {
      int64_t rows = form.getChunkableRows();
      if (attentionChunks > rows)
        return form->emitError() << "'" << form->getName() << "' cannot run in "
                                 << static_cast<int64_t>(attentionChunks)
                                 << " groups of rows: it has only " << rows
                                 << " (batch x heads); give at most " << rows;
      form.setRowChunks(attentionChunks);
    }
    return success();
  }

  void runOnOperation() override {
    if (failed(checkOptionRanges(
            getOperation(), getArgument(),
            {{knobs::kFeedForwardChunks, chunks},
             {knobs::kAttentionChunks, attentionChunks}})))
      return signalPassFailure();
    if (attentionChunks > 0 && failed(chunkAttention()))
      return signalPassFailure();
    if (chunks == 0)
      return; // The feed-forwards stay as written.
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
