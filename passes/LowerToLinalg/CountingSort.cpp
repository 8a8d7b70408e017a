//===- CountingSort.cpp - sorting tokens by a small key -------------------===//

#include "passes/LowerToLinalg/CountingSort.h"
#include "passes/LowerToLinalg/ScalarOps.h"
#include "passes/LowerToLinalg/TensorOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace lcc::lowering {

CountingSort countingSort(OpBuilder &b, Location loc, Value keys, int64_t n,
                          int64_t numKeys) {
  Type i32 = b.getI32Type();
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value c0 = index(0), c1 = index(1);
  Value one = arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(1));
  // Histogram, one slot longer so the exclusive scan ends with n.
  auto histogram = scf::ForOp::create(
      b, loc, c0, index(n), c1, ValueRange{zerosI32(b, loc, {numKeys + 1})},
      [&](OpBuilder &nb, Location l, Value i, ValueRange it) {
        Value k = castToIndex(nb, l, tensor::ExtractOp::create(nb, l, keys, i));
        Value count = tensor::ExtractOp::create(nb, l, it[0], k);
        Value inc = arith::AddIOp::create(nb, l, count, one);
        scf::YieldOp::create(
            nb, l, tensor::InsertOp::create(nb, l, inc, it[0], k).getResult());
      });
  Value zero = arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(0));
  auto scan = scf::ForOp::create(
      b, loc, c0, index(numKeys + 1), c1,
      ValueRange{zero, zerosI32(b, loc, {numKeys + 1})},
      [&](OpBuilder &nb, Location l, Value k, ValueRange it) {
        Value count =
            tensor::ExtractOp::create(nb, l, histogram.getResult(0), k);
        Value starts = tensor::InsertOp::create(nb, l, it[0], it[1], k);
        scf::YieldOp::create(
            nb, l,
            ValueRange{arith::AddIOp::create(nb, l, it[0], count), starts});
      });
  Value empty = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{n}, i32);
  auto place = scf::ForOp::create(
      b, loc, c0, index(n), c1, ValueRange{scan.getResult(1), empty, empty},
      [&](OpBuilder &nb, Location l, Value i, ValueRange it) {
        Value k = castToIndex(nb, l, tensor::ExtractOp::create(nb, l, keys, i));
        Value p = tensor::ExtractOp::create(nb, l, it[0], k);
        Value next = tensor::InsertOp::create(
            nb, l, arith::AddIOp::create(nb, l, p, one), it[0], k);
        Value position = arith::IndexCastOp::create(nb, l, nb.getI32Type(), i);
        Value sorted = tensor::InsertOp::create(nb, l, position, it[1],
                                                castToIndex(nb, l, p));
        Value inverse = tensor::InsertOp::create(nb, l, p, it[2], i);
        scf::YieldOp::create(nb, l, ValueRange{next, sorted, inverse});
      });
  return {place.getResult(1), place.getResult(2), scan.getResult(1)};
}

SortedRows sortRowsByKey(OpBuilder &b, Location loc, Value keys,
                         int64_t numKeys, bool withStarts) {
  RankedTensorType type = tensorType(keys);
  ArrayRef<int64_t> leading = type.getShape().drop_back();
  int64_t n = type.getShape().back();
  SmallVector<OpFoldResult> counts;
  for (int64_t d : leading)
    counts.push_back(b.getIndexAttr(d));
  SmallVector<int64_t> startsShape(leading);
  startsShape.push_back(numKeys + 1);
  SmallVector<Value> outputs = {
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType()),
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType())};
  if (withStarts)
    outputs.push_back(
        tensor::EmptyOp::create(b, loc, startsShape, type.getElementType()));
  auto sort = scf::ForallOp::create(b, loc, counts, outputs, std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(sort.getBody());
  SmallVector<OpFoldResult> offsets;
  for (Value iv : sort.getInductionVars())
    offsets.push_back(iv);
  offsets.push_back(b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes(leading.size(), b.getIndexAttr(1));
  sizes.push_back(b.getIndexAttr(n));
  Value row = sliceOf(b, loc, RankedTensorType::get({n}, type.getElementType()),
                      keys, offsets, sizes);
  CountingSort sorted = countingSort(b, loc, row, n, numKeys);
  b.setInsertionPointToStart(sort.getTerminator().getBody());
  insertIntoShared(b, loc, sorted.positions, sort.getRegionIterArgs()[0],
                   offsets, sizes);
  insertIntoShared(b, loc, sorted.inverse, sort.getRegionIterArgs()[1], offsets,
                   sizes);
  if (withStarts) {
    sizes.back() = b.getIndexAttr(numKeys + 1);
    insertIntoShared(b, loc, sorted.starts, sort.getRegionIterArgs()[2],
                     offsets, sizes);
  }
  return {sort.getResult(0), sort.getResult(1),
          withStarts ? sort.getResult(2) : Value()};
}

} // namespace lcc::lowering
