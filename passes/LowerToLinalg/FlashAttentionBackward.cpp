//===- FlashAttentionBackward.cpp - the flash backward's shared steps -----===//

#include "passes/LowerToLinalg/FlashAttentionBackward.h"
#include "passes/LowerToLinalg/ScalarOps.h"
#include "passes/LowerToLinalg/TensorOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::lowering;

Value lcc::lowering::recomputedProbabilities(TensorBuilder &t, Value scores,
                                             Value logSumExp) {
  RankedTensorType type = tensorType(scores);
  Type elt = type.getElementType();
  return t.map(type.getShape(), elt, {scores, logSumExp},
               {t.identityMap(2), t.dropLastMap(2)},
               [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
                 Value none = arith::CmpFOp::create(
                     b, loc, arith::CmpFPredicate::OEQ, a[1],
                     floatConstant(b, loc, elt, kNegativeInfinity));
                 return arith::SelectOp::create(b, loc, none,
                                                floatConstant(b, loc, elt, 0.0),
                                                expShifted(b, loc, a[0], a[1]));
               });
}

PaddedBackwardOperands
PaddedBackwardOperands::build(TensorBuilder &t, const FlashAttention &flash,
                              Value out, Value outGrad, Value rowStatistic,
                              Value rowStatisticGrad) {
  RankedTensorType qType = tensorType(flash.query),
                   kType = tensorType(flash.key),
                   vType = tensorType(flash.value);
  PaddedBackwardOperands p;
  p.batch = qType.getDimSize(0);
  p.heads = qType.getDimSize(1);
  p.querySeq = qType.getDimSize(2);
  p.headDim = qType.getDimSize(3);
  p.keySeq = kType.getDimSize(2);
  p.valueDim = vType.getDimSize(3);
  p.queryTile = flash.queryTile;
  p.keyTile = flash.keyTile;
  p.queryTiles = llvm::divideCeil(p.querySeq, p.queryTile);
  p.keyTiles = llvm::divideCeil(p.keySeq, p.keyTile);
  int64_t paddedQueries = p.queryTiles * p.queryTile;
  int64_t paddedKeys = p.keyTiles * p.keyTile;
  // delta_i = do_i · o_i, in f32; padded queries have do = 0 and add
  // nothing.
  RankedTensorType outType = tensorType(out);
  Type f32 = t.builder().getF32Type();
  unsigned rank = outType.getRank();
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.back() = utils::IteratorType::reduction;
  Value delta = t.generic(
      t.filled(outType.getShape().drop_back(), f32, 0.0), {outGrad, out},
      {t.identityMap(rank), t.identityMap(rank), t.dropLastMap(rank)},
      iterators, [](OpBuilder &b, Location l, ValueRange a) {
        return multiplyAccumulate(b, l, widenedToF32(b, l, a[0]),
                                  widenedToF32(b, l, a[1]), a[2]);
      });
  if (rowStatisticGrad)
    delta = t.mapSameShape(
        {delta, rowStatisticGrad}, [](OpBuilder &b, Location l, ValueRange a) {
          return arith::SubFOp::create(b, l, a[0], a[1]).getResult();
        });
  p.query = padSeq(t, flash.query, paddedQueries);
  p.outGrad = padSeq(t, outGrad, paddedQueries);
  p.rowStatistic = padSeq(t, rowStatistic, paddedQueries, kNegativeInfinity);
  p.delta = padSeq(t, delta, paddedQueries);
  p.key = padSeq(t, flash.key, paddedKeys);
  p.value = padSeq(t, flash.value, paddedKeys);
  p.forward = flash;
  return p;
}

BackwardBlock PaddedBackwardOperands::blockAt(OpBuilder &b, Location l,
                                              const TilePosition &at) const {
  Value queryStart = forward.queryIndex(b, l, at.queryStart);
  return BackwardBlock{
      tileOf(b, l, query, at.batch, at.head, queryStart, queryTile),
      tileOf(b, l, key, at.batch, at.head, at.keyStart, keyTile),
      tileOf(b, l, value, at.batch, at.head, at.keyStart, keyTile),
      tileOf(b, l, outGrad, at.batch, at.head, queryStart, queryTile),
      rowTileOf(b, l, rowStatistic, at.batch, at.head, queryStart, queryTile),
      rowTileOf(b, l, delta, at.batch, at.head, queryStart, queryTile)};
}

Value PaddedBackwardOperands::unpadded(OpBuilder &b, Location loc, Value x,
                                       bool ofKeys) const {
  RankedTensorType type = tensorType(x);
  int64_t seq = ofKeys ? keySeq : querySeq, width = type.getDimSize(3);
  if (type.getDimSize(2) == seq)
    return x;
  SmallVector<OpFoldResult> zeros(4, b.getIndexAttr(0));
  return sliceOf(
      b, loc,
      RankedTensorType::get({batch, heads, seq, width}, type.getElementType()),
      x, zeros,
      {b.getIndexAttr(batch), b.getIndexAttr(heads), b.getIndexAttr(seq),
       b.getIndexAttr(width)});
}

namespace {

/// One kernel of the backward: for each (batch, head, outer tile), zeros of
/// [outer tile, widths[i]] folded by `block` over the inner tiles the
/// forward visits with it. Outer tiles are key tiles (inner: query tiles)
/// when `overKeyTiles`, else query tiles (inner: key tiles).
SmallVector<Value> foldTilePairs(OpBuilder &builder, Location loc,
                                 const FlashAttention &flash, int64_t batch,
                                 int64_t heads, int64_t keyTiles,
                                 int64_t queryTiles, bool overKeyTiles,
                                 ArrayRef<int64_t> widths, Type elementType,
                                 const TilePairStep &block) {
  TensorBuilder tb(builder, loc);
  int64_t outerTile = overKeyTiles ? flash.keyTile : flash.queryTile;
  int64_t innerTile = overKeyTiles ? flash.queryTile : flash.keyTile;
  int64_t outerTiles = overKeyTiles ? keyTiles : queryTiles;
  SmallVector<Value> shared;
  for (int64_t width : widths)
    shared.push_back(
        tb.empty({batch, heads, outerTiles * outerTile, width}, elementType));
  auto forall = scf::ForallOp::create(
      builder, loc,
      ArrayRef<OpFoldResult>{builder.getIndexAttr(batch),
                             builder.getIndexAttr(heads),
                             builder.getIndexAttr(outerTiles)},
      shared, std::nullopt);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(forall.getBody());
  TensorBuilder body(builder, loc);
  TilePosition where;
  where.batch = forall.getInductionVars()[0];
  where.head = forall.getInductionVars()[1];
  Value outerStart = arith::MulIOp::create(
      builder, loc, forall.getInductionVars()[2], body.index(outerTile));
  if (overKeyTiles)
    where.keyStart = outerStart;
  else
    where.queryStart = flash.placedAmongKeys(builder, loc, outerStart);
  // Causally, a key tile is seen from some query tile on, and a query tile
  // sees key tiles up to some end.
  Value first = overKeyTiles ? flash.firstQueryTile(builder, loc, outerStart)
                             : body.index(0);
  Value end = overKeyTiles ? body.index(queryTiles)
                           : flash.keyTileEnd(body, where.queryStart, keyTiles);
  SmallVector<Value> init;
  for (int64_t width : widths)
    init.push_back(body.filled({outerTile, width}, elementType, 0.0));
  auto loop = scf::ForOp::create(
      builder, loc, first, end, body.index(1), init,
      [&](OpBuilder &nb, Location nl, Value innerIndex, ValueRange state) {
        TilePosition tile = where;
        Value innerStart = arith::MulIOp::create(
            nb, nl, innerIndex, indexConstant(nb, nl, innerTile));
        if (overKeyTiles)
          tile.queryStart = flash.placedAmongKeys(nb, nl, innerStart);
        else
          tile.keyStart = innerStart;
        scf::YieldOp::create(
            nb, nl,
            flash.ifTileVisible(nb, nl, tile, state,
                                [&](OpBuilder &ub, Location ul) {
                                  return block(ub, ul, tile, state);
                                }));
      });
  builder.setInsertionPointToStart(forall.getTerminator().getBody());
  for (auto [i, width] : llvm::enumerate(widths))
    insertIntoShared(
        builder, loc, loop.getResult(i), forall.getRegionIterArgs()[i],
        {where.batch, where.head, outerStart, builder.getIndexAttr(0)},
        {builder.getIndexAttr(1), builder.getIndexAttr(1),
         builder.getIndexAttr(outerTile), builder.getIndexAttr(width)});
  return SmallVector<Value>(forall.getResults());
}

} // namespace

SmallVector<Value> lcc::lowering::sumOverQueryTiles(
    OpBuilder &builder, Location loc, const FlashAttention &flash,
    int64_t batch, int64_t heads, int64_t keyTiles, int64_t queryTiles,
    ArrayRef<int64_t> widths, Type elementType, const TilePairStep &block) {
  return foldTilePairs(builder, loc, flash, batch, heads, keyTiles, queryTiles,
                       /*overKeyTiles=*/true, widths, elementType, block);
}

SmallVector<Value> lcc::lowering::sumOverKeyTiles(
    OpBuilder &builder, Location loc, const FlashAttention &flash,
    int64_t batch, int64_t heads, int64_t keyTiles, int64_t queryTiles,
    ArrayRef<int64_t> widths, Type elementType, const TilePairStep &block) {
  return foldTilePairs(builder, loc, flash, batch, heads, keyTiles, queryTiles,
                       /*overKeyTiles=*/false, widths, elementType, block);
}

FailureOr<std::pair<Value, Value>>
FlashAttentionBackward::probabilitiesAndScoreGradients(
    TensorBuilder &t, const BackwardBlock &block, const TilePosition &tile,
    int64_t keySeq) const {
  int64_t queryTile = forward.queryTile, keyTile = forward.keyTile;
  // Scores, probabilities and their gradients are f32 on every operand
  // type.
  Type elt = t.builder().getF32Type();
  BlockProducts products = BlockProducts::of(t, block.query);
  Value dots = products.transposedB(block.query, block.key,
                                    t.filled({queryTile, keyTile}, elt, 0.0));
  Value scores = forward.maskedScores(t, dots, tile, keySeq, /*mask=*/true);
  Value probabilities = recomputedProbabilities(t, scores, block.rowStatistic);
  Value dP = products.transposedB(block.outGrad, block.value,
                                  t.filled({queryTile, keyTile}, elt, 0.0));
  bool failedDerivative = false;
  Value scoreGrad = t.map(
      {queryTile, keyTile}, elt, {probabilities, dP, block.delta, dots},
      {t.identityMap(2), t.identityMap(2), t.dropLastMap(2), t.identityMap(2)},
      [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
        auto constant = [&](double v) { return floatConstant(b, loc, elt, v); };
        Value ds = mul(b, loc, a[0], arith::SubFOp::create(b, loc, a[1], a[2]));
        ScorePosition at{
            tile.batch, tile.head,
            arith::AddIOp::create(b, loc, tile.queryStart,
                                  linalg::IndexOp::create(b, loc, 0)),
            arith::AddIOp::create(b, loc, tile.keyStart,
                                  linalg::IndexOp::create(b, loc, 1))};
        if (scoreDerivative) {
          FailureOr<Value> derivative = scoreDerivative(
              b, loc, mul(b, loc, a[3], constant(forward.scale)), at);
          if (failed(derivative)) {
            failedDerivative = true;
            return ds;
          }
          if (*derivative)
            ds = mul(b, loc, ds, *derivative);
        }
        ds = mul(b, loc, ds, constant(forward.scale));
        // A hidden key (p = 0) gets nothing, whatever s' is there.
        Value hidden = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                             a[0], constant(0.0));
        return arith::SelectOp::create(b, loc, hidden, constant(0.0), ds);
      });
  if (failedDerivative)
    return failure();
  return std::make_pair(probabilities, scoreGrad);
}

FailureOr<std::array<Value, 3>>
FlashAttentionBackward::build(OpBuilder &builder, Location loc) const {
  TensorBuilder tb(builder, loc);
  Type half = BlockProducts::of(tb, forward.query).half;
  // The gradients are summed in f32, on half operands too.
  Type elt = builder.getF32Type();
  PaddedBackwardOperands padded = PaddedBackwardOperands::build(
      tb, forward, out, outGrad, logSumExp, logSumExpGrad);
  bool failedBlock = false;
  auto gradientsAt = [&](TensorBuilder &t, const BackwardBlock &blk,
                         const TilePosition &tile) {
    auto grads = probabilitiesAndScoreGradients(t, blk, tile, padded.keySeq);
    if (failed(grads))
      failedBlock = true;
    return grads;
  };

  // Kernel 1, per key tile: dk and dv summed over the query tiles.
  SmallVector<Value> keyAndValueGrads = sumOverQueryTiles(
      builder, loc, forward, padded.batch, padded.heads, padded.keyTiles,
      padded.queryTiles, {padded.headDim, padded.valueDim}, elt,
      [&](OpBuilder &ub, Location ul, const TilePosition &tile,
          ValueRange state) -> SmallVector<Value> {
        TensorBuilder t(ub, ul);
        BlockProducts products{t, half};
        BackwardBlock blk = padded.blockAt(ub, ul, tile);
        auto grads = gradientsAt(t, blk, tile);
        if (failed(grads))
          return SmallVector<Value>(state);
        return {products.transposedA(grads->second, blk.query, state[0]),
                products.transposedA(grads->first, blk.outGrad, state[1])};
      });

  // Kernel 2, per query tile: dq summed over the key tiles it visits.
  Value queryGrad =
      sumOverKeyTiles(builder, loc, forward, padded.batch, padded.heads,
                      padded.keyTiles, padded.queryTiles, {padded.headDim}, elt,
                      [&](OpBuilder &ub, Location ul, const TilePosition &tile,
                          ValueRange state) -> SmallVector<Value> {
                        TensorBuilder t(ub, ul);
                        BlockProducts products{t, half};
                        BackwardBlock blk = padded.blockAt(ub, ul, tile);
                        auto grads = gradientsAt(t, blk, tile);
                        if (failed(grads))
                          return SmallVector<Value>(state);
                        return {
                            products.plain(grads->second, blk.key, state[0])};
                      })
          .front();
  if (failedBlock)
    return failure();
  // Each gradient in its operand's type: rounded once, at the end.
  auto finished = [&](Value grad, bool ofKeys) {
    return withElementType(tb, padded.unpadded(builder, loc, grad, ofKeys),
                           tensorType(forward.query).getElementType());
  };
  return std::array<Value, 3>{finished(queryGrad, /*ofKeys=*/false),
                              finished(keyAndValueGrads[0], /*ofKeys=*/true),
                              finished(keyAndValueGrads[1], /*ofKeys=*/true)};
}
