//===- LowerRelativeAttention.cpp - Transformer-XL attention, flash form --===//
//
// attn.relative_attention (docs/design.md §3) as FlashAttention over the memory
// and the segment: the content term is dense attention of q + u, causal
// with the queries M = k_seq - q_seq keys late; the position term is added
// to each block of scores. A query tile [qs, qs + Tq) meets a key tile
// [ks, ks + Tk) at the distances M + qs - ks - (Tk - 1) ... M + qs - ks +
// Tq - 1, a band of Tq + Tk - 1 encodings (rounded up to whole m16 tiles,
// for the tensor cores): one contraction of that band with the tile's
// (q + w) · scale (on bf16/f16 pairs with f32 sums), whose diagonals are
// the block's terms
// (Transformer-XL's _rel_shift, done per tile and exactly). No [q_seq,
// k_seq] tensor is built. The steps shared with the backward are in
// RelativeSteps.h.
//
//===----------------------------------------------------------------------===//

#include "passes/LowerToLinalg/Lowerings.h"
#include "passes/LowerToLinalg/RelativeSteps.h"
#include "passes/LowerToLinalg/TensorOps.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;
using namespace lcc::lowering;

namespace {

struct LowerRelativeAttention : OpRewritePattern<RelativeAttentionOp> {
  LowerRelativeAttention(MLIRContext *context, AttentionTiling tiling)
      : OpRewritePattern(context), tiling(tiling) {}

  LogicalResult matchAndRewrite(RelativeAttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (!hasStaticShapes(op))
      return rewriter.notifyMatchFailure(op, "expected static shapes");
    Location loc = op.getLoc();
    TensorBuilder tb(rewriter, loc);
    RelativeAttentionPlan plan = planRelativeAttention(
        tb,
        {op.getQuery(), op.getKey(), op.getValue(), op.getPos(), op.getU(),
         op.getW(), op.getQueryOffset(), op.getScale(), op.getClampLen(),
         op.getSameLength()},
        tiling);
    FlashAttention flash = plan.flash;
    flash.addToScores = plan.positionTerm(tb);
    if (op.getLogsumexp()) {
      auto [result, logSumExp] = flash.buildWithLogSumExp(rewriter, loc);
      rewriter.replaceOp(op, {result, logSumExp});
    } else {
      rewriter.replaceOp(op, flash.build(rewriter, loc));
    }
    return success();
  }

  AttentionTiling tiling;
};

} // namespace

void lcc::populateRelativeAttentionLoweringPatterns(RewritePatternSet &patterns,
                                                    AttentionTiling tiling) {
  patterns.add<LowerRelativeAttention>(patterns.getContext(), tiling);
}
