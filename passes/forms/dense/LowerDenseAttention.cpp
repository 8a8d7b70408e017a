//===- LowerDenseAttention.cpp - attn.attention in the flash form ---------===//
//
// Dense attention (docs/design.md §3) as FlashAttention, configured from
// the op by configureFlashAttention (LowerToLinalg/); with a logsumexp
// result (the train step's forward) it also returns each query's
// logsumexp for the backward.
//
//===----------------------------------------------------------------------===//

#include "passes/forms/dense/DenseForm.h"
#include "passes/LowerToLinalg/Lowerings.h"
#include "passes/LowerToLinalg/TensorOps.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;
using namespace lcc::lowering;

namespace {

struct LowerAttention : OpRewritePattern<AttentionOp> {
  LowerAttention(MLIRContext *context, AttentionTiling tiling)
      : OpRewritePattern(context), tiling(tiling) {}

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (!hasStaticShapes(op))
      return rewriter.notifyMatchFailure(op, "expected static shapes");
    if (!op.getLogsumexp()) {
      rewriter.replaceOp(op, buildFlashAttention(rewriter, op, tiling));
      return success();
    }
    auto [result, logSumExp] =
        configureFlashAttention(rewriter,
                                AttentionSpec::of(op, /*remarks=*/true), tiling)
            .buildWithLogSumExp(rewriter, op.getLoc());
    rewriter.replaceOp(op, {result, logSumExp});
    return success();
  }

  AttentionTiling tiling;
};

} // namespace

void lcc::populateDenseAttentionLoweringPatterns(RewritePatternSet &patterns,
                                                 AttentionTiling tiling) {
  patterns.add<LowerAttention>(patterns.getContext(), tiling);
}
