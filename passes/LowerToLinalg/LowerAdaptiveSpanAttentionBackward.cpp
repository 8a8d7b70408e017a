//===- LowerAdaptiveSpanAttentionBackward.cpp - adaptive span's backward --===//
//
// attn.adaptive_span_attention_backward as FlashAttention-2's backward.
// The forward saved each query's log normaliser N = log sum_j e^s (m + f)
// (f the 1e-8 floor), so with e_ij = exp(s_ij - N_i) a block's weights are
// a'_ij = e_ij m_ij, recomputed and never stored. Differentiating
// a' = p m / (sum p m + f) through the softmax p gives
//
//   D_i = do_i · o_i,  dP_ij = do_i · v_j,
//   ds_ij = e_ij (m_ij (dP_ij - D_i) - f D_i),
//   dm_ij = e_ij (dP_ij - D_i),  dz_h = max_span / ramp · sum over the
//   ramp (span <= x < span + ramp) of dm,
//   dv_j = sum_i a'_ij do_i, dk_j = sum_i ds_ij q_i scale,
//   dq_i = sum_j ds_ij k_j scale.
//
// Two kernels, each parallel and free of atomics, visiting the tiles the
// forward visits: one per key tile (dk, dv and the ramp's dm summed over
// the queries), one per query tile (dq).
//
//===----------------------------------------------------------------------===//

#include "passes/LowerToLinalg/AdaptiveSpanSteps.h"
#include "passes/LowerToLinalg/FlashAttentionBackward.h"
#include "passes/LowerToLinalg/Lowerings.h"
#include "passes/LowerToLinalg/ScalarOps.h"
#include "passes/LowerToLinalg/TensorOps.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;
using namespace lcc::lowering;

namespace {

/// What a tile pair contributes: the score gradients ds (scale included),
/// the weights a' and the ramp's dm ([query tile, key tile] each).
struct BlockGradients {
  Value scoreGrad, weights, rampGrad;
};

BlockGradients blockGradients(TensorBuilder &t, const FlashAttention &flash,
                              const AdaptiveSpanMask &mask,
                              const BackwardBlock &blk,
                              const TilePosition &tile, int64_t keySeq) {
  int64_t queryTile = flash.queryTile, keyTile = flash.keyTile;
  Type f32 = t.builder().getF32Type();
  BlockProducts products = BlockProducts::of(t, blk.query);
  Value dots = products.transposedB(blk.query, blk.key,
                                    t.filled({queryTile, keyTile}, f32, 0.0));
  Value scores = mask.hideBeyondReach(
      t, flash.maskedScores(t, dots, tile, keySeq, /*mask=*/true), tile,
      /*keysByQueries=*/false);
  Value e = recomputedProbabilities(t, scores, blk.rowStatistic);
  Value m = mask.weights(t, {queryTile, keyTile}, tile,
                         /*keysByQueries=*/false);
  Value ramp = mask.onRamp(t, {queryTile, keyTile}, tile,
                           /*keysByQueries=*/false);
  Value dP = products.transposedB(blk.outGrad, blk.value,
                                  t.filled({queryTile, keyTile}, f32, 0.0));
  auto blockMap = [&](ScalarBody body) {
    return t.map({queryTile, keyTile}, f32, {e, m, ramp, dP, blk.delta},
                 {t.identityMap(2), t.identityMap(2), t.identityMap(2),
                  t.identityMap(2), t.dropLastMap(2)},
                 body);
  };
  double scale = flash.scale;
  Value scoreGrad =
      blockMap([&](OpBuilder &b, Location loc, ValueRange a) -> Value {
        Value centred = arith::SubFOp::create(b, loc, a[3], a[4]);
        Value floorTerm =
            mul(b, loc, a[4], floatConstant(b, loc, f32, kAdaptiveSpanFloor));
        Value inner = arith::SubFOp::create(b, loc, mul(b, loc, a[1], centred),
                                            floorTerm);
        return mul(b, loc, mul(b, loc, a[0], inner),
                   floatConstant(b, loc, f32, scale));
      });
  Value weights = blockMap([](OpBuilder &b, Location loc, ValueRange a) {
    return mul(b, loc, a[0], a[1]);
  });
  Value rampGrad = blockMap([](OpBuilder &b, Location loc, ValueRange a) {
    Value centred = arith::SubFOp::create(b, loc, a[3], a[4]);
    return mul(b, loc, a[2], mul(b, loc, a[0], centred));
  });
  return {scoreGrad, weights, rampGrad};
}

struct LowerAdaptiveSpanAttentionBackward
    : OpRewritePattern<AdaptiveSpanAttentionBackwardOp> {
  LowerAdaptiveSpanAttentionBackward(MLIRContext *context,
                                     AttentionTiling tiling)
      : OpRewritePattern(context), tiling(tiling) {}

  LogicalResult matchAndRewrite(AdaptiveSpanAttentionBackwardOp op,
                                PatternRewriter &rewriter) const override {
    if (!hasStaticShapes(op))
      return rewriter.notifyMatchFailure(op, "expected static shapes");
    Location loc = op.getLoc();
    TensorBuilder tb(rewriter, loc);
    auto plan = planAdaptiveSpanAttention(
        {op.getQuery(), op.getKey(), op.getValue(), op.getZ(),
         op.getQueryOffset(), static_cast<int64_t>(op.getMaxSpan()),
         static_cast<int64_t>(op.getRamp()), op.getCausal(), op.getScale()},
        tiling);
    const FlashAttention &flash = plan.first;
    const AdaptiveSpanMask &mask = plan.second;
    Type f32 = rewriter.getF32Type();
    PaddedBackwardOperands padded = PaddedBackwardOperands::build(
        tb, flash, op.getResult(), op.getResultGrad(), op.getLogNormalizer());
    int64_t queryTile = flash.queryTile;

    // Kernel 1, per key tile: dk, dv and the ramp's dm per key.
    SmallVector<Value> perKey = sumOverQueryTiles(
        rewriter, loc, flash, padded.batch, padded.heads, padded.keyTiles,
        padded.queryTiles, {padded.headDim, padded.valueDim, 1}, f32,
        [&](OpBuilder &ub, Location ul, const TilePosition &tile,
            ValueRange state) -> SmallVector<Value> {
          TensorBuilder t(ub, ul);
          BackwardBlock blk = padded.blockAt(ub, ul, tile);
          BlockProducts products = BlockProducts::of(t, blk.query);
          BlockGradients g =
              blockGradients(t, flash, mask, blk, tile, padded.keySeq);
          // The ramp's per-key sum stays f32 (a column sum, no product).
          Value ones = t.filled({queryTile, 1}, f32, 1.0);
          return {products.transposedA(g.scoreGrad, blk.query, state[0]),
                  products.transposedA(g.weights, blk.outGrad, state[1]),
                  t.matmulTransposedA(g.rampGrad, ones, state[2])};
        });
    // Kernel 2, per query tile: dq.
    Value queryGrad =
        sumOverKeyTiles(
            rewriter, loc, flash, padded.batch, padded.heads, padded.keyTiles,
            padded.queryTiles, {padded.headDim}, f32,
            [&](OpBuilder &ub, Location ul, const TilePosition &tile,
                ValueRange state) -> SmallVector<Value> {
              TensorBuilder t(ub, ul);
              BackwardBlock blk = padded.blockAt(ub, ul, tile);
              BlockGradients g =
                  blockGradients(t, flash, mask, blk, tile, padded.keySeq);
              return {BlockProducts::of(t, blk.query)
                          .plain(g.scoreGrad, blk.key, state[0])};
            })
            .front();

    // dz_h = max_span / ramp · the ramp's dm summed over batch and keys.
    Value perHead =
        sumOverDim(tb, sumOverDim(tb, sumOverDim(tb, perKey[2], 3), 2), 0);
    double slope = double(op.getMaxSpan()) / double(op.getRamp());
    Value zGrad =
        tb.mapSameShape({perHead}, [&](OpBuilder &b, Location l, ValueRange a) {
          return mul(b, l, a[0], floatConstant(b, l, f32, slope));
        });

    // The gradients in their operands' type (f32 sums, rounded once); z's
    // is f32.
    Type elt = tensorType(op.getQuery()).getElementType();
    auto finished = [&](Value grad, bool ofKeys) {
      return withElementType(tb, padded.unpadded(rewriter, loc, grad, ofKeys),
                             elt);
    };
    rewriter.replaceOp(op, {finished(queryGrad, /*ofKeys=*/false),
                            finished(perKey[0], /*ofKeys=*/true),
                            finished(perKey[1], /*ofKeys=*/true), zGrad});
    return success();
  }

  AttentionTiling tiling;
};

} // namespace

void lcc::populateAdaptiveSpanAttentionBackwardLoweringPatterns(
    RewritePatternSet &patterns, AttentionTiling tiling) {
  patterns.add<LowerAdaptiveSpanAttentionBackward>(patterns.getContext(),
                                                   tiling);
}
