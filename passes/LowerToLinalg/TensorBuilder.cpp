//===- TensorBuilder.cpp - building linalg on tensors ---------------------===//

#include "passes/LowerToLinalg/TensorBuilder.h"
#include "passes/LowerToLinalg/ScalarOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace lcc;

Value TensorBuilder::index(int64_t value) {
  return lowering::indexConstant(b, loc, value);
}

Value TensorBuilder::scalar(Type type, double value) {
  return lowering::floatConstant(b, loc, type, value);
}

Value TensorBuilder::empty(ArrayRef<int64_t> shape, Type elementType) {
  return tensor::EmptyOp::create(b, loc, shape, elementType);
}

Value TensorBuilder::filled(ArrayRef<int64_t> shape, Type elementType,
                            double value) {
  Value init = empty(shape, elementType);
  return linalg::FillOp::create(b, loc, ValueRange{scalar(elementType, value)},
                                ValueRange{init})
      .getResult(0);
}

Value TensorBuilder::generic(Value init, ValueRange inputs,
                             ArrayRef<AffineMap> maps,
                             ArrayRef<utils::IteratorType> iterators,
                             ScalarBody body) {
  auto op = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps,
      iterators, [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        Value result = body(nested, nestedLoc, args);
        linalg::YieldOp::create(nested, nestedLoc, result);
      });
  return op.getResult(0);
}

Value TensorBuilder::map(ArrayRef<int64_t> shape, Type elementType,
                         ValueRange inputs, ArrayRef<AffineMap> inputMaps,
                         ScalarBody body) {
  unsigned rank = shape.size();
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(identityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  // The output scalar is not an input of an elementwise map: drop it.
  return generic(empty(shape, elementType), inputs, maps, iterators,
                 [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
                   return body(nested, nestedLoc, args.drop_back());
                 });
}

Value TensorBuilder::mapSameShape(ValueRange inputs, ScalarBody body) {
  auto type = cast<RankedTensorType>(inputs.front().getType());
  SmallVector<AffineMap> maps(inputs.size(), identityMap(type.getRank()));
  return map(type.getShape(), type.getElementType(), inputs, maps, body);
}

Value TensorBuilder::reduceLastDim(ValueRange inputs, double initValue,
                                   ScalarBody body) {
  return reduceLastDim(inputs, ValueRange{}, initValue, body);
}

Value TensorBuilder::reduceLastDim(ValueRange inputs, ValueRange rowInputs,
                                   double initValue, ScalarBody body) {
  auto type = cast<RankedTensorType>(inputs.front().getType());
  unsigned rank = type.getRank();
  Value init =
      filled(type.getShape().drop_back(), type.getElementType(), initValue);
  SmallVector<Value> operands(inputs);
  llvm::append_range(operands, rowInputs);
  SmallVector<AffineMap> maps(inputs.size(), identityMap(rank));
  maps.append(rowInputs.size(), dropLastMap(rank));
  maps.push_back(dropLastMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.back() = utils::IteratorType::reduction;
  return generic(init, operands, maps, iterators, body);
}

/// Contraction sums may be reassociated: that is what lets LLVM vectorise
/// a reduction loop (f32 rounding changes, well inside the 1e-5 budget).
arith::FastMathFlagsAttr contractionFlags(OpBuilder &b) {
  return arith::FastMathFlagsAttr::get(b.getContext(),
                                       arith::FastMathFlags::reassoc |
                                           arith::FastMathFlags::contract);
}

Value lcc::multiplyAccumulate(OpBuilder &b, Location loc, Value x, Value y,
                              Value acc) {
  arith::FastMathFlagsAttr flags = contractionFlags(b);
  Value product = arith::MulFOp::create(b, loc, x, y, flags);
  return arith::AddFOp::create(b, loc, acc, product, flags);
}

static Value multiplyAdd(OpBuilder &b, Location loc, ValueRange args) {
  return multiplyAccumulate(b, loc, args[0], args[1], args[2]);
}

Value TensorBuilder::matmul(Value a, Value bMatrix, Value init) {
  // Loops (i..., k, n) with a(i..., k), b(k, n), init(i..., n): the output
  // column is innermost, so the inner loop walks rows of b and of the
  // output contiguously and carries no reduction.
  unsigned batchRank = cast<RankedTensorType>(a.getType()).getRank() - 1;
  unsigned rank = batchRank + 2, k = batchRank, n = batchRank + 1;
  SmallVector<unsigned> aDims, outDims;
  for (unsigned i = 0; i < batchRank; ++i) {
    aDims.push_back(i);
    outDims.push_back(i);
  }
  aDims.push_back(k);
  outDims.push_back(n);
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators[k] = utils::IteratorType::reduction;
  return generic(init, {a, bMatrix},
                 {map(rank, aDims), map(rank, {k, n}), map(rank, outDims)},
                 iterators, multiplyAdd);
}

Value TensorBuilder::matmulTransposedB(Value a, Value bMatrix, Value init) {
  // Loops (m, n, k) with a(m, k), b(n, k), init(m, n): the inner loop is a
  // contiguous dot product of two rows.
  SmallVector<utils::IteratorType> iterators = {utils::IteratorType::parallel,
                                                utils::IteratorType::parallel,
                                                utils::IteratorType::reduction};
  return generic(init, {a, bMatrix},
                 {map(3, {0, 2}), map(3, {1, 2}), map(3, {0, 1})}, iterators,
                 multiplyAdd);
}

Value TensorBuilder::matmulTransposedA(Value a, Value bMatrix, Value init) {
  // Loops (m, k, n) with a(k, m), b(k, n), init(m, n): as matmul, the
  // output column is innermost.
  SmallVector<utils::IteratorType> iterators = {utils::IteratorType::parallel,
                                                utils::IteratorType::reduction,
                                                utils::IteratorType::parallel};
  return generic(init, {a, bMatrix},
                 {map(3, {1, 0}), map(3, {1, 2}), map(3, {0, 2})}, iterators,
                 multiplyAdd);
}

Value TensorBuilder::pairedMatmul(Value a, Value bPairs, Value init) {
  Type accType = cast<RankedTensorType>(init.getType()).getElementType();
  SmallVector<utils::IteratorType> iterators = {
      utils::IteratorType::parallel, utils::IteratorType::parallel,
      utils::IteratorType::reduction, utils::IteratorType::reduction};
  return generic(init, {a, bPairs},
                 {map(4, {0, 2, 3}), map(4, {2, 1, 3}), map(4, {0, 1})},
                 iterators, [&](OpBuilder &nb, Location nloc, ValueRange args) {
                   Value x = arith::ExtFOp::create(nb, nloc, accType, args[0]);
                   Value y = arith::ExtFOp::create(nb, nloc, accType, args[1]);
                   return multiplyAccumulate(nb, nloc, x, y, args[2]);
                 });
}

AffineMap TensorBuilder::identityMap(unsigned rank) {
  return AffineMap::getMultiDimIdentityMap(rank, b.getContext());
}

AffineMap TensorBuilder::dropLastMap(unsigned rank) {
  SmallVector<unsigned> dims;
  for (unsigned i = 0; i + 1 < rank; ++i)
    dims.push_back(i);
  return map(rank, dims);
}

AffineMap TensorBuilder::lastDimMap(unsigned rank) {
  return map(rank, {rank - 1});
}

AffineMap TensorBuilder::map(unsigned rank, ArrayRef<unsigned> dims) {
  SmallVector<AffineExpr> exprs;
  for (unsigned d : dims)
    exprs.push_back(b.getAffineDimExpr(d));
  return AffineMap::get(rank, 0, exprs, b.getContext());
}
