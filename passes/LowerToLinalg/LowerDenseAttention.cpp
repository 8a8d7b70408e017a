//===- LowerDenseAttention.cpp - attn.attention in the flash form ---------===//
//
// Dense attention (DESIGN.md §3) as FlashAttention with no extra mask;
// shared-QK attention attends to the unit-normalised queries, and a
// token's score with itself is Reformer's -1e5.
//
//===----------------------------------------------------------------------===//

#include "passes/LowerToLinalg/FlashAttention.h"
#include "passes/LowerToLinalg/Lowerings.h"
#include "passes/LowerToLinalg/ScalarOps.h"
#include "passes/LowerToLinalg/TensorOps.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;
using namespace lcc::lowering;

namespace {

/// Reformer's score of a token with itself under shared-QK attention.
constexpr double kSelfAttentionScore = -1e5;

/// Under shared QK a token may attend to itself only when nothing else is
/// visible: its score becomes -1e5.
Value selfScoreOfSharedQK(OpBuilder &b, Location loc, Value score,
                          const ScorePosition &position) {
  Value self = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                     position.query, position.key);
  return arith::SelectOp::create(
      b, loc, self, floatConstant(b, loc, score.getType(), kSelfAttentionScore),
      score);
}

struct LowerAttention : OpRewritePattern<AttentionOp> {
  LowerAttention(MLIRContext *context, AttentionTiling tiling)
      : OpRewritePattern(context), tiling(tiling) {}

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (!hasStaticShapes(op))
      return rewriter.notifyMatchFailure(op, "expected static shapes");
    TensorBuilder tb(rewriter, op.getLoc());
    FlashAttention flash;
    flash.query = op.getQuery();
    flash.key =
        op.getSharedQk() ? normalizeRows(tb, op.getQuery()) : op.getKey();
    flash.value = op.getValue();
    flash.scale = attentionScale(op.getScale(), op.getQuery());
    flash.causal = op.getCausal();
    if (op.getSharedQk())
      flash.modifyScore = selfScoreOfSharedQK;
    flash.queryTile =
        std::min(tiling.queryTile, tensorType(op.getQuery()).getDimSize(2));
    flash.keyTile =
        std::min(tiling.keyTile, tensorType(op.getKey()).getDimSize(2));
    rewriter.replaceOp(op, flash.build(rewriter, op.getLoc()));
    return success();
  }

  AttentionTiling tiling;
};

} // namespace

void lcc::populateDenseAttentionLoweringPatterns(RewritePatternSet &patterns,
                                                 AttentionTiling tiling) {
  patterns.add<LowerAttention>(patterns.getContext(), tiling);
}
