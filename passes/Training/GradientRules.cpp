//===- GradientRules.cpp - the reverse sweep and its rules ----------------===//
//
// Reverse-mode differentiation at the attn level: the ops of the flattened
// loss function (FlattenBlocks.cpp) are visited last to first, and each
// op's vector-Jacobian rule turns the gradient of its results into
// gradients of its operands. A rule emits the op's backward op
// (attn.attention_backward, attn.linear_backward, ...), whose lowering is
// the efficient one for that op, or, for the upstream elementwise ops a
// model uses, the elementwise ops of its derivative. Gradients of a value
// used twice are summed.
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
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
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

  LogicalResult visitElementwise(Operation *op, Value dy);
  /// Each operand of a concatenation gets its slice of the gradient.
  void visitConcat(tensor::ConcatOp op, Value dy);
  void visitAttention(AttentionOp op, Value dy);
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

/// The types of `values`, for a backward op's results.
SmallVector<Type> typesOf(ValueRange values) {
  return llvm::to_vector(values.getTypes());
}

void ReverseSweep::visitAttention(AttentionOp op, Value dy) {
  Location loc = op.getLoc();
  bool shared = op.getSharedQk();
  SmallVector<Type> types = {op.getQuery().getType()};
  if (!shared)
    types.push_back(op.getKey().getType());
  types.push_back(op.getValue().getType());
  OperationState state(loc, AttentionBackwardOp::getOperationName());
  state.addOperands({op.getQuery(), op.getKey(), op.getValue(), op.getResult(),
                     op.getLogsumexp(), dy});
  for (NamedAttribute attr : op->getAttrs())
    state.addAttribute(attr.getName(), attr.getValue());
  state.addTypes(types);
  // The backward attends exactly as the forward did: same mask, same score.
  for (Region &region : op.getModifiers()) {
    IRMapping mapping;
    region.cloneInto(state.addRegion(), mapping);
  }
  Operation *backward = b.create(state);
  accumulate(op.getQuery(), backward->getResult(0));
  if (!shared)
    accumulate(op.getKey(), backward->getResult(1));
  accumulate(op.getValue(), backward->getResults().back());
}

void ReverseSweep::visitConcat(tensor::ConcatOp op, Value dy) {
  auto type = cast<RankedTensorType>(dy.getType());
  int64_t dim = op.getDim(), offset = 0;
  for (Value input : op.getInputs()) {
    auto inputType = cast<RankedTensorType>(input.getType());
    SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
    offsets[dim] = b.getIndexAttr(offset);
    SmallVector<OpFoldResult> sizes, strides(type.getRank(), b.getIndexAttr(1));
    for (int64_t size : inputType.getShape())
      sizes.push_back(b.getIndexAttr(size));
    accumulate(input,
               tensor::ExtractSliceOp::create(b, op.getLoc(), inputType, dy,
                                              offsets, sizes, strides));
    offset += inputType.getDimSize(dim);
  }
}

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
      if (failed(visit(clone)))
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

LogicalResult ReverseSweep::visitElementwise(Operation *op, Value dy) {
  Location loc = op->getLoc();
  auto mulf = [&](Value x, Value y) -> Value {
    return arith::MulFOp::create(b, loc, x, y);
  };
  auto negf = [&](Value x) -> Value {
    return arith::NegFOp::create(b, loc, x);
  };
  if (isa<arith::AddFOp>(op)) {
    accumulate(op->getOperand(0), dy);
    accumulate(op->getOperand(1), dy);
  } else if (isa<arith::SubFOp>(op)) {
    accumulate(op->getOperand(0), dy);
    accumulate(op->getOperand(1), negf(dy));
  } else if (isa<arith::MulFOp>(op)) {
    accumulate(op->getOperand(0), mulf(dy, op->getOperand(1)));
    accumulate(op->getOperand(1), mulf(dy, op->getOperand(0)));
  } else if (isa<arith::DivFOp>(op)) {
    // d(a / b) = da / b - db a / b².
    Value quotient = op->getResult(0), divisor = op->getOperand(1);
    Value da = arith::DivFOp::create(b, loc, dy, divisor);
    accumulate(op->getOperand(0), da);
    accumulate(divisor, negf(mulf(da, quotient)));
  } else if (isa<arith::NegFOp>(op)) {
    accumulate(op->getOperand(0), negf(dy));
  } else if (isa<arith::MaximumFOp, arith::MinimumFOp>(op)) {
    // The gradient goes to the operand that was chosen (the first on ties).
    auto predicate = isa<arith::MaximumFOp>(op) ? arith::CmpFPredicate::OGE
                                                : arith::CmpFPredicate::OLE;
    Value lhs = op->getOperand(0), rhs = op->getOperand(1);
    Value first = arith::CmpFOp::create(b, loc, predicate, lhs, rhs);
    auto type = cast<RankedTensorType>(dy.getType());
    Value zero = arith::ConstantOp::create(
        b, loc, type,
        DenseElementsAttr::get(type,
                               FloatAttr::get(type.getElementType(), 0.0)));
    accumulate(lhs, arith::SelectOp::create(b, loc, first, dy, zero));
    accumulate(rhs, arith::SelectOp::create(b, loc, first, zero, dy));
  } else if (isa<math::TanhOp>(op)) {
    // d tanh(x) = (1 - y²) dx = dx - y² dx.
    Value y = op->getResult(0);
    accumulate(op->getOperand(0),
               arith::SubFOp::create(b, loc, dy, mulf(mulf(y, y), dy)));
  } else if (isa<math::ExpOp>(op)) {
    accumulate(op->getOperand(0), mulf(dy, op->getResult(0)));
  } else {
    return op->emitOpError("has no gradient rule: attn-generate-train-step "
                           "differentiates the attn model ops, arith "
                           "addf, subf, mulf, divf, negf, maximumf, minimumf, "
                           "math tanh, exp, tensor concat, extract_slice, "
                           "expand_shape, collapse_shape and linalg "
                           "transpose");
  }
  return success();
}

LogicalResult ReverseSweep::visit(Operation *op) {
  if (llvm::none_of(op->getResults(),
                    [&](Value r) { return gradients.count(r); }))
    return success();
  Location loc = op->getLoc();
  Value dy = gradients.lookup(op->getResult(0));
  if (auto embedding = dyn_cast<EmbeddingOp>(op)) {
    accumulate(embedding.getTable(), EmbeddingBackwardOp::create(
                                         b, loc, embedding.getTable().getType(),
                                         embedding.getTokens(), dy));
  } else if (auto norm = dyn_cast<LayerNormOp>(op)) {
    auto backward = LayerNormBackwardOp::create(
        b, loc, typesOf({norm.getInput(), norm.getGamma(), norm.getBeta()}),
        norm.getInput(), norm.getGamma(), dy, norm.getEpsilonAttr());
    accumulate(norm.getInput(), backward.getInputGrad());
    accumulate(norm.getGamma(), backward.getGammaGrad());
    accumulate(norm.getBeta(), backward.getBetaGrad());
  } else if (auto linear = dyn_cast<LinearOp>(op)) {
    SmallVector<Type> types = typesOf({linear.getInput(), linear.getWeight()});
    if (Value bias = linear.getBias())
      types.push_back(bias.getType());
    auto backward = LinearBackwardOp::create(
        b, loc, types, ValueRange{linear.getInput(), linear.getWeight(), dy});
    accumulate(linear.getInput(), backward.getInputGrad());
    accumulate(linear.getWeight(), backward.getWeightGrad());
    if (Value bias = linear.getBias())
      accumulate(bias, backward.getBiasGrad());
  } else if (auto ff = dyn_cast<FeedForwardOp>(op)) {
    auto backward = FeedForwardBackwardOp::create(
        b, loc,
        typesOf({ff.getInput(), ff.getUpWeight(), ff.getUpBias(),
                 ff.getDownWeight(), ff.getDownBias()}),
        ff.getActivationAttr(), ff.getInput(), ff.getUpWeight(), ff.getUpBias(),
        ff.getDownWeight(), dy, ff.getChunksAttr());
    accumulate(ff.getInput(), backward.getInputGrad());
    accumulate(ff.getUpWeight(), backward.getUpWeightGrad());
    accumulate(ff.getUpBias(), backward.getUpBiasGrad());
    accumulate(ff.getDownWeight(), backward.getDownWeightGrad());
    accumulate(ff.getDownBias(), backward.getDownBiasGrad());
  } else if (auto split = dyn_cast<SplitHeadsOp>(op)) {
    accumulate(split.getInput(),
               MergeHeadsOp::create(b, loc, split.getInput().getType(), dy));
  } else if (auto merge = dyn_cast<MergeHeadsOp>(op)) {
    int64_t heads =
        cast<RankedTensorType>(merge.getInput().getType()).getDimSize(1);
    accumulate(
        merge.getInput(),
        SplitHeadsOp::create(b, loc, merge.getInput().getType(), dy, heads));
  } else if (auto reversible = dyn_cast<ReversibleOp>(op)) {
    return visitReversible(reversible);
  } else if (auto attention = dyn_cast<AttentionOp>(op)) {
    if (!gradients.count(attention.getResult()))
      return success();
    visitAttention(attention, gradients.lookup(attention.getResult()));
  } else if (auto relative = dyn_cast<RelativeAttentionOp>(op)) {
    if (!gradients.count(relative.getResult()))
      return success();
    // The memory's keys and values get theirs like the segment's; the
    // memory itself is an argument of the function, so there it stops.
    SmallVector<Value> operands = {relative.getQuery(), relative.getKey(),
                                   relative.getValue(), relative.getPos(),
                                   relative.getU(),     relative.getW()};
    auto backward = RelativeAttentionBackwardOp::create(
        b, loc, typesOf(operands), operands[0], operands[1], operands[2],
        operands[3], operands[4], operands[5], relative.getResult(),
        relative.getLogsumexp(), gradients.lookup(relative.getResult()),
        relative.getScaleAttr(), relative.getClampLenAttr(),
        relative.getSameLengthAttr());
    for (auto [operand, gradient] :
         llvm::zip_equal(operands, backward.getResults()))
      accumulate(operand, gradient);
  } else if (auto span = dyn_cast<AdaptiveSpanAttentionOp>(op)) {
    if (!gradients.count(span.getResult()))
      return success();
    SmallVector<Value> operands = {span.getQuery(), span.getKey(),
                                   span.getValue(), span.getZ()};
    auto backward = AdaptiveSpanAttentionBackwardOp::create(
        b, loc, typesOf(operands), operands[0], operands[1], operands[2],
        operands[3], span.getResult(), span.getLogNormalizer(),
        gradients.lookup(span.getResult()), span.getMaxSpanAttr(),
        span.getRampAttr(), span.getCausalAttr(), span.getScaleAttr());
    for (auto [operand, gradient] :
         llvm::zip_equal(operands, backward.getResults()))
      accumulate(operand, gradient);
  } else if (auto lsh = dyn_cast<LSHAttentionOp>(op)) {
    // The same hashing and sort, recomputed from the same rotations.
    auto backward = LSHAttentionBackwardOp::create(
        b, loc, typesOf({lsh.getQueryKey(), lsh.getValue()}), lsh.getQueryKey(),
        lsh.getValue(), lsh.getResult(), dy, lsh.getNHashesAttr(),
        lsh.getBucketSizeAttr(), lsh.getCausalAttr(), lsh.getSeedAttr(),
        lsh.getScaleAttr(), lsh.getChunksAttr(), lsh.getFactorizedHashAttr());
    accumulate(lsh.getQueryKey(), backward.getQueryKeyGrad());
    accumulate(lsh.getValue(), backward.getValueGrad());
  } else if (auto routed = dyn_cast<RoutedAttentionOp>(op)) {
    // The same routing, recomputed; the centroids get no gradient (the
    // train step moves them by their moving average).
    auto backward = RoutedAttentionBackwardOp::create(
        b, loc,
        typesOf({routed.getQuery(), routed.getKey(), routed.getValue()}),
        routed.getQuery(), routed.getKey(), routed.getValue(),
        routed.getCentroids(), dy, routed.getClustersAttr(),
        routed.getWindowAttr(), routed.getCausalAttr(), routed.getSeedAttr(),
        routed.getScaleAttr());
    accumulate(routed.getQuery(), backward.getQueryGrad());
    accumulate(routed.getKey(), backward.getKeyGrad());
    accumulate(routed.getValue(), backward.getValueGrad());
  } else if (auto loss = dyn_cast<SoftmaxCrossEntropyOp>(op)) {
    // The weights are data (which positions count), not differentiated.
    accumulate(loss.getLogits(),
               SoftmaxCrossEntropyBackwardOp::create(
                   b, loc, loss.getLogits().getType(), loss.getLogits(),
                   loss.getLabels(), loss.getWeights(), dy));
  } else if (auto concat = dyn_cast<tensor::ConcatOp>(op)) {
    visitConcat(concat, dy);
  } else if (auto transpose = dyn_cast<linalg::TransposeOp>(op)) {
    // Transposed back: by the inverse permutation.
    ArrayRef<int64_t> permutation = transpose.getPermutation();
    SmallVector<int64_t> inverse(permutation.size());
    for (auto [i, p] : llvm::enumerate(permutation))
      inverse[p] = i;
    auto inputType = cast<RankedTensorType>(transpose.getInput().getType());
    Value init = tensor::EmptyOp::create(b, loc, inputType.getShape(),
                                         inputType.getElementType());
    accumulate(
        transpose.getInput(),
        linalg::TransposeOp::create(b, loc, dy, init, inverse).getResult()[0]);
  } else if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
    accumulate(expand.getSrc(), tensor::CollapseShapeOp::create(
                                    b, loc, expand.getSrcType(), dy,
                                    expand.getReassociationIndices()));
  } else if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
    accumulate(collapse.getSrc(), tensor::ExpandShapeOp::create(
                                      b, loc, collapse.getSrcType(), dy,
                                      collapse.getReassociationIndices()));
  } else if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
    // The slice's gradient, in zeros of the source's shape.
    auto sourceType = slice.getSourceType();
    Value zeros = arith::ConstantOp::create(
        b, loc, sourceType,
        DenseElementsAttr::get(
            sourceType, FloatAttr::get(sourceType.getElementType(), 0.0)));
    accumulate(slice.getSource(),
               tensor::InsertSliceOp::create(
                   b, loc, dy, zeros, slice.getMixedOffsets(),
                   slice.getMixedSizes(), slice.getMixedStrides()));
  } else if (isa<ParamOp, arith::ConstantOp, SinusoidalEncodingOp,
                 StopGradientOp>(op)) {
    // Leaves: a parameter's gradient is read at the end; nothing passes a
    // stop_gradient.
  } else {
    return visitElementwise(op, dy);
  }
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
