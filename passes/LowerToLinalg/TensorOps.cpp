//===- TensorOps.cpp - tensor steps the lowerings share -------------------===//

#include "passes/LowerToLinalg/TensorOps.h"
#include "passes/LowerToLinalg/ScalarOps.h"
#include "passes/Summation.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Utils/Utils.h"

#include <cmath>

using namespace mlir;

namespace lcc::lowering {

bool hasStaticShapes(Operation *op) {
  return llvm::all_of(op->getOperandTypes(), [](Type t) {
    return cast<RankedTensorType>(t).hasStaticShape();
  });
}

double attentionScale(std::optional<APFloat> scale, Value query) {
  return scale ? scale->convertToDouble()
               : 1.0 / std::sqrt(double(tensorType(query).getDimSize(3)));
}

Value affine(TensorBuilder &tb, Value input, Value weight, Value bias) {
  RankedTensorType inputType = tensorType(input);
  int64_t out = tensorType(weight).getDimSize(1);
  SmallVector<int64_t> shape(inputType.getShape());
  shape.back() = out;
  Type elt = inputType.getElementType();
  Value init;
  if (bias) {
    // Start the accumulation from the bias: one pass less over the output.
    init = tb.map(shape, elt, {bias}, {tb.lastDimMap(shape.size())},
                  [](OpBuilder &, Location, ValueRange a) { return a[0]; });
  } else {
    init = tb.filled(shape, elt, 0.0);
  }
  return tb.matmul(input, weight, init);
}

Value addTensors(TensorBuilder &tb, Value x, Value y) {
  return tb.mapSameShape({x, y}, [](OpBuilder &b, Location loc, ValueRange a) {
    return add(b, loc, a[0], a[1]);
  });
}

Value filledI32(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                int32_t value) {
  Value init = tensor::EmptyOp::create(b, loc, shape, b.getI32Type());
  return linalg::FillOp::create(b, loc, ValueRange{i32Constant(b, loc, value)},
                                ValueRange{init})
      .getResult(0);
}

Value zerosI32(OpBuilder &b, Location loc, ArrayRef<int64_t> shape) {
  return filledI32(b, loc, shape, 0);
}

Value rowMax(TensorBuilder &tb, Value x) {
  return tb.reduceLastDim(
      {x}, kNegativeInfinity,
      [](OpBuilder &b, Location loc, ValueRange a) -> Value {
        return arith::MaximumFOp::create(b, loc, a[0], a[1]);
      });
}

Value rowSum(TensorBuilder &tb, Value x) {
  return tb.reduceLastDim({x}, 0.0,
                          [](OpBuilder &b, Location loc, ValueRange a) {
                            return add(b, loc, a[1], a[0]);
                          });
}

/// Reduces the first dimension of the 2-D `x` with `body` into `init`.
static Value reduceColumns(TensorBuilder &tb, Value x, Value init,
                           ScalarBody body) {
  return tb.generic(
      init, {x}, {tb.identityMap(2), tb.lastDimMap(2)},
      {utils::IteratorType::reduction, utils::IteratorType::parallel}, body);
}

Value columnMax(TensorBuilder &tb, Value x) {
  RankedTensorType type = tensorType(x);
  Value init =
      tb.filled({type.getDimSize(1)}, type.getElementType(), kNegativeInfinity);
  return reduceColumns(tb, x, init,
                       [](OpBuilder &b, Location loc, ValueRange a) -> Value {
                         return larger(b, loc, a[0], a[1]);
                       });
}

std::pair<Value, Value> columnExponentials(TensorBuilder &tb, Value x,
                                           Value maxima, Value sums) {
  OpBuilder &b = tb.builder();
  // x is read and written through its output operand: each element once.
  auto op = linalg::GenericOp::create(
      b, tb.location(), TypeRange{x.getType(), sums.getType()},
      ValueRange{maxima}, ValueRange{x, sums},
      ArrayRef<AffineMap>{tb.lastDimMap(2), tb.identityMap(2),
                          tb.lastDimMap(2)},
      ArrayRef<utils::IteratorType>{utils::IteratorType::reduction,
                                    utils::IteratorType::parallel},
      [](OpBuilder &nb, Location loc, ValueRange a) {
        Value e = expShifted(nb, loc, a[1], a[0]);
        linalg::YieldOp::create(nb, loc, ValueRange{e, add(nb, loc, a[2], e)});
      });
  return {op.getResult(0), op.getResult(1)};
}

Value columnSum(TensorBuilder &tb, Value x, Value sums) {
  return reduceColumns(tb, x, sums,
                       [](OpBuilder &b, Location loc, ValueRange a) {
                         return add(b, loc, a[1], a[0]);
                       });
}

RowExponentials rowExponentials(TensorBuilder &tb, Value x) {
  RankedTensorType type = tensorType(x);
  unsigned rank = type.getRank();
  RowExponentials r;
  r.maxima = rowMax(tb, x);
  r.exps = tb.map(type.getShape(), type.getElementType(), {x, r.maxima},
                  {tb.identityMap(rank), tb.dropLastMap(rank)},
                  [](OpBuilder &b, Location loc, ValueRange a) {
                    return expShifted(b, loc, a[0], a[1]);
                  });
  r.sums = rowSum(tb, r.exps);
  return r;
}

Value rowSumOfSquares(TensorBuilder &tb, Value x) {
  // Summed in f32 on half rows too.
  RankedTensorType type = tensorType(x);
  unsigned rank = type.getRank();
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.back() = utils::IteratorType::reduction;
  return tb.generic(
      tb.filled(type.getShape().drop_back(), tb.builder().getF32Type(), 0.0),
      {x}, {tb.identityMap(rank), tb.dropLastMap(rank)}, iterators,
      [](OpBuilder &b, Location loc, ValueRange a) {
        Value v = widenedToF32(b, loc, a[0]);
        return add(b, loc, a[1], mul(b, loc, v, v));
      });
}

Value argmaxLastDim(OpBuilder &b, Location loc, TensorBuilder &tb, Value x) {
  auto type = tensorType(x);
  unsigned rank = type.getRank();
  SmallVector<int64_t> shape(type.getShape().drop_back());
  Type i32 = b.getI32Type();
  Value indexInit = tensor::EmptyOp::create(b, loc, shape, i32);
  Value zero = arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(0));
  indexInit =
      linalg::FillOp::create(b, loc, ValueRange{zero}, ValueRange{indexInit})
          .getResult(0);
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.back() = utils::IteratorType::reduction;
  auto op = linalg::GenericOp::create(
      b, loc,
      TypeRange{RankedTensorType::get(shape, type.getElementType()),
                RankedTensorType::get(shape, i32)},
      ValueRange{x},
      ValueRange{tb.filled(shape, type.getElementType(), kNegativeInfinity),
                 indexInit},
      ArrayRef<AffineMap>{tb.identityMap(rank), tb.dropLastMap(rank),
                          tb.dropLastMap(rank)},
      iterators, [&](OpBuilder &nb, Location l, ValueRange a) {
        Value j = arith::IndexCastOp::create(
            nb, l, nb.getI32Type(), linalg::IndexOp::create(nb, l, rank - 1));
        Value better =
            arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGT, a[0], a[1]);
        linalg::YieldOp::create(
            nb, l,
            ValueRange{arith::SelectOp::create(nb, l, better, a[0], a[1]),
                       arith::SelectOp::create(nb, l, better, j, a[2])});
      });
  return op.getResult(1);
}

std::pair<Value, Value> rowMeanAndInverseStd(TensorBuilder &tb, Value x,
                                             double epsilon) {
  Type elt = tensorType(x).getElementType();
  double features = static_cast<double>(tensorType(x).getShape().back());
  Value invFeatures = tb.scalar(elt, 1.0 / features);
  Value epsilonValue = tb.scalar(elt, epsilon);
  Value mean = tb.mapSameShape({rowSum(tb, x)},
                               [&](OpBuilder &b, Location loc, ValueRange a) {
                                 return mul(b, loc, a[0], invFeatures);
                               });
  Value squares = tb.reduceLastDim(
      {x}, {mean}, 0.0, [](OpBuilder &b, Location loc, ValueRange a) {
        Value centred = arith::SubFOp::create(b, loc, a[0], a[1]);
        return add(b, loc, a[2], mul(b, loc, centred, centred));
      });
  Value invStd = tb.mapSameShape({squares}, [&](OpBuilder &b, Location loc,
                                                ValueRange a) {
    Value variance = mul(b, loc, a[0], invFeatures);
    return math::RsqrtOp::create(b, loc, add(b, loc, variance, epsilonValue))
        .getResult();
  });
  return {mean, invStd};
}

Value totalSum(TensorBuilder &tb, Value x) {
  RankedTensorType type = tensorType(x);
  int64_t count = type.hasStaticShape() ? type.getNumElements() : 0;
  if (int64_t block = summationBlock(count); block > 1 && type.getRank() > 0) {
    // x as [count / block, block] rows, each summed (summationBlock).
    OpBuilder &b = tb.builder();
    SmallVector<ReassociationIndices> all(1);
    for (int64_t d = 0; d < type.getRank(); ++d)
      all.front().push_back(d);
    Value flat = tensor::CollapseShapeOp::create(b, tb.location(), x, all);
    Value blocks = tensor::ExpandShapeOp::create(
        b, tb.location(),
        RankedTensorType::get({count / block, block}, type.getElementType()),
        flat, ArrayRef<ReassociationIndices>{{0, 1}});
    x = rowSum(tb, blocks);
    type = tensorType(x);
  }
  unsigned rank = type.getRank();
  OpBuilder &b = tb.builder();
  return tb.generic(
      tb.filled({}, type.getElementType(), 0.0), {x},
      {tb.identityMap(rank), AffineMap::get(rank, 0, b.getContext())},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::reduction),
      [](OpBuilder &b, Location loc, ValueRange a) {
        return add(b, loc, a[1], a[0]);
      });
}

Value sumOverDim(TensorBuilder &tb, Value x, unsigned dim) {
  RankedTensorType type = tensorType(x);
  unsigned rank = type.getRank();
  SmallVector<int64_t> shape;
  SmallVector<unsigned> kept;
  SmallVector<utils::IteratorType> iterators;
  for (unsigned d = 0; d < rank; ++d) {
    iterators.push_back(d == dim ? utils::IteratorType::reduction
                                 : utils::IteratorType::parallel);
    if (d == dim)
      continue;
    shape.push_back(type.getDimSize(d));
    kept.push_back(d);
  }
  return tb.generic(tb.filled(shape, type.getElementType(), 0.0), {x},
                    {tb.identityMap(rank), tb.map(rank, kept)}, iterators,
                    [](OpBuilder &b, Location loc, ValueRange a) {
                      return add(b, loc, a[1], a[0]);
                    });
}

static SmallVector<ReassociationIndices> rowsReassociation(unsigned rank) {
  ReassociationIndices leading;
  for (unsigned d = 0; d + 1 < rank; ++d)
    leading.push_back(d);
  return {leading, {static_cast<int64_t>(rank - 1)}};
}

Value asRows(OpBuilder &b, Location loc, Value x) {
  RankedTensorType type = tensorType(x);
  unsigned rank = type.getRank();
  if (rank == 2)
    return x;
  if (rank == 1)
    return tensor::ExpandShapeOp::create(
        b, loc,
        RankedTensorType::get({1, type.getDimSize(0)}, type.getElementType()),
        x, ArrayRef<ReassociationIndices>{{0, 1}});
  return tensor::CollapseShapeOp::create(b, loc, x, rowsReassociation(rank));
}

Value fromRows(OpBuilder &b, Location loc, Value rows, RankedTensorType type) {
  unsigned rank = type.getRank();
  if (rank == 2)
    return rows;
  if (rank == 1)
    return tensor::CollapseShapeOp::create(
        b, loc, type, rows, ArrayRef<ReassociationIndices>{{0, 1}});
  return tensor::ExpandShapeOp::create(b, loc, type, rows,
                                       rowsReassociation(rank));
}

Value attentionRows(OpBuilder &b, Location loc, Value x) {
  return tensor::CollapseShapeOp::create(
      b, loc, x, ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}});
}

Value fromAttentionRows(OpBuilder &b, Location loc, Value rows,
                        RankedTensorType attentionType) {
  return tensor::ExpandShapeOp::create(
      b, loc, attentionType, rows,
      ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}});
}

Value withElementType(TensorBuilder &tb, Value x, Type type) {
  RankedTensorType shape = tensorType(x);
  if (shape.getElementType() == type)
    return x;
  // Half and f32 only: widened to f32, or f32 rounded to the half type.
  return tb.map(shape.getShape(), type, {x}, {tb.identityMap(shape.getRank())},
                [type](OpBuilder &b, Location l, ValueRange a) -> Value {
                  if (type.isF32())
                    return widenedToF32(b, l, a[0]);
                  return roundedTo(b, l, a[0], type);
                });
}

Value normalizeRows(TensorBuilder &tb, Value x) {
  Value sumSquares = rowSumOfSquares(tb, x);
  RankedTensorType type = tensorType(x);
  Type elt = type.getElementType();
  unsigned rank = type.getRank();
  return tb.map(type.getShape(), elt, {x, sumSquares},
                {tb.identityMap(rank), tb.dropLastMap(rank)},
                [elt](OpBuilder &b, Location loc, ValueRange a) -> Value {
                  Value unit = mul(b, loc, widenedToF32(b, loc, a[0]),
                                   inverseNorm(b, loc, a[1]));
                  return roundedTo(b, loc, unit, elt);
                });
}

Value normalizeRowsBackward(TensorBuilder &tb, Value x, Value normalizedGrad) {
  // In f32 on half operands.
  Type f32 = tb.builder().getF32Type();
  x = withElementType(tb, x, f32);
  normalizedGrad = withElementType(tb, normalizedGrad, f32);
  RankedTensorType type = tensorType(x);
  unsigned rank = type.getRank();
  Value normalized = normalizeRows(tb, x);
  Value sumSquares = rowSumOfSquares(tb, x);
  Value dot =
      tb.reduceLastDim({normalized, normalizedGrad}, 0.0,
                       [](OpBuilder &b, Location l, ValueRange a) {
                         return multiplyAccumulate(b, l, a[0], a[1], a[2]);
                       });
  return tb.map(type.getShape(), type.getElementType(),
                {normalized, normalizedGrad, sumSquares, dot},
                {tb.identityMap(rank), tb.identityMap(rank),
                 tb.dropLastMap(rank), tb.dropLastMap(rank)},
                [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                  Value inverse = inverseNorm(b, l, a[2]);
                  Value norm = math::SqrtOp::create(b, l, a[2]);
                  Value floored = arith::CmpFOp::create(
                      b, l, arith::CmpFPredicate::OLE, norm,
                      floatConstant(b, l, type.getElementType(), 1e-12));
                  Value projected =
                      arith::SubFOp::create(b, l, a[1], mul(b, l, a[0], a[3]));
                  Value through =
                      arith::SelectOp::create(b, l, floored, a[1], projected);
                  return mul(b, l, through, inverse);
                });
}

Value padSeq(TensorBuilder &tb, Value x, int64_t paddedSeq, double value) {
  RankedTensorType type = tensorType(x);
  if (type.getDimSize(2) == paddedSeq)
    return x;
  SmallVector<int64_t> shape(type.getShape());
  shape[2] = paddedSeq;
  Value padding = tb.scalar(type.getElementType(), value);
  return tensor::createPadHighOp(
      RankedTensorType::get(shape, type.getElementType()), x, padding,
      /*nofold=*/false, tb.location(), tb.builder());
}

Value rowTileOf(OpBuilder &b, Location loc, Value x, Value batch, Value head,
                Value offset, int64_t tile) {
  return sliceOf(b, loc,
                 RankedTensorType::get({tile}, tensorType(x).getElementType()),
                 x, {batch, head, offset},
                 {b.getIndexAttr(1), b.getIndexAttr(1), b.getIndexAttr(tile)});
}

Value tileOf(OpBuilder &b, Location loc, Value x, Value batch, Value head,
             Value offset, int64_t tile) {
  RankedTensorType type = tensorType(x);
  int64_t dim = type.getDimSize(3);
  SmallVector<OpFoldResult> offsets = {batch, head, offset, b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(1),
                                     b.getIndexAttr(tile), b.getIndexAttr(dim)};
  SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get({tile, dim}, type.getElementType()), x,
      offsets, sizes, strides);
}

Value sliceOf(OpBuilder &b, Location loc, RankedTensorType type, Value source,
              ArrayRef<OpFoldResult> offsets, ArrayRef<OpFoldResult> sizes) {
  SmallVector<OpFoldResult> strides(offsets.size(), b.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(b, loc, type, source, offsets, sizes,
                                        strides);
}

void insertIntoShared(OpBuilder &b, Location loc, Value tile, Value shared,
                      ArrayRef<OpFoldResult> offsets,
                      ArrayRef<OpFoldResult> sizes) {
  SmallVector<OpFoldResult> strides(offsets.size(), b.getIndexAttr(1));
  tensor::ParallelInsertSliceOp::create(b, loc, tile, shared, offsets, sizes,
                                        strides);
}

SmallVector<Value> inlineRegion(PatternRewriter &rewriter, Operation *op,
                                Region &region, ValueRange arguments) {
  Block &block = region.front();
  auto yield = cast<attn::YieldOp>(block.getTerminator());
  SmallVector<Value> results(yield.getValues());
  rewriter.inlineBlockBefore(&block, op, arguments);
  rewriter.eraseOp(yield);
  return results;
}

Value inlineScalarRegion(OpBuilder &b, Region &region, ValueRange arguments) {
  IRMapping mapping;
  mapping.map(region.getArguments(), arguments);
  for (Operation &op : region.front().without_terminator())
    b.clone(op, mapping);
  auto yield = cast<attn::YieldOp>(region.front().getTerminator());
  // Folding may have hoisted a region's constants out of it.
  return mapping.lookupOrDefault(yield.getValues()[0]);
}

} // namespace lcc::lowering
