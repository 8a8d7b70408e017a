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

/// One tile pair's operands, sliced from the padded tensors.
struct Block {
  Value query, key, value, outGrad, logNormalizer, delta;
};

/// What a tile pair contributes: the score gradients ds (scale included),
/// the weights a' and the ramp's dm ([query tile, key tile] each).
struct BlockGradients {
  Value scoreGrad, weights, rampGrad;
};

BlockGradients blockGradients(TensorBuilder &t, const FlashAttention &flash,
                              const AdaptiveSpanMask &mask, const Block &blk,
                              const TilePosition &tile, int64_t keySeq) {
  int64_t queryTile = flash.queryTile, keyTile = flash.keyTile;
  Type f32 = t.builder().getF32Type();
  Value dots = t.matmulTransposedB(blk.query, blk.key,
                                   t.filled({queryTile, keyTile}, f32, 0.0));
  Value scores = mask.hideBeyondReach(
      t, flash.maskedScores(t, dots, tile, keySeq, /*mask=*/true), tile,
      /*keysByQueries=*/false);
  Value e = recomputedProbabilities(t, scores, blk.logNormalizer);
  Value m = mask.weights(t, {queryTile, keyTile}, tile,
                         /*keysByQueries=*/false);
  Value ramp = mask.onRamp(t, {queryTile, keyTile}, tile,
                           /*keysByQueries=*/false);
  Value dP = t.matmulTransposedB(blk.outGrad, blk.value,
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
         static_cast<int64_t>(op.getMaxSpan()),
         static_cast<int64_t>(op.getRamp()), op.getCausal(), op.getScale()},
        tiling);
    const FlashAttention &flash = plan.first;
    const AdaptiveSpanMask &mask = plan.second;
    RankedTensorType qType = tensorType(op.getQuery()),
                     kType = tensorType(op.getKey()),
                     vType = tensorType(op.getValue());
    Type f32 = rewriter.getF32Type();
    int64_t batch = qType.getDimSize(0), heads = qType.getDimSize(1);
    int64_t querySeq = qType.getDimSize(2), headDim = qType.getDimSize(3);
    int64_t keySeq = kType.getDimSize(2), valueDim = vType.getDimSize(3);
    int64_t queryTile = flash.queryTile, keyTile = flash.keyTile;
    int64_t queryTiles = llvm::divideCeil(querySeq, queryTile);
    int64_t keyTiles = llvm::divideCeil(keySeq, keyTile);
    int64_t paddedQueries = queryTiles * queryTile;
    int64_t paddedKeys = keyTiles * keyTile;

    // D_i = do_i · o_i; padded queries have do = 0 and add nothing.
    Value delta =
        tb.reduceLastDim({op.getResultGrad(), op.getResult()}, 0.0,
                         [](OpBuilder &b, Location l, ValueRange a) {
                           return multiplyAccumulate(b, l, a[0], a[1], a[2]);
                         });
    Value query = padSeq(tb, op.getQuery(), paddedQueries);
    Value outGrad = padSeq(tb, op.getResultGrad(), paddedQueries);
    // A padded query sees nothing: its weights are 0.
    Value logNormalizer =
        padSeq(tb, op.getLogNormalizer(), paddedQueries, kNegativeInfinity);
    Value paddedDelta = padSeq(tb, delta, paddedQueries);
    Value key = padSeq(tb, op.getKey(), paddedKeys);
    Value value = padSeq(tb, op.getValue(), paddedKeys);
    auto blockAt = [&](OpBuilder &b, Location l, const TilePosition &at) {
      return Block{
          tileOf(b, l, query, at.batch, at.head, at.queryStart, queryTile),
          tileOf(b, l, key, at.batch, at.head, at.keyStart, keyTile),
          tileOf(b, l, value, at.batch, at.head, at.keyStart, keyTile),
          tileOf(b, l, outGrad, at.batch, at.head, at.queryStart, queryTile),
          rowTileOf(b, l, logNormalizer, at.batch, at.head, at.queryStart,
                    queryTile),
          rowTileOf(b, l, paddedDelta, at.batch, at.head, at.queryStart,
                    queryTile)};
    };

    // Kernel 1, per key tile: dk, dv and the ramp's dm per key.
    SmallVector<Value> perKey = sumOverQueryTiles(
        rewriter, loc, flash, batch, heads, keyTiles, queryTiles,
        {headDim, valueDim, 1}, f32,
        [&](OpBuilder &ub, Location ul, const TilePosition &tile,
            ValueRange state) -> SmallVector<Value> {
          TensorBuilder t(ub, ul);
          Block blk = blockAt(ub, ul, tile);
          BlockGradients g = blockGradients(t, flash, mask, blk, tile, keySeq);
          Value ones = t.filled({queryTile, 1}, f32, 1.0);
          return {t.matmulTransposedA(g.scoreGrad, blk.query, state[0]),
                  t.matmulTransposedA(g.weights, blk.outGrad, state[1]),
                  t.matmulTransposedA(g.rampGrad, ones, state[2])};
        });
    // Kernel 2, per query tile: dq.
    Value queryGrad =
        sumOverKeyTiles(rewriter, loc, flash, batch, heads, keyTiles,
                        queryTiles, {headDim}, f32,
                        [&](OpBuilder &ub, Location ul,
                            const TilePosition &tile,
                            ValueRange state) -> SmallVector<Value> {
                          TensorBuilder t(ub, ul);
                          Block blk = blockAt(ub, ul, tile);
                          BlockGradients g =
                              blockGradients(t, flash, mask, blk, tile, keySeq);
                          return {t.matmul(g.scoreGrad, blk.key, state[0])};
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

    auto unpadded = [&](Value x, int64_t seq, int64_t width) -> Value {
      if (tensorType(x).getDimSize(2) == seq)
        return x;
      SmallVector<OpFoldResult> zeros(4, rewriter.getIndexAttr(0));
      return sliceOf(
          rewriter, loc, RankedTensorType::get({batch, heads, seq, width}, f32),
          x, zeros,
          {rewriter.getIndexAttr(batch), rewriter.getIndexAttr(heads),
           rewriter.getIndexAttr(seq), rewriter.getIndexAttr(width)});
    };
    rewriter.replaceOp(op, {unpadded(queryGrad, querySeq, headDim),
                            unpadded(perKey[0], keySeq, headDim),
                            unpadded(perKey[1], keySeq, valueDim), zGrad});
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
