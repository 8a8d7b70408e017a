//===- ApproximateMath.cpp - exp and erf as polynomials the CPU vectorizes ===//
//
// On the CPU every math.exp and math.erf becomes a polynomial: softmax
// calls exp per score, the exact GELU erf per hidden unit, and a call of
// libm per element keeps the loop scalar (GELU's 576 erff calls were a
// sixth of a Reformer train step). The exps of the softmax (marked
// kShiftedExpAttrName: x - m with m the row's maximum or logsumexp, so at
// most 0 up to rounding) take a short form valid below 88; every other exp
// takes MLIR's full-range approximation, and erf MLIR's rational one (the
// GPU kernels' erf too: lcc-expand-math).
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace lcc {
#define GEN_PASS_DEF_APPROXIMATEMATH
#include "compiler/Passes.h.inc"
} // namespace lcc

using namespace mlir;

namespace {

/// exp(r) on |r| <= ln2 / 2, r^0 first: a degree-6 least-squares fit
/// (relative weight) whose two lowest terms are exactly 1; with the
/// reduction below, within 1.2 ulp of exp over [-87, 0].
constexpr double kExpPolynomial[] = {1.0,          1.0,          0.499999881,
                                     0.166665182,  0.0416695327, 0.00836892333,
                                     0.00137513818};

/// exp(x) for x below 88: n = round(x / ln2) by adding 1.5 * 2^23 (the
/// integer lands in the low mantissa bits), r = x - n ln2 in two parts
/// (Cody and Waite), the polynomial of r, and n added to its exponent bits.
/// Below -87, where 2^n would leave the normal range, the result is 0
/// (exp(-87) is 1.6e-38); NaN stays NaN. 14 vector instructions where the
/// full-range approximation takes 21: the softmax's exp was a sixth of
/// dense attention's time.
Value expBelow88(OpBuilder &b, Location loc, Value x) {
  Type type = x.getType();
  Type bits = b.getI32Type();
  if (auto vector = dyn_cast<VectorType>(type))
    bits = vector.cloneWith(std::nullopt, bits);
  auto constant = [&](Type t, Attribute value) -> Value {
    if (auto vector = dyn_cast<VectorType>(t))
      value = SplatElementsAttr::get(vector, value);
    return arith::ConstantOp::create(b, loc, t, cast<TypedAttr>(value));
  };
  auto f32 = [&](double v) {
    return constant(type, b.getF32FloatAttr(static_cast<float>(v)));
  };
  const double rounding = 0x1.8p23, ln2High = 0x1.62e4p-1;
  Value t = math::FmaOp::create(b, loc, x, f32(1.0 / M_LN2), f32(rounding));
  Value n = arith::SubFOp::create(b, loc, t, f32(rounding));
  Value r = math::FmaOp::create(b, loc, n, f32(-ln2High), x);
  r = math::FmaOp::create(b, loc, n, f32(-(M_LN2 - ln2High)), r);
  Value p = f32(std::end(kExpPolynomial)[-1]);
  for (int i = std::size(kExpPolynomial) - 2; i >= 0; --i)
    p = math::FmaOp::create(b, loc, p, r, f32(kExpPolynomial[i]));
  Value exponent =
      arith::ShLIOp::create(b, loc, arith::BitcastOp::create(b, loc, bits, t),
                            constant(bits, b.getI32IntegerAttr(23)));
  Value scaled = arith::BitcastOp::create(
      b, loc, type,
      arith::AddIOp::create(b, loc, arith::BitcastOp::create(b, loc, bits, p),
                            exponent));
  // "Not below -87": true for NaN, which stays NaN.
  Value normal =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UGE, x, f32(-87.0));
  return arith::SelectOp::create(b, loc, normal, scaled, f32(0.0));
}

struct ApproximateMathPass
    : lcc::impl::ApproximateMathBase<ApproximateMathPass> {
  void runOnOperation() override {
    getOperation().walk([](math::ExpOp exp) {
      if (!exp->hasAttr(lcc::kShiftedExpAttrName) ||
          !getElementTypeOrSelf(exp.getType()).isF32())
        return;
      OpBuilder b(exp);
      exp.replaceAllUsesWith(expBelow88(b, exp.getLoc(), exp.getOperand()));
      exp.erase();
    });
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
      return name == math::ExpOp::getOperationName() ||
             name == math::ErfOp::getOperationName();
    });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns)))) {
      getOperation().emitError("cannot expand exp and erf");
      signalPassFailure();
    }
  }
};

} // namespace
