//===- LowerLocalAttention.cpp - local.attention in the flash form --------===//
//
// Local attention is lcc's FlashAttention with two predicates: a key is
// visible when its window is within look_backward / look_forward windows of
// the query's, and a key tile is visited only if it meets the windows some
// query of the query tile sees. Hidden tiles are never read, so the cost is
// O(seq * window), not O(seq^2). Its backward is lcc's flash backward
// with the same predicates: it visits the tiles the forward visits.
//
//===----------------------------------------------------------------------===//

#include "LocalAttention.h"
#include "LocalDialect.h"

#include "passes/LowerToLinalg/FlashAttentionBackward.h"
#include "passes/LowerToLinalg/ScalarOps.h"
#include "passes/LowerToLinalg/TensorOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::lowering;

namespace {

using P = arith::CmpIPredicate;

/// floor(j / w) - floor(i / w) in [-back, ahead].
VisibilityPredicate withinWindows(int64_t w, int64_t back, int64_t ahead) {
  return [=](OpBuilder &b, Location loc, const ScorePosition &at) -> Value {
    Value width = indexConstant(b, loc, w);
    Value d = arith::SubIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, at.key, width),
        arith::DivUIOp::create(b, loc, at.query, width));
    Value notTooFar =
        arith::CmpIOp::create(b, loc, P::sge, d, indexConstant(b, loc, -back));
    Value notTooNear =
        arith::CmpIOp::create(b, loc, P::sle, d, indexConstant(b, loc, ahead));
    return arith::AndIOp::create(b, loc, notTooFar, notTooNear);
  };
}

/// The queries [qs, qs + queryTile) see keys [lo, hi]: from the first
/// window of the first query's look-back to the last of the last query's
/// look-ahead. A key tile is visited if it meets that range.
TileVisibilityPredicate tilesWithinWindows(int64_t w, int64_t back,
                                           int64_t ahead, int64_t queryTile,
                                           int64_t keyTile) {
  return [=](OpBuilder &b, Location loc, const TilePosition &at) -> Value {
    auto index = [&](int64_t v) { return indexConstant(b, loc, v); };
    Value width = index(w);
    Value firstWindow = arith::DivUIOp::create(b, loc, at.queryStart, width);
    Value lastWindow = arith::DivUIOp::create(
        b, loc,
        arith::AddIOp::create(b, loc, at.queryStart, index(queryTile - 1)),
        width);
    Value lo = arith::MulIOp::create(
        b, loc, arith::SubIOp::create(b, loc, firstWindow, index(back)), width);
    Value hi = arith::SubIOp::create(
        b, loc,
        arith::MulIOp::create(
            b, loc, arith::AddIOp::create(b, loc, lastWindow, index(ahead + 1)),
            width),
        index(1));
    Value keyEnd =
        arith::AddIOp::create(b, loc, at.keyStart, index(keyTile - 1));
    return arith::AndIOp::create(
        b, loc, arith::CmpIOp::create(b, loc, P::sle, at.keyStart, hi),
        arith::CmpIOp::create(b, loc, P::sge, keyEnd, lo));
  };
}

/// The flash attention of a local.attention (or of the forward whose
/// backward `op` is): its operands, and the window predicates of its
/// attributes.
template <typename OpTy>
FlashAttention configureLocalFlash(OpTy op, AttentionTiling tiling) {
  int64_t seq = tensorType(op.getQuery()).getDimSize(2);
  FlashAttention flash;
  flash.query = op.getQuery();
  flash.key = op.getKey();
  flash.value = op.getValue();
  flash.scale = attentionScale(op.getScale(), op.getQuery());
  flash.causal = op.getCausal();
  flash.queryTile = std::min(tiling.queryTile, seq);
  flash.keyTile = std::min(tiling.keyTile, seq);
  int64_t ahead = op.getCausal() ? 0 : op.getLookForward();
  flash.visible = withinWindows(op.getWindow(), op.getLookBackward(), ahead);
  flash.tileVisible = tilesWithinWindows(op.getWindow(), op.getLookBackward(),
                                         ahead, flash.queryTile, flash.keyTile);
  return flash;
}

struct LowerLocalAttention : OpRewritePattern<local::AttentionOp> {
  LowerLocalAttention(MLIRContext *context, AttentionTiling tiling)
      : OpRewritePattern(context), tiling(tiling) {}

  LogicalResult matchAndRewrite(local::AttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (!hasStaticShapes(op))
      return rewriter.notifyMatchFailure(op, "expected static shapes");
    FlashAttention flash = configureLocalFlash(op, tiling);
    if (!op.getLogsumexp()) {
      rewriter.replaceOp(op, flash.build(rewriter, op.getLoc()));
      return success();
    }
    auto [result, logSumExp] = flash.buildWithLogSumExp(rewriter, op.getLoc());
    rewriter.replaceOp(op, {result, logSumExp});
    return success();
  }

  AttentionTiling tiling;
};

/// FlashAttention-2's backward over the tiles the forward visits.
struct LowerLocalAttentionBackward
    : OpRewritePattern<local::AttentionBackwardOp> {
  LowerLocalAttentionBackward(MLIRContext *context, AttentionTiling tiling)
      : OpRewritePattern(context), tiling(tiling) {}

  LogicalResult matchAndRewrite(local::AttentionBackwardOp op,
                                PatternRewriter &rewriter) const override {
    if (!hasStaticShapes(op))
      return rewriter.notifyMatchFailure(op, "expected static shapes");
    FlashAttentionBackward backward{configureLocalFlash(op, tiling),
                                    op.getResult(), op.getLogsumexp(),
                                    op.getResultGrad(),
                                    /*scoreDerivative=*/nullptr};
    FailureOr<std::array<Value, 3>> grads =
        backward.build(rewriter, op.getLoc());
    if (failed(grads))
      return failure();
    rewriter.replaceOp(op, ValueRange(*grads));
    return success();
  }

  AttentionTiling tiling;
};

} // namespace

void local::populateLocalAttentionLoweringPatterns(RewritePatternSet &patterns,
                                                   AttentionTiling tiling) {
  patterns.add<LowerLocalAttention, LowerLocalAttentionBackward>(
      patterns.getContext(), tiling);
}
