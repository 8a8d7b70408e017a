//===- RelativeSteps.cpp - what relative attention and its backward share -===//

#include "passes/LowerToLinalg/RelativeSteps.h"
#include "passes/LowerToLinalg/FlashAttentionBackward.h"
#include "passes/LowerToLinalg/ScalarOps.h"
#include "passes/LowerToLinalg/TensorOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::lowering;

DistanceBands::DistanceBands(int64_t memory, int64_t queryTile, int64_t keyTile,
                             int64_t paddedQuerySeq, int64_t paddedKeySeq)
    : memory(memory), queryTile(queryTile), keyTile(keyTile),
      paddedKeySeq(paddedKeySeq),
      // The last key tile's last key against the first query...
      firstDistance(memory - paddedKeySeq + 1),
      // ...to the first key against the last (padded) query, and the
      // last band's rounding.
      rows(paddedQuerySeq + paddedKeySeq - 1 +
           (bandRows() - (queryTile + keyTile - 1))) {}

Value DistanceBands::distanceShift(OpBuilder &b, Location loc) const {
  if (!queryOffset)
    return indexConstant(b, loc, 0);
  return castToIndex(b, loc, tensor::ExtractOp::create(b, loc, queryOffset));
}

Value DistanceBands::bandStart(OpBuilder &b, Location loc,
                               const TilePosition &tile) const {
  // Row of distance M + qs - ks - (Tk - 1); placed by an offset, the rows
  // start D on, so the query's index among the queries finds it.
  Value offset = arith::SubIOp::create(b, loc, tile.queryStart, tile.keyStart);
  if (queryOffset)
    offset = arith::SubIOp::create(b, loc, offset, distanceShift(b, loc));
  return arith::AddIOp::create(
      b, loc, offset,
      indexConstant(b, loc, memory - (keyTile - 1) - firstDistance));
}

namespace {

/// The encodings of every distance a tile pair may meet, [heads, rows,
/// head_dim]: row r is pos[h, clamp(r + firstDistance + D, 0,
/// lastDistance)] (D the query offset, or 0). Negative distances are keys
/// after the query (masked); those past the last key only padded queries
/// see.
Value distanceTable(TensorBuilder &t, Value pos, const DistanceBands &bands,
                    int64_t lastDistance) {
  RankedTensorType type = tensorType(pos);
  int64_t heads = type.getDimSize(0), headDim = type.getDimSize(2);
  Value shift = bands.distanceShift(t.builder(), t.location());
  return t.map({heads, bands.rows, headDim}, type.getElementType(), {}, {},
               [&](OpBuilder &b, Location loc, ValueRange) -> Value {
                 Value h = linalg::IndexOp::create(b, loc, 0);
                 Value r = linalg::IndexOp::create(b, loc, 1);
                 Value d = linalg::IndexOp::create(b, loc, 2);
                 Value distance = arith::AddIOp::create(
                     b, loc, arith::AddIOp::create(b, loc, r, shift),
                     indexConstant(b, loc, bands.firstDistance));
                 distance = arith::MaxSIOp::create(b, loc, distance,
                                                   indexConstant(b, loc, 0));
                 distance = arith::MinSIOp::create(
                     b, loc, distance, indexConstant(b, loc, lastDistance));
                 return tensor::ExtractOp::create(b, loc, pos,
                                                  ValueRange{h, distance, d});
               });
}

/// q + bias[h] over [batch, heads, seq, head_dim], times `scale` when given:
/// on half operands summed (and scaled) in f32 and rounded once.
Value withHeadBias(TensorBuilder &t, Value q, Value bias,
                   std::optional<double> scale) {
  RankedTensorType type = tensorType(q);
  Type elt = type.getElementType();
  return t.map(
      type.getShape(), elt, {q, bias}, {t.identityMap(4), t.map(4, {1, 3})},
      [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
        Value sum =
            add(b, loc, widenedToF32(b, loc, a[0]), widenedToF32(b, loc, a[1]));
        if (scale)
          sum = mul(b, loc, sum, floatConstant(b, loc, sum.getType(), *scale));
        return roundedTo(b, loc, sum, elt);
      });
}

/// `same_length`: key j is visible to query i only at a distance M + i - j
/// below `window`, i.e. when j + window > M + i.
void limitDistance(FlashAttention &flash, int64_t memory, int64_t window,
                   int64_t keySeq) {
  int64_t lag = memory - window; // j > i + lag
  flash.visible = [lag](OpBuilder &b, Location loc, const ScorePosition &at) {
    Value earliest =
        arith::AddIOp::create(b, loc, at.query, indexConstant(b, loc, lag));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, at.key,
                                 earliest)
        .getResult();
  };
  int64_t queryTile = flash.queryTile, keyTile = flash.keyTile;
  // A key tile holds a visible key iff its last key is past the first
  // query's window.
  flash.tileVisible = [=](OpBuilder &b, Location loc, const TilePosition &at) {
    Value lastKey = arith::AddIOp::create(b, loc, at.keyStart,
                                          indexConstant(b, loc, keyTile - 1));
    Value earliest = arith::AddIOp::create(b, loc, at.queryStart,
                                           indexConstant(b, loc, lag));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, lastKey,
                                 earliest)
        .getResult();
  };
  // Every key of the tile is visible to every query of the query tile: in
  // the last query's window, not after the first query, not padding.
  flash.tileFull = [=](OpBuilder &b, Location loc, const TilePosition &at) {
    auto index = [&](int64_t v) { return indexConstant(b, loc, v); };
    Value lastKey =
        arith::AddIOp::create(b, loc, at.keyStart, index(keyTile - 1));
    Value inWindow = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::sgt, at.keyStart,
        arith::AddIOp::create(b, loc, at.queryStart,
                              index(queryTile - 1 + lag)));
    Value past = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::sle, lastKey,
        arith::AddIOp::create(b, loc, at.queryStart, index(memory)));
    Value unpadded = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                           lastKey, index(keySeq));
    return arith::AndIOp::create(b, loc, inWindow,
                                 arith::AndIOp::create(b, loc, past, unpadded))
        .getResult();
  };
  // A padded query's window may hold padded keys only.
  flash.emptyRowsGetZeros = true;
}

} // namespace

Value RelativeAttentionPlan::band(OpBuilder &b, Location loc,
                                  const TilePosition &tile) const {
  RankedTensorType tableType = tensorType(table);
  int64_t headDim = tableType.getDimSize(2), rows = bands.bandRows();
  return sliceOf(
      b, loc,
      RankedTensorType::get({rows, headDim}, tableType.getElementType()), table,
      {tile.head, bands.bandStart(b, loc, tile), b.getIndexAttr(0)},
      {b.getIndexAttr(1), b.getIndexAttr(rows), b.getIndexAttr(headDim)});
}

RelativeAttentionPlan lcc::lowering::planRelativeAttention(
    TensorBuilder &tb, const RelativeAttentionOperands &op,
    AttentionTiling tiling, Value queryPosition) {
  int64_t querySeq = tensorType(op.query).getDimSize(2);
  int64_t keySeq = tensorType(op.key).getDimSize(2);
  assert(!(queryPosition && op.queryOffset) && "one places the queries");
  bool placedByOffset = static_cast<bool>(op.queryOffset);
  if (placedByOffset)
    queryPosition = op.queryOffset;
  // A query at a run-time key position is counted from there, as if every
  // key position were a query's.
  int64_t memory = queryPosition ? 0 : keySeq - querySeq;

  FlashAttention flash;
  flash.query = withHeadBias(tb, op.query, op.u, std::nullopt);
  flash.key = op.key;
  flash.value = op.value;
  flash.scale = attentionScale(op.scale, op.query);
  flash.causal = true;
  flash.causalOffset = memory;
  flash.queryPosition = queryPosition;
  Type elt = tensorType(op.query).getElementType();
  flash.queryTile = flashTile(tiling.queryTile, querySeq, elt);
  flash.keyTile = flashTile(tiling.keyTile, keySeq, elt);
  if (op.sameLength)
    limitDistance(flash, memory, *op.sameLength, keySeq);
  // Placed anywhere, a query may see no key at all.
  if (placedByOffset)
    flash.emptyRowsGetZeros = true;

  int64_t paddedQuerySeq =
      llvm::divideCeil(querySeq, flash.queryTile) * flash.queryTile;
  int64_t paddedKeySeq =
      llvm::divideCeil(keySeq, flash.keyTile) * flash.keyTile;
  int64_t encodings = tensorType(op.pos).getDimSize(1);
  // The encodings there are (a decode step's caches may hold more rows;
  // queries placed by an offset may meet every distance pos holds).
  int64_t lastDistance =
      (placedByOffset ? encodings : std::min(keySeq, encodings)) - 1;
  if (op.clampLen)
    lastDistance = std::min(lastDistance, *op.clampLen);
  // A decode step's query may sit anywhere among its keys: its table
  // covers every key position. Placed by an offset, the rows move with it.
  DistanceBands bands(memory, flash.queryTile, flash.keyTile,
                      queryPosition && !placedByOffset ? paddedKeySeq
                                                       : paddedQuerySeq,
                      paddedKeySeq);
  if (placedByOffset)
    bands.queryOffset = op.queryOffset;
  Value table = distanceTable(tb, op.pos, bands, lastDistance);
  Value positionQueries =
      withHeadBias(tb, padSeq(tb, op.query, paddedQuerySeq), op.w, flash.scale);
  return RelativeAttentionPlan{flash,           bands,        querySeq,  keySeq,
                               paddedQuerySeq,  lastDistance, encodings, table,
                               positionQueries, queryPosition};
}

namespace {

/// [batch, heads, seq, dim] as [batch, heads, dim, seq].
Value transposedRows(TensorBuilder &t, Value x) {
  RankedTensorType type = tensorType(x);
  ArrayRef<int64_t> s = type.getShape();
  return t.map({s[0], s[1], s[3], s[2]}, type.getElementType(), {x},
               {t.map(4, {0, 1, 3, 2})},
               [](OpBuilder &, Location, ValueRange a) { return a[0]; });
}

/// [batch, heads, seq, dim] (half) as the B operand of paired products
/// summing over dim: [batch, heads, dim / 2, seq, 2].
Value pairedTransposedRows(TensorBuilder &t, Value x) {
  RankedTensorType type = tensorType(x);
  ArrayRef<int64_t> s = type.getShape();
  MLIRContext *context = x.getContext();
  AffineExpr d[5];
  bindDims(context, d[0], d[1], d[2], d[3], d[4]);
  AffineMap read =
      AffineMap::get(5, 0, {d[0], d[1], d[3], d[2] * 2 + d[4]}, context);
  return t.map({s[0], s[1], s[3] / 2, s[2], 2}, type.getElementType(), {x},
               {read},
               [](OpBuilder &, Location, ValueRange a) { return a[0]; });
}

} // namespace

BlockScoreTerm RelativeAttentionPlan::positionTerm(TensorBuilder &tb) const {
  // Laid out once up front as each block's product takes it (transposed,
  // or in pairs of head_dim on half operands), so that the loop over key
  // tiles only slices it.
  Type half = BlockProducts::of(tb, positionQueries).half;
  Value positionQueriesT = half ? pairedTransposedRows(tb, positionQueries)
                                : transposedRows(tb, positionQueries);
  RelativeAttentionPlan plan = *this;
  return [plan, positionQueriesT, half](TensorBuilder &t, Value dots,
                                        const TilePosition &tile) -> Value {
    OpBuilder &b = t.builder();
    Location loc = t.location();
    Value band = plan.band(b, loc, tile);
    RankedTensorType bandType = tensorType(band);
    Type elt = bandType.getElementType();
    int64_t headDim = bandType.getDimSize(1);
    int64_t queryTile = plan.bands.queryTile;
    // At a run-time position the tile's queries sit there among the keys
    // but are the first of their own.
    Value queryStart = plan.flash.queryIndex(b, loc, tile.queryStart);
    auto one = b.getIndexAttr(1), zero = b.getIndexAttr(0);
    // f32 sums on every operand type (the scores are f32).
    Value init =
        t.filled({bandType.getDimSize(0), queryTile}, b.getF32Type(), 0.0);
    Value bandProducts;
    if (half) {
      Value queries = sliceOf(
          b, loc, RankedTensorType::get({headDim / 2, queryTile, 2}, elt),
          positionQueriesT, {tile.batch, tile.head, zero, queryStart, zero},
          {one, one, b.getIndexAttr(headDim / 2), b.getIndexAttr(queryTile),
           b.getIndexAttr(2)});
      bandProducts = t.pairedMatmul(
          pairedOperand(t, band, half, /*kAlongColumns=*/true, /*asB=*/false),
          queries, init);
    } else {
      Value queries = sliceOf(
          b, loc, RankedTensorType::get({headDim, queryTile}, elt),
          positionQueriesT, {tile.batch, tile.head, zero, queryStart},
          {one, one, b.getIndexAttr(headDim), b.getIndexAttr(queryTile)});
      bandProducts = t.matmul(band, queries, init);
    }
    return addPositionTerm(t, dots, bandProducts,
                           ScoreBlockLayout::scaledKeysByQueries);
  };
}

Value lcc::lowering::addPositionTerm(TensorBuilder &t, Value dots,
                                     Value bandProducts,
                                     ScoreBlockLayout layout) {
  OpBuilder &b = t.builder();
  RankedTensorType type = tensorType(dots);
  bool keysByQueries = layout == ScoreBlockLayout::scaledKeysByQueries;
  int64_t keyTile = type.getDimSize(keysByQueries ? 0 : 1);
  AffineExpr k = b.getAffineDimExpr(keysByQueries ? 0 : 1),
             q = b.getAffineDimExpr(keysByQueries ? 1 : 0);
  AffineMap diagonal =
      AffineMap::get(2, 0, {q - k + (keyTile - 1), q}, b.getContext());
  return t.map(type.getShape(), type.getElementType(), {dots, bandProducts},
               {t.identityMap(2), diagonal},
               [](OpBuilder &b, Location loc, ValueRange a) {
                 return add(b, loc, a[0], a[1]);
               });
}
