//===- RegionArithmetic.cpp - defined integer arithmetic in regions -------===//

#include "passes/LowerToLinalg/RegionArithmetic.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace lcc::lowering {
namespace {

unsigned widthOf(Type type) {
  return type.isIndex() ? 64 : type.getIntOrFloatBitWidth();
}

Value intConstant(OpBuilder &b, Location loc, Type type, const APInt &value) {
  return arith::ConstantOp::create(b, loc, type, b.getIntegerAttr(type, value));
}

Value intConstant(OpBuilder &b, Location loc, Type type, uint64_t value) {
  return intConstant(b, loc, type, APInt(widthOf(type), value));
}

Value equals(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, y);
}

Value select(OpBuilder &b, Location loc, Value condition, Value x, Value y) {
  return arith::SelectOp::create(b, loc, condition, x, y);
}

/// A copy of `op` (at the builder) whose operand `index` is `value`.
Value cloneWith(OpBuilder &b, Operation *op, unsigned index, Value value) {
  Operation *copy = b.clone(*op);
  copy->setOperand(index, value);
  return copy->getResult(0);
}

bool isSignedDivision(Operation *op) {
  return isa<arith::DivSIOp, arith::CeilDivSIOp, arith::FloorDivSIOp,
             arith::RemSIOp>(op);
}

/// x / y (any kind) with x / 0 = 0, x % 0 = x and, signed, x / -1 = -x
/// (wrapping: MIN / -1 = MIN) and x % -1 = 0. The division itself only
/// ever sees a divisor other than 0 and -1.
Value defineDivision(OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  Value x = op->getOperand(0), y = op->getOperand(1);
  Type type = x.getType();
  bool isSigned = isSignedDivision(op);
  bool remainder = isa<arith::RemSIOp, arith::RemUIOp>(op);
  Value zero = intConstant(b, loc, type, 0);
  Value byZero = equals(b, loc, y, zero);
  Value byMinusOne, unsafe = byZero;
  if (isSigned) {
    byMinusOne = equals(
        b, loc, y, intConstant(b, loc, type, APInt::getAllOnes(widthOf(type))));
    unsafe = arith::OrIOp::create(b, loc, byZero, byMinusOne);
  }
  // x / 1 = x and x % 1 = 0: the right result for -1 up to the quotient's
  // sign, and harmless for 0, which the last select replaces.
  Value safe = select(b, loc, unsafe, intConstant(b, loc, type, 1), y);
  Value result = cloneWith(b, op, 1, safe);
  if (isSigned && !remainder)
    result = select(b, loc, byMinusOne, arith::SubIOp::create(b, loc, zero, x),
                    result);
  return select(b, loc, byZero, remainder ? x : zero, result);
}

/// A shift by the width or more: 0 for shli and shrui, the sign for shrsi
/// (a shift by width - 1).
Value defineShift(OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  Value amount = op->getOperand(1);
  Type type = amount.getType();
  unsigned width = widthOf(type);
  Value tooFar =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, amount,
                            intConstant(b, loc, type, width));
  if (isa<arith::ShRSIOp>(op))
    return cloneWith(
        b, op, 1,
        select(b, loc, tooFar, intConstant(b, loc, type, width - 1), amount));
  Value zero = intConstant(b, loc, type, 0);
  Value shifted = cloneWith(b, op, 1, select(b, loc, tooFar, zero, amount));
  return select(b, loc, tooFar, zero, shifted);
}

/// fptosi / fptoui saturating at the result type's range, NaN giving 0.
Value defineFloatToInt(OpBuilder &b, Operation *op) {
  Location loc = op->getLoc();
  Value x = op->getOperand(0);
  Type floatType = x.getType(), intType = op->getResult(0).getType();
  unsigned width = widthOf(intType);
  bool isSigned = isa<arith::FPToSIOp>(op);
  auto floatConstant = [&](double value) -> Value {
    return arith::ConstantOp::create(b, loc, floatType,
                                     b.getFloatAttr(floatType, value));
  };
  auto compare = [&](arith::CmpFPredicate predicate, Value y) -> Value {
    return arith::CmpFOp::create(b, loc, predicate, x, y);
  };
  // [low, high): the floats whose truncation fits (powers of two are exact
  // in every float type, or infinite, which compares just as well).
  double high = std::ldexp(1.0, int(isSigned ? width - 1 : width));
  Value inRange = arith::AndIOp::create(
      b, loc,
      isSigned ? compare(arith::CmpFPredicate::OGE, floatConstant(-high))
               : compare(arith::CmpFPredicate::OGT, floatConstant(-1.0)),
      compare(arith::CmpFPredicate::OLT, floatConstant(high)));
  Value converted =
      cloneWith(b, op, 0, select(b, loc, inRange, x, floatConstant(0.0)));
  APInt largest =
      isSigned ? APInt::getSignedMaxValue(width) : APInt::getMaxValue(width);
  APInt smallest =
      isSigned ? APInt::getSignedMinValue(width) : APInt::getZero(width);
  Value zero = floatConstant(0.0);
  Value saturated =
      select(b, loc, compare(arith::CmpFPredicate::OGT, zero),
             intConstant(b, loc, intType, largest),
             select(b, loc, compare(arith::CmpFPredicate::OLT, zero),
                    intConstant(b, loc, intType, smallest),
                    intConstant(b, loc, intType, 0)));
  return select(b, loc, inRange, converted, saturated);
}

/// Whether constant operand `index` of `op` makes it defined as it is.
bool hasSafeConstant(Operation *op, unsigned index) {
  APInt value;
  if (!matchPattern(op->getOperand(index), m_ConstantInt(&value)))
    return false;
  if (isa<arith::ShLIOp, arith::ShRUIOp, arith::ShRSIOp>(op))
    return value.ult(widthOf(op->getOperand(0).getType()));
  return !value.isZero() && !(isSignedDivision(op) && value.isAllOnes());
}

/// Drops the flags that make an in-range result poison: arithmetic in a
/// region wraps, and an inexact `exact` division is just a division.
void dropPoisonFlags(Operation *op) {
  if (auto flags = dyn_cast<arith::ArithIntegerOverflowFlagsInterface>(op))
    op->setAttr(flags.getIntegerOverflowAttrName(),
                arith::IntegerOverflowFlagsAttr::get(
                    op->getContext(), arith::IntegerOverflowFlags::none));
  llvm::TypeSwitch<Operation *>(op)
      .Case<arith::DivSIOp, arith::DivUIOp, arith::ShRSIOp, arith::ShRUIOp>(
          [](auto exact) { exact.removeIsExactAttr(); });
}

} // namespace

void defineRegionArithmetic(Region &region) {
  SmallVector<Operation *> ops;
  region.walk([&](Operation *op) { ops.push_back(op); });
  if (ops.empty())
    return;
  OpBuilder b(ops.front()->getContext());
  for (Operation *op : ops) {
    dropPoisonFlags(op);
    Value defined;
    b.setInsertionPoint(op);
    if (isa<arith::DivSIOp, arith::DivUIOp, arith::CeilDivSIOp,
            arith::CeilDivUIOp, arith::FloorDivSIOp, arith::RemSIOp,
            arith::RemUIOp>(op)) {
      if (!hasSafeConstant(op, 1))
        defined = defineDivision(b, op);
    } else if (isa<arith::ShLIOp, arith::ShRUIOp, arith::ShRSIOp>(op)) {
      if (!hasSafeConstant(op, 1))
        defined = defineShift(b, op);
    } else if (isa<arith::FPToSIOp, arith::FPToUIOp>(op)) {
      defined = defineFloatToInt(b, op);
    }
    if (!defined)
      continue;
    op->getResult(0).replaceAllUsesWith(defined);
    op->erase();
  }
}

} // namespace lcc::lowering
