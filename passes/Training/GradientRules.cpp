//===- GradientRules.cpp - the reverse sweep and its rules ----------------===//
//
// Reverse-mode differentiation at the attn level: the ops of the flattened
// loss function (FlattenBlocks.cpp) are visited last to first, and each
// op's vector-Jacobian rule (attn::DifferentiableOpInterface, an attn op's
// own or an external model's) turns the gradient of its results into
// gradients of its operands. Gradients of a value used twice are summed.
//
// A reversible block kept by the flattening is differentiated as RevNet
// does: its inputs are recomputed from its outputs (x2 = y2 - G(y1),
// x1 = y1 - F(x2)), where the outputs are the next block's recomputed
// inputs, and its regions are cloned on those values and swept in turn,
// so the backward reads nothing the forward computed inside the block.
//
//===----------------------------------------------------------------------===//

#include "passes/Training/TrainStep.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/MapVector.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;
using namespace lcc::training;

namespace {

bool isFloatTensor(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && isa<FloatType>(type.getElementType());
}

class ReverseSweep {
public:
  ReverseSweep(func::FuncOp func) : b(func.getBody().front().getTerminator()) {}

  void seed(Value loss) {
    auto type = cast<RankedTensorType>(loss.getType());
    gradients[loss] = arith::ConstantOp::create(
        b, loss.getLoc(), type,
        DenseElementsAttr::get(type,
                               FloatAttr::get(type.getElementType(), 1.0)));
  }

  /// Applies the rule of `op` when some result of it has a gradient.
  LogicalResult visit(Operation *op);

  Value gradientOf(Value v) const { return gradients.lookup(v); }

private:
  void accumulate(Value of, Value gradient) {
    if (!isFloatTensor(of) || !gradient)
      return;
    auto [it, inserted] = gradients.try_emplace(of, gradient);
    if (!inserted)
      it->second =
          arith::AddFOp::create(b, gradient.getLoc(), it->second, gradient);
  }

  /// gradients[a] + gradients[b], either absent, b's only when it differs.
  Value sumOfGradients(Value a, Value b);

  LogicalResult visitReversible(ReversibleOp op);
  /// One half of a reversible block, `output = input + region(argument)`,
  /// run backwards: `region`'s body cloned on `argument` (marked
  /// recomputed), its clone swept with `outputGrad` at its result (when
  /// there is one); returns the recomputed `input = output -
  /// region(argument)`.
  FailureOr<Value> recomputeHalf(Region &region, Value argument, Value output,
                                 Value outputGrad);

  OpBuilder b;
  DenseMap<Value, Value> gradients;
  /// A reversible block's input (a forward value) -> its value recomputed
  /// in the backward, which the previous block's rule starts from.
  DenseMap<Value, Value> recomputed;
};

Value ReverseSweep::sumOfGradients(Value a, Value other) {
  Value ga = gradients.lookup(a);
  Value gb = a == other ? Value() : gradients.lookup(other);
  if (!ga || !gb)
    return ga ? ga : gb;
  return arith::AddFOp::create(b, ga.getLoc(), ga, gb);
}

FailureOr<Value> ReverseSweep::recomputeHalf(Region &region, Value argument,
                                             Value output, Value outputGrad) {
  IRMapping mapping;
  mapping.map(region.getArgument(0), argument);
  SmallVector<Operation *> clones;
  for (Operation &op : region.front().without_terminator()) {
    Operation *copy = b.clone(op, mapping);
    copy->setAttr(kRecomputedAttrName, b.getUnitAttr());
    clones.push_back(copy);
  }
  Value result =
      mapping.lookupOrDefault(region.front().getTerminator()->getOperand(0));
  Value input =
      arith::SubFOp::create(b, region.getParentOp()->getLoc(), output, result);
  if (outputGrad) {
    accumulate(result, outputGrad);
    for (Operation *clone : llvm::reverse(clones))
      if (failed(markOpsBuiltBy(b, kBackwardOfRecomputedAttrName,
                                [&] { return visit(clone); })))
        return failure();
  }
  return input;
}

LogicalResult ReverseSweep::visitReversible(ReversibleOp op) {
  Value y1 = recomputed.lookup(op.getY1()), y2 = recomputed.lookup(op.getY2());
  if (!y1)
    y1 = op.getY1();
  if (!y2)
    y2 = op.getY2();
  // y2 = x2 + G(y1): x2 is recomputed, and G's gradient reaches y1.
  Value dy2 = gradients.lookup(op.getY2());
  FailureOr<Value> x2 = recomputeHalf(op.getG(), y1, y2, dy2);
  if (failed(x2))
    return failure();
  // y1 = x1 + F(x2): x1 is recomputed, and F's gradient reaches x2.
  Value dy1 = sumOfGradients(op.getY1(), y1);
  FailureOr<Value> x1 = recomputeHalf(op.getF(), *x2, y1, dy1);
  if (failed(x1))
    return failure();
  Value dx2 = gradients.lookup(*x2);
  if (dy2)
    dx2 =
        dx2 ? arith::AddFOp::create(b, op.getLoc(), dx2, dy2).getResult() : dy2;
  recomputed[op.getX1()] = *x1;
  recomputed[op.getX2()] = *x2;
  accumulate(op.getX1(), dy1);
  accumulate(op.getX2(), dx2);
  return success();
}

LogicalResult ReverseSweep::visit(Operation *op) {
  SmallVector<Value> resultGradients;
  for (Value result : op->getResults())
    resultGradients.push_back(gradients.lookup(result));
  if (llvm::all_of(resultGradients, [](Value g) { return !g; }))
    return success();
  if (auto reversible = dyn_cast<ReversibleOp>(op))
    return visitReversible(reversible);
  // An op of no float operand (a parameter, a constant, an encoding)
  // passes no gradient on: the sweep ends there.
  if (llvm::none_of(op->getOperands(), isFloatTensor))
    return success();
  auto differentiable = dyn_cast<DifferentiableOpInterface>(op);
  if (!differentiable)
    return op->emitOpError(
        "has no gradient rule: attn-generate-train-step differentiates the "
        "ops that implement attn::DifferentiableOpInterface (the attn ops, "
        "arith addf, subf, mulf, divf, negf, maximumf, minimumf, extf, "
        "truncf, math tanh, exp, tensor concat, extract_slice, expand_shape, "
        "collapse_shape, linalg transpose and broadcast, and a plugin's ops "
        "that attach it)");
  SmallVector<Value> operandGradients(op->getNumOperands());
  if (failed(differentiable.buildVectorJacobianProduct(b, resultGradients,
                                                       operandGradients)))
    return failure();
  for (auto [operand, gradient] :
       llvm::zip_equal(op->getOperands(), operandGradients))
    accumulate(operand, gradient);
  return success();
}

} // namespace

FailureOr<ParameterGradients> lcc::training::differentiate(func::FuncOp func,
                                                           Value loss) {
  Block &body = func.getBody().front();
  SmallVector<Operation *> forward;
  for (Operation &op : body.without_terminator())
    forward.push_back(&op);
  ReverseSweep sweep(func);
  sweep.seed(loss);
  for (Operation *op : llvm::reverse(forward))
    if (failed(sweep.visit(op)))
      return failure();

  // Tied weights (two attn.param of one name) sum their gradients. The
  // parameters of a recomputed block are read by its clones, so the names
  // come in the forward's order, nested ones included, and the reads are
  // the top-level ones.
  llvm::MapVector<StringRef, SmallVector<ParamOp>> byName;
  for (Operation *op : forward)
    op->walk<WalkOrder::PreOrder>(
        [&](ParamOp param) { (void)byName[param.getName()]; });
  for (ParamOp param : body.getOps<ParamOp>())
    byName[param.getName()].push_back(param);
  ParameterGradients result;
  OpBuilder b(body.getTerminator());
  for (auto &[name, params] : byName) {
    Value total;
    for (ParamOp param : params) {
      Value g = sweep.gradientOf(param.getResult());
      if (!g)
        continue;
      total = total ? arith::AddFOp::create(b, param.getLoc(), total, g) : g;
    }
    if (!total)
      continue; // The loss does not depend on it.
    result.names.push_back(name.str());
    result.values.push_back(params.front().getResult());
    result.gradients.push_back(total);
  }
  return result;
}
