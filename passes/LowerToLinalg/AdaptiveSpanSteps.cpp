//===- AdaptiveSpanSteps.cpp - adaptive span's soft mask per tile ---------===//

#include "passes/LowerToLinalg/AdaptiveSpanSteps.h"
#include "passes/LowerToLinalg/ScalarOps.h"
#include "passes/LowerToLinalg/TensorOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::lowering;

namespace {

/// An index as an f32 (distances are below 2^24, the verifier's bound on
/// spans, wherever they decide anything).
Value indexToF32(OpBuilder &b, Location loc, Value index) {
  Value wide = arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
  return arith::SIToFPOp::create(b, loc, b.getF32Type(), wide);
}

} // namespace

Value AdaptiveSpanMask::reach(OpBuilder &b, Location loc, Value head) const {
  Type f32 = b.getF32Type();
  Value fraction = tensor::ExtractOp::create(b, loc, z, ValueRange{head});
  Value span =
      mul(b, loc, fraction, floatConstant(b, loc, f32, double(maxSpan)));
  return add(b, loc, span, floatConstant(b, loc, f32, double(ramp)));
}

Value AdaptiveSpanMask::tileWithinReach(OpBuilder &b, Location loc,
                                        const TilePosition &tile,
                                        int64_t keyTile) const {
  // The nearest pair: the first query and the last key of the tiles.
  Value nearest = arith::SubIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, tile.queryStart,
                            indexConstant(b, loc, memory - keyTile + 1)),
      tile.keyStart);
  Value left = arith::SubFOp::create(b, loc, reach(b, loc, tile.head),
                                     indexToF32(b, loc, nearest));
  return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, left,
                               floatConstant(b, loc, b.getF32Type(), 0.0));
}

Value AdaptiveSpanMask::reachLeft(OpBuilder &b, Location loc,
                                  const TilePosition &tile, Value reach,
                                  bool keysByQueries) const {
  unsigned queryDim = keysByQueries ? 1 : 0, keyDim = 1 - queryDim;
  Value query = arith::AddIOp::create(
      b, loc, tile.queryStart, linalg::IndexOp::create(b, loc, queryDim));
  Value key = arith::AddIOp::create(b, loc, tile.keyStart,
                                    linalg::IndexOp::create(b, loc, keyDim));
  Value distance = arith::SubIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, query, indexConstant(b, loc, memory)), key);
  return arith::SubFOp::create(b, loc, reach, indexToF32(b, loc, distance));
}

Value AdaptiveSpanMask::hideBeyondReach(TensorBuilder &t, Value dots,
                                        const TilePosition &tile,
                                        bool keysByQueries) const {
  Value headReach = reach(t.builder(), t.location(), tile.head);
  return t.mapSameShape(
      {dots}, [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
        Type f32 = b.getF32Type();
        Value left = reachLeft(b, loc, tile, headReach, keysByQueries);
        Value within =
            arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, left,
                                  floatConstant(b, loc, f32, 0.0));
        return arith::SelectOp::create(
            b, loc, within, a[0],
            floatConstant(b, loc, f32, kNegativeInfinity));
      });
}

Value AdaptiveSpanMask::weights(TensorBuilder &t, ArrayRef<int64_t> shape,
                                const TilePosition &tile,
                                bool keysByQueries) const {
  Value headReach = reach(t.builder(), t.location(), tile.head);
  Type f32 = t.builder().getF32Type();
  return t.map(shape, f32, {}, {},
               [&](OpBuilder &b, Location loc, ValueRange) -> Value {
                 Value left = reachLeft(b, loc, tile, headReach, keysByQueries);
                 Value m = arith::DivFOp::create(
                     b, loc, left, floatConstant(b, loc, f32, double(ramp)));
                 Value floored = arith::MaximumFOp::create(
                     b, loc, m, floatConstant(b, loc, f32, 0.0));
                 return arith::MinimumFOp::create(
                     b, loc, floored, floatConstant(b, loc, f32, 1.0));
               });
}

Value AdaptiveSpanMask::onRamp(TensorBuilder &t, ArrayRef<int64_t> shape,
                               const TilePosition &tile,
                               bool keysByQueries) const {
  Value headReach = reach(t.builder(), t.location(), tile.head);
  Type f32 = t.builder().getF32Type();
  return t.map(
      shape, f32, {}, {}, [&](OpBuilder &b, Location loc, ValueRange) -> Value {
        Value left = reachLeft(b, loc, tile, headReach, keysByQueries);
        Value above =
            arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, left,
                                  floatConstant(b, loc, f32, 0.0));
        Value below =
            arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLE, left,
                                  floatConstant(b, loc, f32, double(ramp)));
        return arith::SelectOp::create(
            b, loc, arith::AndIOp::create(b, loc, above, below),
            floatConstant(b, loc, f32, 1.0), floatConstant(b, loc, f32, 0.0));
      });
}

std::pair<FlashAttention, AdaptiveSpanMask>
lcc::lowering::planAdaptiveSpanAttention(const AdaptiveSpanOperands &op,
                                         AttentionTiling tiling,
                                         Value queryPosition) {
  int64_t querySeq = tensorType(op.query).getDimSize(2);
  int64_t keySeq = tensorType(op.key).getDimSize(2);
  assert(!(queryPosition && op.queryOffset) && "one places the queries");
  if (op.queryOffset)
    queryPosition = op.queryOffset;
  AdaptiveSpanMask mask{op.z, op.maxSpan, op.ramp,
                        queryPosition ? 0 : keySeq - querySeq};
  FlashAttention flash;
  flash.query = op.query;
  flash.key = op.key;
  flash.value = op.value;
  flash.scale = attentionScale(op.scale, op.query);
  flash.causal = op.causal;
  flash.causalOffset = mask.memory;
  flash.queryPosition = queryPosition;
  Type elt = tensorType(op.query).getElementType();
  flash.queryTile = flashTile(tiling.queryTile, querySeq, elt);
  flash.keyTile = flashTile(tiling.keyTile, keySeq, elt);
  int64_t keyTile = flash.keyTile;
  flash.tileVisible = [mask, keyTile](OpBuilder &b, Location loc,
                                      const TilePosition &tile) {
    return mask.tileWithinReach(b, loc, tile, keyTile);
  };
  flash.addToScores = [mask](TensorBuilder &t, Value dots,
                             const TilePosition &tile) {
    return mask.hideBeyondReach(t, dots, tile, /*keysByQueries=*/true);
  };
  int64_t queryTile = flash.queryTile;
  flash.weighProbabilities =
      [mask, keyTile, queryTile](TensorBuilder &t, const TilePosition &tile) {
        return mask.weights(t, {keyTile, queryTile}, tile,
                            /*keysByQueries=*/true);
      };
  flash.weightFloor = kAdaptiveSpanFloor;
  // A negative span can hide every key from a query.
  flash.emptyRowsGetZeros = true;
  return {flash, mask};
}
