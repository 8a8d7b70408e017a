//===- DenseToLSH.cpp - shared-QK attention to Reformer LSH ---------------===//
//
// Rewrites shared-QK attn.attention into attn.lsh_attention. LSH changes
// the result (an approximation), so the rewrite runs only when asked and
// reports each op it rewrites or keeps.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/IR/PatternMatch.h"

namespace lcc {
#define GEN_PASS_DEF_DENSETOLSH
#include "passes/Passes.h.inc"
} // namespace lcc

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;

attn::LSHAttentionOp lcc::rewriteToLSH(RewriterBase &rewriter,
                                       attn::AttentionOp op, int64_t nHashes,
                                       int64_t bucketSize, int64_t seed) {
  rewriter.setInsertionPoint(op);
  auto lsh =
      LSHAttentionOp::create(rewriter, op.getLoc(), op.getResult().getType(),
                             op.getQuery(), op.getValue(), nHashes, bucketSize,
                             op.getCausal(), seed, op.getScaleAttr());
  rewriter.replaceOp(op, lsh.getResult());
  return lsh;
}

namespace {

struct DenseToLSHPass : lcc::impl::DenseToLSHBase<DenseToLSHPass> {
  using DenseToLSHBase::DenseToLSHBase;

  void runOnOperation() override {
    if (failed(checkOptionRanges(getOperation(), "attn-dense-to-lsh",
                                 {{"n-hashes", nHashes, 1, kMaxHashRounds},
                                  {"bucket-size", bucketSize, 1},
                                  {"seed", seed, 0}})))
      return signalPassFailure();
    IRRewriter rewriter(&getContext());
    SmallVector<AttentionOp> ops;
    getOperation().walk([&](AttentionOp op) { ops.push_back(op); });
    int64_t next = seed;
    for (AttentionOp op : ops) {
      if (op.hasMaskOrScore()) {
        op.emitRemark("'attn.attention' kept dense: LSH attention cannot "
                      "honour its mask or score region");
        continue;
      }
      // LSH hashes one set of vectors as both queries and keys.
      if (!op.getSharedQk()) {
        op.emitRemark("'attn.attention' kept dense: LSH attention needs "
                      "shared queries and keys (shared_qk)");
        continue;
      }
      int64_t seq =
          cast<RankedTensorType>(op.getQuery().getType()).getDimSize(2);
      if (!ShapedType::isDynamic(seq) && bucketSize > seq) {
        // Every chunk would attend to the whole padded sequence: slower
        // than dense attention, and no approximation of it worth having.
        op.emitError() << "'attn.attention' cannot become LSH attention "
                          "with bucket size "
                       << static_cast<int64_t>(bucketSize)
                       << ": its sequence has only " << seq
                       << " tokens; give a bucket size of at most " << seq;
        return signalPassFailure();
      }
      int64_t opSeed = next++;
      op.emitRemark() << "'attn.attention' rewritten to LSH attention ("
                      << static_cast<int64_t>(nHashes) << " hashes, bucket "
                      << static_cast<int64_t>(bucketSize) << ", seed " << opSeed
                      << ")";
      rewriteToLSH(rewriter, op, nHashes, bucketSize, opSeed);
    }
  }
};

} // namespace
