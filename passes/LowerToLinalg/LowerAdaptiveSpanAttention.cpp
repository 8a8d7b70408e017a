//===- LowerAdaptiveSpanAttention.cpp - adaptive span, flash form ---------===//
//
// attn.adaptive_span_attention (docs/design.md §3) as FlashAttention whose
// probabilities are weighed by the soft span mask m after the softmax and
// renormalised: the online softmax sums e (m + 1e-8) and accumulates
// e m v. Keys beyond a head's reach (span + ramp) are hidden, and a tile
// pair wholly beyond it is never read: the time follows the learned span.
// The mask's blocks are in AdaptiveSpanSteps.h.
//
//===----------------------------------------------------------------------===//

#include "passes/LowerToLinalg/AdaptiveSpanSteps.h"
#include "passes/LowerToLinalg/Lowerings.h"
#include "passes/LowerToLinalg/TensorOps.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;
using namespace lcc::lowering;

namespace {

struct LowerAdaptiveSpanAttention : OpRewritePattern<AdaptiveSpanAttentionOp> {
  LowerAdaptiveSpanAttention(MLIRContext *context, AttentionTiling tiling)
      : OpRewritePattern(context), tiling(tiling) {}

  LogicalResult matchAndRewrite(AdaptiveSpanAttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (!hasStaticShapes(op))
      return rewriter.notifyMatchFailure(op, "expected static shapes");
    FlashAttention flash =
        planAdaptiveSpanAttention(
            {op.getQuery(), op.getKey(), op.getValue(), op.getZ(),
             op.getQueryOffset(), static_cast<int64_t>(op.getMaxSpan()),
             static_cast<int64_t>(op.getRamp()), op.getCausal(), op.getScale()},
            tiling)
            .first;
    if (op.getLogNormalizer()) {
      auto [result, logNormalizer] =
          flash.buildWithLogSumExp(rewriter, op.getLoc());
      rewriter.replaceOp(op, {result, logNormalizer});
    } else {
      rewriter.replaceOp(op, flash.build(rewriter, op.getLoc()));
    }
    return success();
  }

  AttentionTiling tiling;
};

} // namespace

void lcc::populateAdaptiveSpanAttentionLoweringPatterns(
    RewritePatternSet &patterns, AttentionTiling tiling) {
  patterns.add<LowerAdaptiveSpanAttention>(patterns.getContext(), tiling);
}
