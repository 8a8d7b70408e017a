//===- Activations.cpp - feed-forward activations and derivatives ---------===//

#include "passes/LowerToLinalg/Activations.h"
#include "passes/LowerToLinalg/ScalarOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;

Value lowering::applyActivation(OpBuilder &b, Location loc, Activation kind,
                                Value x) {
  Type type = x.getType();
  auto constant = [&](double v) { return floatConstant(b, loc, type, v); };
  switch (kind) {
  case Activation::Relu:
    return arith::MaximumFOp::create(b, loc, x, constant(0.0));
  case Activation::Gelu: {
    // Exact GELU: 0.5 x (1 + erf(x / sqrt(2))).
    Value erf =
        math::ErfOp::create(b, loc, mul(b, loc, x, constant(M_SQRT1_2)));
    return mul(b, loc, mul(b, loc, constant(0.5), x),
               add(b, loc, constant(1.0), erf));
  }
  }
  llvm_unreachable("unknown activation");
}

Value lowering::activationDerivative(OpBuilder &b, Location loc,
                                     Activation kind, Value x) {
  Type type = x.getType();
  auto constant = [&](double v) { return floatConstant(b, loc, type, v); };
  switch (kind) {
  case Activation::Relu: {
    Value positive = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x,
                                           constant(0.0));
    return arith::SelectOp::create(b, loc, positive, constant(1.0),
                                   constant(0.0));
  }
  case Activation::Gelu: {
    // Φ(x) = 0.5 (1 + erf(x / sqrt(2))), φ(x) = exp(-x² / 2) / sqrt(2π).
    Value erf =
        math::ErfOp::create(b, loc, mul(b, loc, x, constant(M_SQRT1_2)));
    Value cdf = mul(b, loc, constant(0.5), add(b, loc, constant(1.0), erf));
    Value density =
        mul(b, loc, constant(0.5 * M_2_SQRTPI * M_SQRT1_2),
            math::ExpOp::create(
                b, loc, mul(b, loc, constant(-0.5), mul(b, loc, x, x))));
    return add(b, loc, cdf, mul(b, loc, x, density));
  }
  }
  llvm_unreachable("unknown activation");
}
