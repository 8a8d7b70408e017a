//===- UpstreamGradients.cpp - rules of the upstream ops a model uses -----===//
//
// The elementwise arithmetic, shape and layout ops a model writes between
// attn ops get DifferentiableOpInterface as external models, so the reverse
// sweep asks every op the same interface.
//
//===----------------------------------------------------------------------===//

#include "dialects/Attn/IR/AttnInterfaces.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace lcc::attn;

namespace {

/// What a rule gets: the op, a builder before the sweep's end, its
/// result's gradient and where its operands' go.
template <typename OpTy>
using Rule = void (*)(OpTy op, OpBuilder &b, Value dy,
                      SmallVectorImpl<Value> &operandGradients);

template <typename OpTy, Rule<OpTy> rule>
struct GradientModel
    : DifferentiableOpInterface::ExternalModel<GradientModel<OpTy, rule>,
                                               OpTy> {
  LogicalResult
  buildVectorJacobianProduct(Operation *op, OpBuilder &b,
                             ArrayRef<Value> resultGradients,
                             SmallVectorImpl<Value> &operandGradients) const {
    rule(cast<OpTy>(op), b, resultGradients[0], operandGradients);
    return success();
  }
};

Value mulf(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::MulFOp::create(b, loc, x, y);
}

Value negf(OpBuilder &b, Location loc, Value x) {
  return arith::NegFOp::create(b, loc, x);
}

void addRule(arith::AddFOp, OpBuilder &, Value dy,
             SmallVectorImpl<Value> &grads) {
  grads[0] = grads[1] = dy;
}

void subRule(arith::SubFOp op, OpBuilder &b, Value dy,
             SmallVectorImpl<Value> &grads) {
  grads[0] = dy;
  grads[1] = negf(b, op.getLoc(), dy);
}

void mulRule(arith::MulFOp op, OpBuilder &b, Value dy,
             SmallVectorImpl<Value> &grads) {
  grads[0] = mulf(b, op.getLoc(), dy, op.getRhs());
  grads[1] = mulf(b, op.getLoc(), dy, op.getLhs());
}

void divRule(arith::DivFOp op, OpBuilder &b, Value dy,
             SmallVectorImpl<Value> &grads) {
  // d(a / b) = da / b - db a / b².
  Location loc = op.getLoc();
  Value da = arith::DivFOp::create(b, loc, dy, op.getRhs());
  grads[0] = da;
  grads[1] = negf(b, loc, mulf(b, loc, da, op.getResult()));
}

void negRule(arith::NegFOp op, OpBuilder &b, Value dy,
             SmallVectorImpl<Value> &grads) {
  grads[0] = negf(b, op.getLoc(), dy);
}

/// The gradient goes to the operand that was chosen (the first on ties).
void chosenOperandRule(Operation *op, arith::CmpFPredicate firstChosen,
                       OpBuilder &b, Value dy, SmallVectorImpl<Value> &grads) {
  Location loc = op->getLoc();
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  Value first = arith::CmpFOp::create(b, loc, firstChosen, lhs, rhs);
  Value zero = splatLike(b, loc, dy, 0.0);
  grads[0] = arith::SelectOp::create(b, loc, first, dy, zero);
  grads[1] = arith::SelectOp::create(b, loc, first, zero, dy);
}

void maxRule(arith::MaximumFOp op, OpBuilder &b, Value dy,
             SmallVectorImpl<Value> &grads) {
  chosenOperandRule(op, arith::CmpFPredicate::OGE, b, dy, grads);
}

void minRule(arith::MinimumFOp op, OpBuilder &b, Value dy,
             SmallVectorImpl<Value> &grads) {
  chosenOperandRule(op, arith::CmpFPredicate::OLE, b, dy, grads);
}

void tanhRule(math::TanhOp op, OpBuilder &b, Value dy,
              SmallVectorImpl<Value> &grads) {
  // d tanh(x) = (1 - y²) dx = dx - y² dx.
  Location loc = op.getLoc();
  Value y = op.getResult();
  grads[0] =
      arith::SubFOp::create(b, loc, dy, mulf(b, loc, mulf(b, loc, y, y), dy));
}

void expRule(math::ExpOp op, OpBuilder &b, Value dy,
             SmallVectorImpl<Value> &grads) {
  grads[0] = mulf(b, op.getLoc(), dy, op.getResult());
}

/// A change of precision passes the gradient back in the operand's type
/// (mixed precision written in the model: a half attention between an
/// arith.truncf and an arith.extf).
void extfRule(arith::ExtFOp op, OpBuilder &b, Value dy,
              SmallVectorImpl<Value> &grads) {
  grads[0] = arith::TruncFOp::create(b, op.getLoc(), op.getIn().getType(), dy);
}

void truncfRule(arith::TruncFOp op, OpBuilder &b, Value dy,
                SmallVectorImpl<Value> &grads) {
  grads[0] = arith::ExtFOp::create(b, op.getLoc(), op.getIn().getType(), dy);
}

/// Each operand of a concatenation gets its slice of the gradient.
void concatRule(tensor::ConcatOp op, OpBuilder &b, Value dy,
                SmallVectorImpl<Value> &grads) {
  auto type = cast<RankedTensorType>(dy.getType());
  int64_t dim = op.getDim(), offset = 0;
  for (auto [i, input] : llvm::enumerate(op.getInputs())) {
    auto inputType = cast<RankedTensorType>(input.getType());
    SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
    offsets[dim] = b.getIndexAttr(offset);
    SmallVector<OpFoldResult> sizes, strides(type.getRank(), b.getIndexAttr(1));
    for (int64_t size : inputType.getShape())
      sizes.push_back(b.getIndexAttr(size));
    grads[i] = tensor::ExtractSliceOp::create(b, op.getLoc(), inputType, dy,
                                              offsets, sizes, strides);
    offset += inputType.getDimSize(dim);
  }
}

/// The slice's gradient, in zeros of the source's shape.
void extractSliceRule(tensor::ExtractSliceOp op, OpBuilder &b, Value dy,
                      SmallVectorImpl<Value> &grads) {
  Value zeros = splatLike(b, op.getLoc(), op.getSource(), 0.0);
  grads[0] = tensor::InsertSliceOp::create(
      b, op.getLoc(), dy, zeros, op.getMixedOffsets(), op.getMixedSizes(),
      op.getMixedStrides());
}

void expandRule(tensor::ExpandShapeOp op, OpBuilder &b, Value dy,
                SmallVectorImpl<Value> &grads) {
  grads[0] = tensor::CollapseShapeOp::create(b, op.getLoc(), op.getSrcType(),
                                             dy, op.getReassociationIndices());
}

void collapseRule(tensor::CollapseShapeOp op, OpBuilder &b, Value dy,
                  SmallVectorImpl<Value> &grads) {
  grads[0] = tensor::ExpandShapeOp::create(b, op.getLoc(), op.getSrcType(), dy,
                                           op.getReassociationIndices());
}

/// Transposed back, by the inverse permutation.
void transposeRule(linalg::TransposeOp op, OpBuilder &b, Value dy,
                   SmallVectorImpl<Value> &grads) {
  ArrayRef<int64_t> permutation = op.getPermutation();
  SmallVector<int64_t> inverse(permutation.size());
  for (auto [i, p] : llvm::enumerate(permutation))
    inverse[p] = i;
  auto inputType = cast<RankedTensorType>(op.getInput().getType());
  Value init = tensor::EmptyOp::create(b, op.getLoc(), inputType.getShape(),
                                       inputType.getElementType());
  grads[0] = linalg::TransposeOp::create(b, op.getLoc(), dy, init, inverse)
                 .getResult()[0];
}

/// Summed over the dimensions the broadcast added.
void broadcastRule(linalg::BroadcastOp op, OpBuilder &b, Value dy,
                   SmallVectorImpl<Value> &grads) {
  Location loc = op.getLoc();
  grads[0] =
      linalg::ReduceOp::create(
          b, loc, ValueRange{dy},
          ValueRange{splatLike(b, loc, op.getInput(), 0.0)}, op.getDimensions(),
          [](OpBuilder &nb, Location l, ValueRange args) {
            linalg::YieldOp::create(
                nb, l,
                arith::AddFOp::create(nb, l, args[0], args[1]).getResult());
          })
          .getResult(0);
}

} // namespace

void lcc::attn::registerUpstreamGradientModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, arith::ArithDialect *) {
    arith::AddFOp::attachInterface<GradientModel<arith::AddFOp, addRule>>(
        *context);
    arith::SubFOp::attachInterface<GradientModel<arith::SubFOp, subRule>>(
        *context);
    arith::MulFOp::attachInterface<GradientModel<arith::MulFOp, mulRule>>(
        *context);
    arith::DivFOp::attachInterface<GradientModel<arith::DivFOp, divRule>>(
        *context);
    arith::NegFOp::attachInterface<GradientModel<arith::NegFOp, negRule>>(
        *context);
    arith::MaximumFOp::attachInterface<
        GradientModel<arith::MaximumFOp, maxRule>>(*context);
    arith::MinimumFOp::attachInterface<
        GradientModel<arith::MinimumFOp, minRule>>(*context);
    arith::ExtFOp::attachInterface<GradientModel<arith::ExtFOp, extfRule>>(
        *context);
    arith::TruncFOp::attachInterface<
        GradientModel<arith::TruncFOp, truncfRule>>(*context);
  });
  registry.addExtension(+[](MLIRContext *context, math::MathDialect *) {
    math::TanhOp::attachInterface<GradientModel<math::TanhOp, tanhRule>>(
        *context);
    math::ExpOp::attachInterface<GradientModel<math::ExpOp, expRule>>(*context);
  });
  registry.addExtension(+[](MLIRContext *context, tensor::TensorDialect *) {
    tensor::ConcatOp::attachInterface<
        GradientModel<tensor::ConcatOp, concatRule>>(*context);
    tensor::ExtractSliceOp::attachInterface<
        GradientModel<tensor::ExtractSliceOp, extractSliceRule>>(*context);
    tensor::ExpandShapeOp::attachInterface<
        GradientModel<tensor::ExpandShapeOp, expandRule>>(*context);
    tensor::CollapseShapeOp::attachInterface<
        GradientModel<tensor::CollapseShapeOp, collapseRule>>(*context);
  });
  registry.addExtension(+[](MLIRContext *context, linalg::LinalgDialect *) {
    linalg::TransposeOp::attachInterface<
        GradientModel<linalg::TransposeOp, transposeRule>>(*context);
    linalg::BroadcastOp::attachInterface<
        GradientModel<linalg::BroadcastOp, broadcastRule>>(*context);
  });
}
