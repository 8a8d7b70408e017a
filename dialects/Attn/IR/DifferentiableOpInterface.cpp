//===- DifferentiableOpInterface.cpp - the attn ops' gradient rules -------===//
//
// Each attn op's vector-Jacobian rule builds its backward op (whose
// lowering is the efficient one for that op) from the forward's operands
// and, for attention, the row statistics its expansion saved. Block ops are
// differentiated as what they expand to: a multi-head block as its
// projections, head split, attention, head merge and output projection; a
// residual or reversible block as its body and the additions; a compression
// as the projection it is.
//
//===----------------------------------------------------------------------===//

#include "dialects/Attn/IR/AttnOps.h"
#include "dialects/Attn/IR/SparsePatterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace lcc;
using namespace lcc::attn;

namespace {

/// Clones `region`'s body at the builder's insertion point with its
/// arguments bound to `arguments`, and returns what it yields.
SmallVector<Value> inlineBody(OpBuilder &b, Region &region,
                              ValueRange arguments) {
  IRMapping mapping;
  mapping.map(region.getArguments(), arguments);
  for (Operation &op : region.front().without_terminator())
    b.clone(op, mapping);
  SmallVector<Value> yielded;
  for (Value v : region.front().getTerminator()->getOperands())
    yielded.push_back(mapping.lookupOrDefault(v));
  return yielded;
}

RankedTensorType tensorTypeOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// x [batch, seq, d_model] · weight [d_model, heads * dim] split into
/// [batch, heads, seq, dim].
Value projectToHeads(OpBuilder &b, Location loc, Value x, Value weight,
                     int64_t heads) {
  RankedTensorType xType = tensorTypeOf(x), wType = tensorTypeOf(weight);
  int64_t batch = xType.getDimSize(0), seq = xType.getDimSize(1);
  int64_t cols = wType.getDimSize(1);
  Type elt = xType.getElementType();
  Value projected =
      LinearOp::create(b, loc, RankedTensorType::get({batch, seq, cols}, elt),
                       x, weight, Value());
  return SplitHeadsOp::create(
      b, loc, RankedTensorType::get({batch, heads, seq, cols / heads}, elt),
      projected, heads);
}

/// The types of `values`, for a backward op's results.
SmallVector<Type> typesOf(ValueRange values) {
  return llvm::to_vector(values.getTypes());
}

/// operandGradients[operand index of each of `operands`] = its gradient.
void setGradients(Operation *op, ValueRange operands, ValueRange gradients,
                  SmallVectorImpl<Value> &operandGradients) {
  for (auto [operand, gradient] : llvm::zip_equal(operands, gradients))
    for (OpOperand &use : op->getOpOperands())
      if (use.get() == operand && !operandGradients[use.getOperandNumber()]) {
        operandGradients[use.getOperandNumber()] = gradient;
        break;
      }
}

} // namespace

//===----------------------------------------------------------------------===//
// Block ops: differentiated as what they expand to.
//===----------------------------------------------------------------------===//

SmallVector<Value>
MultiHeadAttentionOp::expandForDifferentiation(OpBuilder &b) {
  Location loc = getLoc();
  int64_t heads = getHeads();
  Value x = getInput();
  SmallVector<Value> arguments = {
      projectToHeads(b, loc, x, getQueryWeight(), heads)};
  if (Value keyWeight = getKeyWeight())
    arguments.push_back(projectToHeads(b, loc, x, keyWeight, heads));
  arguments.push_back(projectToHeads(b, loc, x, getValueWeight(), heads));
  Value attention = inlineBody(b, getBody(), arguments)[0];
  RankedTensorType aType = tensorTypeOf(attention);
  Value merged = MergeHeadsOp::create(
      b, loc,
      RankedTensorType::get({aType.getDimSize(0), aType.getDimSize(2),
                             aType.getDimSize(1) * aType.getDimSize(3)},
                            aType.getElementType()),
      attention);
  return {LinearOp::create(b, loc, getResult().getType(), merged,
                           getOutputWeight(), Value())};
}

SmallVector<Value> ReversibleOp::expandForDifferentiation(OpBuilder &b) {
  Location loc = getLoc();
  Value f = inlineBody(b, getF(), getX2())[0];
  Value y1 = arith::AddFOp::create(b, loc, getX1(), f);
  Value g = inlineBody(b, getG(), y1)[0];
  Value y2 = arith::AddFOp::create(b, loc, getX2(), g);
  return {y1, y2};
}

SmallVector<Value> ResidualOp::expandForDifferentiation(OpBuilder &b) {
  Value body = inlineBody(b, getBody(), getInput())[0];
  return {arith::AddFOp::create(b, getLoc(), getInput(), body)};
}

SmallVector<Value> CompressOp::expandForDifferentiation(OpBuilder &b) {
  return {buildAsLinear(b)};
}

//===----------------------------------------------------------------------===//
// Attention: expanded to save its row statistics, then its backward op.
//===----------------------------------------------------------------------===//

SmallVector<Value> AttentionOp::expandForDifferentiation(OpBuilder &b) {
  if (getLogsumexp())
    return {};
  return withRowStatistics(b, *this, getQuery());
}

LogicalResult AttentionOp::buildVectorJacobianProduct(
    OpBuilder &b, ArrayRef<Value> resultGradients,
    SmallVectorImpl<Value> &operandGradients) {
  Value dy = resultGradients[0];
  // The logsumexp's gradient, when something read it (ring attention's
  // merge of partial results).
  Value dLogSumExp = resultGradients.size() > 1 ? resultGradients[1] : Value();
  if (!dy && !dLogSumExp)
    return success();
  if (!dy)
    dy = splatLike(b, getLoc(), getResult(), 0.0);
  bool shared = getSharedQk();
  SmallVector<Type> types = {getQuery().getType()};
  if (!shared)
    types.push_back(getKey().getType());
  types.push_back(getValue().getType());
  auto backward = AttentionBackwardOp::create(
      b, getLoc(), types, getQuery(), getKey(), getValue(), getResult(),
      getLogsumexp(), dy, dLogSumExp, getPositions(), getCausalAttr(),
      getScaleAttr(), getSharedQkAttr(), getModifiers().size());
  // The backward attends exactly as the forward did: same mask, same score.
  copyModifiers(getModifiers(), backward);
  backward->setDiscardableAttrs(getOperation()->getDiscardableAttrDictionary());
  operandGradients[0] = backward->getResult(0);
  if (!shared)
    operandGradients[1] = backward->getResult(1);
  operandGradients[2] = backward->getResults().back();
  return success();
}

SmallVector<Value> RingAttentionOp::expandForDifferentiation(OpBuilder &b) {
  if (getLogsumexp())
    return {};
  return withRowStatistics(b, *this, getQuery());
}

LogicalResult RingAttentionOp::buildVectorJacobianProduct(
    OpBuilder &b, ArrayRef<Value> resultGradients,
    SmallVectorImpl<Value> &operandGradients) {
  Value dy = resultGradients[0];
  if (!dy)
    return success();
  SmallVector<Value> operands(getOperands());
  auto backward = RingAttentionBackwardOp::create(
      b, getLoc(), typesOf(operands), getQuery(), getKey(), getValue(),
      getResult(), getLogsumexp(), dy, getFormOperands(), getCausalAttr(),
      getScaleAttr(), getRanksAttr(), getFormAttr(), getFormAttributesAttr(),
      getModifiers().size());
  // The backward attends as the forward did: same mask, same score.
  copyModifiers(getModifiers(), backward);
  setGradients(*this, operands, backward.getResults(), operandGradients);
  return success();
}

void RingAttentionOp::getUnitIntervalOperands(
    SmallVectorImpl<unsigned> &operands) {
  std::optional<StringRef> form = getForm();
  if (!form)
    return;
  // Those of the form (adaptive span's z): asked of an op of it on the
  // same operands, made for the question and dropped. Its operands are the
  // ring's, in the ring's order.
  OperationState state(getLoc(), *form);
  state.addOperands(getOperands());
  state.addTypes(getResult().getType());
  if (DictionaryAttr attributes = getFormAttributesAttr())
    state.addAttributes(attributes.getValue());
  Operation *formOp = Operation::create(state);
  if (auto differentiable = dyn_cast<DifferentiableOpInterface>(formOp))
    differentiable.getUnitIntervalOperands(operands);
  formOp->destroy();
}

LogicalResult GateSelectOp::buildVectorJacobianProduct(
    OpBuilder &b, ArrayRef<Value> resultGradients,
    SmallVectorImpl<Value> &operandGradients) {
  Value dy = resultGradients[0];
  Value zeros = splatLike(b, getLoc(), dy, 0.0);
  operandGradients[1] = GateSelectOp::create(b, getLoc(), getGate(), dy, zeros);
  operandGradients[2] = GateSelectOp::create(b, getLoc(), getGate(), zeros, dy);
  return success();
}

LogicalResult MergePartialsOp::buildVectorJacobianProduct(
    OpBuilder &b, ArrayRef<Value> resultGradients,
    SmallVectorImpl<Value> &operandGradients) {
  Value dy = resultGradients[0], dLogSumExp = resultGradients[1];
  if (!dy && !dLogSumExp)
    return success();
  if (!dy)
    dy = splatLike(b, getLoc(), getResult(), 0.0);
  if (!dLogSumExp)
    dLogSumExp = splatLike(b, getLoc(), getLogsumexp(), 0.0);
  SmallVector<Value> partials = {getFirst(), getFirstLogsumexp(), getSecond(),
                                 getSecondLogsumexp()};
  auto backward = MergePartialsBackwardOp::create(
      b, getLoc(), typesOf(partials), partials[0], partials[1], partials[2],
      partials[3], getResult(), getLogsumexp(), dy, dLogSumExp, getGate());
  // The gate, a rank's constant, gets none.
  for (unsigned i = 0; i < 4; ++i)
    operandGradients[i] = backward->getResult(i);
  return success();
}

SmallVector<Value> SparseAttentionOp::expandForDifferentiation(OpBuilder &b) {
  // Differentiated as the masked attention it equals.
  return {createMaskedAttention(b, *this).getResult()};
}

SmallVector<Value> RelativeAttentionOp::expandForDifferentiation(OpBuilder &b) {
  if (getLogsumexp())
    return {};
  return withRowStatistics(b, *this, getQuery());
}

LogicalResult RelativeAttentionOp::buildVectorJacobianProduct(
    OpBuilder &b, ArrayRef<Value> resultGradients,
    SmallVectorImpl<Value> &operandGradients) {
  Value dy = resultGradients[0];
  if (!dy)
    return success();
  // The memory's keys and values get theirs like the segment's; the
  // memory itself is an argument of the function, so there it stops.
  SmallVector<Value> operands = {getQuery(), getKey(), getValue(),
                                 getPos(),   getU(),   getW()};
  auto backward = RelativeAttentionBackwardOp::create(
      b, getLoc(), typesOf(operands), operands[0], operands[1], operands[2],
      operands[3], operands[4], operands[5], getResult(), getLogsumexp(), dy,
      getQueryOffset(), getScaleAttr(), getClampLenAttr(), getSameLengthAttr());
  setGradients(*this, operands, backward.getResults(), operandGradients);
  return success();
}

SmallVector<Value>
AdaptiveSpanAttentionOp::expandForDifferentiation(OpBuilder &b) {
  if (getLogNormalizer())
    return {};
  return withRowStatistics(b, *this, getQuery());
}

LogicalResult AdaptiveSpanAttentionOp::buildVectorJacobianProduct(
    OpBuilder &b, ArrayRef<Value> resultGradients,
    SmallVectorImpl<Value> &operandGradients) {
  Value dy = resultGradients[0];
  if (!dy)
    return success();
  SmallVector<Value> operands = {getQuery(), getKey(), getValue(), getZ()};
  auto backward = AdaptiveSpanAttentionBackwardOp::create(
      b, getLoc(), typesOf(operands), operands[0], operands[1], operands[2],
      operands[3], getResult(), getLogNormalizer(), dy, getQueryOffset(),
      getMaxSpanAttr(), getRampAttr(), getCausalAttr(), getScaleAttr());
  setGradients(*this, operands, backward.getResults(), operandGradients);
  return success();
}

void AdaptiveSpanAttentionOp::getUnitIntervalOperands(
    SmallVectorImpl<unsigned> &operands) {
  // z, the span fraction of each head, as facebookresearch/adaptive-span
  // clamps it after each step.
  operands.push_back(getZMutable().getOperandNumber());
}

LogicalResult LSHAttentionOp::buildVectorJacobianProduct(
    OpBuilder &b, ArrayRef<Value> resultGradients,
    SmallVectorImpl<Value> &operandGradients) {
  // The same hashing and sort, recomputed from the same rotations.
  auto backward = LSHAttentionBackwardOp::create(
      b, getLoc(), typesOf({getQueryKey(), getValue()}), getQueryKey(),
      getValue(), getResult(), resultGradients[0], getNHashesAttr(),
      getBucketSizeAttr(), getCausalAttr(), getSeedAttr(), getScaleAttr(),
      getChunksAttr(), getFactorizedHashAttr(), getNBucketsAttr());
  setGradients(*this, {getQueryKey(), getValue()}, backward.getResults(),
               operandGradients);
  return success();
}

LogicalResult RoutedAttentionOp::buildVectorJacobianProduct(
    OpBuilder &b, ArrayRef<Value> resultGradients,
    SmallVectorImpl<Value> &operandGradients) {
  // The same routing, recomputed; the centroids get no gradient (the
  // train step moves them by their moving average).
  SmallVector<Value> operands = {getQuery(), getKey(), getValue()};
  auto backward = RoutedAttentionBackwardOp::create(
      b, getLoc(), typesOf(operands), getQuery(), getKey(), getValue(),
      getCentroids(), resultGradients[0], getClustersAttr(), getWindowAttr(),
      getCausalAttr(), getSeedAttr(), getScaleAttr());
  setGradients(*this, operands, backward.getResults(), operandGradients);
  return success();
}

SelfTrainedOperand RoutedAttentionOp::getSelfTrainedOperand() {
  if (!getCentroids())
    return {};
  return {&getCentroidsMutable()[0], "centroids", "their moving average"};
}

Value RoutedAttentionOp::buildSelfTrainedUpdate(OpBuilder &b, double decay) {
  Value centroids = getCentroids();
  return RoutedCentroidUpdateOp::create(
      b, getLoc(), centroids.getType(), centroids, getQuery(), getKey(),
      b.getF32FloatAttr(static_cast<float>(decay)));
}

//===----------------------------------------------------------------------===//
// Model ops.
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingOp::buildVectorJacobianProduct(
    OpBuilder &b, ArrayRef<Value> resultGradients,
    SmallVectorImpl<Value> &operandGradients) {
  operandGradients[getTableMutable().getOperandNumber()] =
      EmbeddingBackwardOp::create(b, getLoc(), getTable().getType(),
                                  getTokens(), resultGradients[0]);
  return success();
}

LogicalResult LayerNormOp::buildVectorJacobianProduct(
    OpBuilder &b, ArrayRef<Value> resultGradients,
    SmallVectorImpl<Value> &operandGradients) {
  SmallVector<Value> operands = {getInput(), getGamma(), getBeta()};
  auto backward = LayerNormBackwardOp::create(
      b, getLoc(), typesOf(operands), getInput(), getGamma(),
      resultGradients[0], getEpsilonAttr());
  setGradients(*this, operands, backward.getResults(), operandGradients);
  return success();
}

LogicalResult
LinearOp::buildVectorJacobianProduct(OpBuilder &b,
                                     ArrayRef<Value> resultGradients,
                                     SmallVectorImpl<Value> &operandGradients) {
  SmallVector<Value> operands = {getInput(), getWeight()};
  if (Value bias = getBias())
    operands.push_back(bias);
  auto backward = LinearBackwardOp::create(
      b, getLoc(), typesOf(operands),
      ValueRange{getInput(), getWeight(), resultGradients[0]});
  setGradients(*this, operands, backward.getResults(), operandGradients);
  return success();
}

LogicalResult FeedForwardOp::buildVectorJacobianProduct(
    OpBuilder &b, ArrayRef<Value> resultGradients,
    SmallVectorImpl<Value> &operandGradients) {
  SmallVector<Value> operands = {getInput(), getUpWeight(), getUpBias(),
                                 getDownWeight(), getDownBias()};
  auto backward = FeedForwardBackwardOp::create(
      b, getLoc(), typesOf(operands), getActivationAttr(), getInput(),
      getUpWeight(), getUpBias(), getDownWeight(), resultGradients[0],
      /*down_bias=*/Value(), getChunksAttr());
  setGradients(*this, operands, backward.getResults(), operandGradients);
  return success();
}

LogicalResult SplitHeadsOp::buildVectorJacobianProduct(
    OpBuilder &b, ArrayRef<Value> resultGradients,
    SmallVectorImpl<Value> &operandGradients) {
  operandGradients[0] = MergeHeadsOp::create(b, getLoc(), getInput().getType(),
                                             resultGradients[0]);
  return success();
}

LogicalResult MergeHeadsOp::buildVectorJacobianProduct(
    OpBuilder &b, ArrayRef<Value> resultGradients,
    SmallVectorImpl<Value> &operandGradients) {
  int64_t heads = tensorTypeOf(getInput()).getDimSize(1);
  operandGradients[0] = SplitHeadsOp::create(b, getLoc(), getInput().getType(),
                                             resultGradients[0], heads);
  return success();
}

LogicalResult SoftmaxCrossEntropyOp::buildVectorJacobianProduct(
    OpBuilder &b, ArrayRef<Value> resultGradients,
    SmallVectorImpl<Value> &operandGradients) {
  // The weights are data (which positions count), not differentiated.
  operandGradients[getLogitsMutable().getOperandNumber()] =
      SoftmaxCrossEntropyBackwardOp::create(b, getLoc(), getLogits().getType(),
                                            getLogits(), getLabels(),
                                            getWeights(), resultGradients[0]);
  return success();
}

LogicalResult
StopGradientOp::buildVectorJacobianProduct(OpBuilder &, ArrayRef<Value>,
                                           SmallVectorImpl<Value> &) {
  return success(); // Nothing passes it.
}

//===----------------------------------------------------------------------===//
// Collectives.
//===----------------------------------------------------------------------===//

LogicalResult AllToAllOp::buildVectorJacobianProduct(
    OpBuilder &b, ArrayRef<Value> resultGradients,
    SmallVectorImpl<Value> &operandGradients) {
  // Block j of rank r went to block r of rank j: the same exchange brings
  // each gradient block back.
  operandGradients[0] = AllToAllOp::create(b, getLoc(), resultGradients[0]);
  return success();
}

LogicalResult RingShiftOp::buildVectorJacobianProduct(
    OpBuilder &b, ArrayRef<Value> resultGradients,
    SmallVectorImpl<Value> &operandGradients) {
  operandGradients[0] =
      RingShiftOp::create(b, getLoc(), resultGradients[0], -getOffset());
  return success();
}

LogicalResult AllReduceOp::buildVectorJacobianProduct(
    OpBuilder &b, ArrayRef<Value> resultGradients,
    SmallVectorImpl<Value> &operandGradients) {
  // Every rank's copy of result i is the same sum (or mean) of the ranks'
  // operand i: operand i's gradient sums (or averages) the copies'.
  SmallVector<Value> given;
  SmallVector<unsigned> which;
  for (auto [i, gradient] : llvm::enumerate(resultGradients))
    if (gradient) {
      given.push_back(gradient);
      which.push_back(i);
    }
  auto reduced = AllReduceOp::create(b, getLoc(), getReductionAttr(), given);
  for (auto [i, gradient] : llvm::zip_equal(which, reduced.getResults()))
    operandGradients[i] = gradient;
  return success();
}

LogicalResult RankSliceOp::buildVectorJacobianProduct(
    OpBuilder &b, ArrayRef<Value> resultGradients,
    SmallVectorImpl<Value> &operandGradients) {
  operandGradients[0] =
      RankPadOp::create(b, getLoc(), getValue().getType(), resultGradients[0]);
  return success();
}

LogicalResult RankPadOp::buildVectorJacobianProduct(
    OpBuilder &b, ArrayRef<Value> resultGradients,
    SmallVectorImpl<Value> &operandGradients) {
  operandGradients[0] = RankSliceOp::create(b, getLoc(), getValue().getType(),
                                            resultGradients[0]);
  return success();
}
