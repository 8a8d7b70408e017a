//===- ScalarOps.cpp - scalar arithmetic inside lowered bodies ------------===//

#include "passes/LowerToLinalg/ScalarOps.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace lcc::lowering {

Value add(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::AddFOp::create(b, loc, x, y);
}

Value mul(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::MulFOp::create(b, loc, x, y);
}

Value widenedToF32(OpBuilder &b, Location loc, Value x) {
  Type f32 = b.getF32Type();
  return x.getType() == f32 ? x : arith::ExtFOp::create(b, loc, f32, x);
}

Value roundedTo(OpBuilder &b, Location loc, Value x, Type type) {
  return x.getType() == type ? x : arith::TruncFOp::create(b, loc, type, x);
}

Value floatConstant(OpBuilder &b, Location loc, Type type, double value) {
  return arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, value));
}

Value indexConstant(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value i32Constant(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
}

Value castToIndex(OpBuilder &b, Location loc, Value v) {
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
}

Value castToI32(OpBuilder &b, Location loc, Value v) {
  return arith::IndexCastOp::create(b, loc, b.getI32Type(), v);
}

Value clampedIndex(OpBuilder &b, Location loc, Value id, int64_t size) {
  Value index = arith::IndexCastOp::create(b, loc, b.getIndexType(), id);
  index = arith::MaxSIOp::create(b, loc, index,
                                 arith::ConstantIndexOp::create(b, loc, 0));
  return arith::MinSIOp::create(
      b, loc, index, arith::ConstantIndexOp::create(b, loc, size - 1));
}

std::pair<Value, Value> indexWithin(OpBuilder &b, Location loc, Value index,
                                    int64_t size) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value last = arith::ConstantIndexOp::create(b, loc, size - 1);
  Value inside = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, index, zero),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, index, last));
  Value clamped = arith::MinSIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, index, zero), last);
  return {inside, clamped};
}

std::pair<Value, Value> markedPosition(OpBuilder &b, Location loc,
                                       Value position) {
  Value zero = i32Constant(b, loc, 0);
  Value valid =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, position, zero);
  return {valid,
          castToIndex(b, loc, arith::MaxSIOp::create(b, loc, position, zero))};
}

Value expShifted(OpBuilder &b, Location loc, Value x, Value m) {
  Type type = m.getType();
  Value negInf = floatConstant(b, loc, type, kNegativeInfinity);
  Value zero = floatConstant(b, loc, type, 0.0);
  Value hidden =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x, negInf);
  auto e = math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, x, m));
  e->setAttr(kShiftedExpAttrName, b.getUnitAttr());
  return arith::SelectOp::create(b, loc, hidden, zero, e);
}

Value larger(OpBuilder &b, Location loc, Value x, Value y) {
  Value greater =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, y);
  return arith::SelectOp::create(b, loc, greater, x, y);
}

Value inverseNorm(OpBuilder &b, Location loc, Value sumSquares) {
  Value floor = floatConstant(b, loc, sumSquares.getType(), 1e-24);
  return math::RsqrtOp::create(
      b, loc, arith::MaximumFOp::create(b, loc, sumSquares, floor));
}

} // namespace lcc::lowering
