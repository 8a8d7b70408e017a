//===- AttentionCaches.cpp - an attention's decode caches -----------------===//

#include "passes/DecodeStep.h"
#include "passes/LowerToLinalg/ScalarOps.h"
#include "passes/LowerToLinalg/TensorOps.h"

#include "dialects/Attn/IR/AttnOps.h"
#include "runtime/schema/ModuleFormat.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::lowering;

std::string AttentionCaches::name(StringRef role) const {
  return lcm::kDecodeCachePrefix + std::to_string(index) + "." + role.str();
}

Value AttentionCaches::read(OpBuilder &b, Location loc, StringRef role,
                            int64_t batch, int64_t heads, int64_t width,
                            Type element, int64_t cacheRows) const {
  return attn::ParamOp::create(
      b, loc,
      RankedTensorType::get({batch, heads, cacheRows ? cacheRows : rows, width},
                            element),
      name(role), /*state=*/true, FloatAttr());
}

void AttentionCaches::write(OpBuilder &b, Location loc, StringRef role,
                            Value contents) const {
  attn::AssignOp::create(b, loc, name(role), contents);
}

Value AttentionCaches::fill(OpBuilder &b, Location loc, StringRef role,
                            Value update) const {
  Value start = arith::ConstantOp::create(
      b, loc, b.getZeroAttr(RankedTensorType::get({}, b.getI32Type())));
  return writeRows(b, loc, role, update, start);
}

/// Per (batch, head), the rows inserted at `start` clamped so that they
/// fit, the cache updated where it is.
Value AttentionCaches::writeRows(OpBuilder &b, Location loc, StringRef role,
                                 Value update, Value start) const {
  auto rowType = cast<RankedTensorType>(update.getType());
  int64_t batch = rowType.getDimSize(0), heads = rowType.getDimSize(1),
          count = rowType.getDimSize(2), width = rowType.getDimSize(3);
  Value cache =
      read(b, loc, role, batch, heads, width, rowType.getElementType());
  auto forall = scf::ForallOp::create(
      b, loc,
      ArrayRef<OpFoldResult>{b.getIndexAttr(batch), b.getIndexAttr(heads)},
      ValueRange{cache}, std::nullopt);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(forall.getBody());
    Value bi = forall.getInductionVars()[0], hi = forall.getInductionVars()[1];
    Value at = castToIndex(b, loc, tensor::ExtractOp::create(b, loc, start));
    at = arith::MinSIOp::create(
        b, loc, arith::MaxSIOp::create(b, loc, at, indexConstant(b, loc, 0)),
        indexConstant(b, loc, rows - count));
    SmallVector<OpFoldResult> one(4, b.getIndexAttr(1));
    Value row = tensor::ExtractSliceOp::create(
        b, loc,
        RankedTensorType::get({1, 1, count, width}, rowType.getElementType()),
        update,
        ArrayRef<OpFoldResult>{bi, hi, b.getIndexAttr(0), b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1),
                               b.getIndexAttr(count), b.getIndexAttr(width)},
        one);
    b.setInsertionPointToStart(forall.getTerminator().getBody());
    insertIntoShared(b, loc, row, forall.getRegionIterArgs()[0],
                     {bi, hi, at, b.getIndexAttr(0)},
                     {b.getIndexAttr(1), b.getIndexAttr(1),
                      b.getIndexAttr(count), b.getIndexAttr(width)});
  }
  write(b, loc, role, forall.getResult(0));
  return forall.getResult(0);
}
