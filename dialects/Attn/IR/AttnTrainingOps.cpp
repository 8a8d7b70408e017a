//===- AttnTrainingOps.cpp - verifiers of the train step's ops ------------===//
//
// A backward op is checked against the forward op it differentiates: each
// gradient has the type of what it is the gradient of.
//
//===----------------------------------------------------------------------===//

#include "dialects/Attn/IR/AttnOps.h"
#include "dialects/Attn/IR/Verification.h"

using namespace mlir;
using namespace lcc::attn;
using namespace lcc::attn::detail;

namespace {

/// Checks that `gradient` has exactly the type of `of`.
LogicalResult verifyGradientOf(Operation *op, StringRef gradientName,
                               Value gradient, StringRef ofName, Value of) {
  if (gradient.getType() == of.getType())
    return success();
  return op->emitOpError() << "expected " << gradientName << " of the type of "
                           << ofName << " " << of.getType() << ", got "
                           << gradient.getType();
}

} // namespace

LogicalResult AttentionBackwardOp::verify() {
  if (getSharedQk() && getKey() != getQuery())
    return emitOpError("expected key to be the same value as query when "
                       "'shared_qk' is set");
  if (getSharedQk() && !getPositions().empty())
    return emitOpError("expected no positions with 'shared_qk' (a token's "
                       "own score is found by its index)");
  if (failed(verifyAttentionOperands(*this, getQuery(), getKey(), getValue(),
                                     getResult(), /*sameSeq=*/false)) ||
      failed(verifyScale(*this, getScale())) ||
      failed(verifyAttentionPositions(*this, getPositions(), getQuery(),
                                      getKey(),
                                      getCausal() || !getModifiers().empty())))
    return failure();
  ShapeChecker check(*this);
  NamedTensor q("query", getQuery()), lse("logsumexp", getLogsumexp());
  if (failed(check.elementType(lse, Float32Type::get(getContext()))) ||
      failed(check.shape(lse, {q.dim(0), q.dim(1), q.dim(2)})) ||
      failed(verifyGradientOf(*this, "result_grad", getResultGrad(), "result",
                              getResult())) ||
      failed(verifyGradientOf(*this, "query_grad", getQueryGrad(), "query",
                              getQuery())) ||
      failed(verifyGradientOf(*this, "value_grad", getValueGrad(), "value",
                              getValue())))
    return failure();
  if (Value lseGrad = getLogsumexpGrad())
    if (failed(verifyGradientOf(*this, "logsumexp_grad", lseGrad, "logsumexp",
                                getLogsumexp())))
      return failure();
  if (getSharedQk() == static_cast<bool>(getKeyGrad()))
    return emitOpError(getSharedQk()
                           ? "expected no key_grad result with 'shared_qk' "
                             "(the key gradient is part of query_grad)"
                           : "expected a key_grad result");
  if (Value keyGrad = getKeyGrad())
    if (failed(verifyGradientOf(*this, "key_grad", keyGrad, "key", getKey())))
      return failure();
  return verifyAttentionModifiers(*this, getModifiers());
}

Region *AttentionBackwardOp::getMaskRegion() {
  return modifierRegion(getModifiers(), 0);
}

Region *AttentionBackwardOp::getScoreRegion() {
  return modifierRegion(getModifiers(), 1);
}

LogicalResult MergePartialsBackwardOp::verify() {
  return detail::verifyMergedPartials(
      *this, getFirst(), getFirstLogsumexp(), getSecond(), getSecondLogsumexp(),
      getGate(),
      {getResult(), getResultGrad(), getFirstGrad(), getSecondGrad()},
      {getLogsumexp(), getLogsumexpGrad(), getFirstLogsumexpGrad(),
       getSecondLogsumexpGrad()});
}

LogicalResult RelativeAttentionBackwardOp::verify() {
  if (failed(verifyRelativeAttention(
          *this, getQuery(), getKey(), getValue(), getPos(), getU(), getW(),
          getResult(), getLogsumexp(), getQueryOffset(), getScale(),
          getClampLen(), getSameLength())))
    return failure();
  for (auto [name, gradient, ofName, of] :
       {std::make_tuple("result_grad", getResultGrad(), "result", getResult()),
        std::make_tuple("query_grad", getQueryGrad(), "query", getQuery()),
        std::make_tuple("key_grad", getKeyGrad(), "key", getKey()),
        std::make_tuple("value_grad", getValueGrad(), "value", getValue()),
        std::make_tuple("pos_grad", getPosGrad(), "pos", getPos()),
        std::make_tuple("u_grad", getUGrad(), "u", getU()),
        std::make_tuple("w_grad", getWGrad(), "w", getW())})
    if (failed(verifyGradientOf(*this, name, gradient, ofName, of)))
      return failure();
  return success();
}

LogicalResult AdaptiveSpanAttentionBackwardOp::verify() {
  if (failed(verifyAdaptiveSpanAttention(*this, getQuery(), getKey(),
                                         getValue(), getZ(), getResult(),
                                         getLogNormalizer(), getQueryOffset(),
                                         getMaxSpan(), getRamp(), getScale())))
    return failure();
  for (auto [name, gradient, ofName, of] :
       {std::make_tuple("result_grad", getResultGrad(), "result", getResult()),
        std::make_tuple("query_grad", getQueryGrad(), "query", getQuery()),
        std::make_tuple("key_grad", getKeyGrad(), "key", getKey()),
        std::make_tuple("value_grad", getValueGrad(), "value", getValue()),
        std::make_tuple("z_grad", getZGrad(), "z", getZ())})
    if (failed(verifyGradientOf(*this, name, gradient, ofName, of)))
      return failure();
  return success();
}

LogicalResult LSHAttentionBackwardOp::verify() {
  if (failed(verifyAttentionOperands(*this, getQueryKey(), getQueryKey(),
                                     getValue(), getResult(), /*sameSeq=*/true,
                                     "query_key")) ||
      failed(verifyAtLeast(*this, "n_hashes", getNHashes(),
                           knobs::kLSHHashes.attributeMinimum())) ||
      failed(verifyAtLeast(*this, "bucket_size", getBucketSize(),
                           knobs::kLSHBucketSize.attributeMinimum())) ||
      failed(verifyScale(*this, getScale())) ||
      failed(verifyRowChunks(*this, getChunks(), getQueryKey())))
    return failure();
  if (failed(verifyLSHHashing(*this, getQueryKey(), getNHashes(),
                              getBucketSize(), getNBuckets(),
                              getFactorizedHash())))
    return failure();
  for (auto [name, gradient, ofName, of] :
       {std::make_tuple("result_grad", getResultGrad(), "result", getResult()),
        std::make_tuple("query_key_grad", getQueryKeyGrad(), "query_key",
                        getQueryKey()),
        std::make_tuple("value_grad", getValueGrad(), "value", getValue())})
    if (failed(verifyGradientOf(*this, name, gradient, ofName, of)))
      return failure();
  return success();
}

LogicalResult RoutedAttentionBackwardOp::verify() {
  if (failed(verifyRoutedAttention(
          *this, getQuery(), getKey(), getValue(), getResultGrad(),
          getCentroids(), getClusters(), getWindow(), getSeed(), getScale())))
    return failure();
  for (auto [name, gradient, ofName, of] :
       {std::make_tuple("query_grad", getQueryGrad(), "query", getQuery()),
        std::make_tuple("key_grad", getKeyGrad(), "key", getKey()),
        std::make_tuple("value_grad", getValueGrad(), "value", getValue())})
    if (failed(verifyGradientOf(*this, name, gradient, ofName, of)))
      return failure();
  return success();
}

LogicalResult RoutedCentroidUpdateOp::verify() {
  ShapeChecker check(*this);
  NamedTensor q("query", getQuery()), k("key", getKey()),
      c("centroids", getCentroids());
  if (failed(check.rank(q, 4, kAttentionLayout)) ||
      failed(check.rank(k, 4, kAttentionLayout)) ||
      failed(check.rank(c, 3, "[heads, clusters, head_dim]")) ||
      failed(check.elementType(k, q.elementType())) ||
      failed(check.elementType(c, q.elementType())) ||
      failed(check.shape(k, {q.dim(0), q.dim(1), k.dim(2), q.dim(3)})) ||
      failed(check.shape(c, {q.dim(1), c.dim(1), q.dim(3)})) ||
      failed(verifyGradientOf(*this, "result", getResult(), "centroids",
                              getCentroids())))
    return failure();
  double decay = getDecay().convertToDouble();
  if (!(decay >= 0.0 && decay <= 1.0))
    return emitOpError() << "expected decay in [0, 1], got "
                         << formatFloat(decay);
  return success();
}

LogicalResult EmbeddingBackwardOp::verify() {
  ShapeChecker check(*this);
  NamedTensor tokens("tokens", getTokens()), dy("result_grad", getResultGrad()),
      table("table_grad", getTableGrad());
  if (failed(check.rank(tokens, 2, "[batch, seq]")) ||
      failed(check.rank(table, 2, "[vocab, d_model]")) ||
      failed(check.elementType(dy, table.elementType())))
    return failure();
  return check.shape(dy, {tokens.dim(0), tokens.dim(1), table.dim(1)});
}

LogicalResult LayerNormBackwardOp::verify() {
  ShapeChecker check(*this);
  NamedTensor input("input", getInput()), gamma("gamma", getGamma());
  if (failed(check.minRank(input, 1, "[..., features]")) ||
      failed(check.elementType(gamma, input.elementType())) ||
      failed(check.shape(gamma, {input.dim(input.rank() - 1)})) ||
      failed(verifyGradientOf(*this, "result_grad", getResultGrad(), "input",
                              getInput())) ||
      failed(verifyGradientOf(*this, "input_grad", getInputGrad(), "input",
                              getInput())) ||
      failed(verifyGradientOf(*this, "gamma_grad", getGammaGrad(), "gamma",
                              getGamma())) ||
      failed(verifyGradientOf(*this, "beta_grad", getBetaGrad(), "gamma",
                              getGamma())))
    return failure();
  return verifyPositive(*this, "epsilon", getEpsilon());
}

LogicalResult LinearBackwardOp::verify() {
  ShapeChecker check(*this);
  NamedTensor input("input", getInput()), weight("weight", getWeight()),
      dy("result_grad", getResultGrad());
  if (failed(check.minRank(input, 1, "[..., in]")) ||
      failed(check.rank(weight, 2, "[in, out]")) ||
      failed(check.elementType(weight, input.elementType())) ||
      failed(check.elementType(dy, input.elementType())) ||
      failed(check.dim(weight, 0, "rows (input features)",
                       input.dim(input.rank() - 1))))
    return failure();
  SmallVector<int64_t> resultShape(input.type.getShape());
  resultShape.back() = weight.dim(1);
  if (failed(check.shape(dy, resultShape)) ||
      failed(verifyGradientOf(*this, "input_grad", getInputGrad(), "input",
                              getInput())) ||
      failed(verifyGradientOf(*this, "weight_grad", getWeightGrad(), "weight",
                              getWeight())))
    return failure();
  if (Value biasGrad = getBiasGrad()) {
    NamedTensor db("bias_grad", biasGrad);
    if (failed(check.elementType(db, input.elementType())) ||
        failed(check.shape(db, {weight.dim(1)})))
      return failure();
  }
  return success();
}

LogicalResult FeedForwardBackwardOp::verify() {
  ShapeChecker check(*this);
  NamedTensor input("input", getInput()), up("up_weight", getUpWeight()),
      upBias("up_bias", getUpBias()), down("down_weight", getDownWeight());
  if (failed(check.rank(input, 3, kActivationLayout)) ||
      failed(check.rank(up, 2, "[d_model, d_ff]")) ||
      failed(check.dim(up, 0, "rows (d_model)", input.dim(2))) ||
      failed(check.shape(upBias, {up.dim(1)})) ||
      failed(check.shape(down, {up.dim(1), input.dim(2)})))
    return failure();
  for (auto [name, gradient, ofName, of] :
       {std::make_tuple("result_grad", getResultGrad(), "input", getInput()),
        std::make_tuple("input_grad", getInputGrad(), "input", getInput()),
        std::make_tuple("up_weight_grad", getUpWeightGrad(), "up_weight",
                        getUpWeight()),
        std::make_tuple("up_bias_grad", getUpBiasGrad(), "up_bias",
                        getUpBias()),
        std::make_tuple("down_weight_grad", getDownWeightGrad(), "down_weight",
                        getDownWeight())})
    if (failed(verifyGradientOf(*this, name, gradient, ofName, of)))
      return failure();
  NamedTensor downBias("down_bias_grad", getDownBiasGrad());
  if (failed(check.elementType(downBias, input.elementType())) ||
      failed(check.shape(downBias, {input.dim(2)})))
    return failure();
  if (bool(getDownBias()) != bool(getOutput()))
    return emitOpError("has ")
           << (getDownBias() ? "a down_bias (with_output) but no output result"
                             : "an output result but no down_bias "
                               "(with_output)");
  if (getDownBias()) {
    NamedTensor bias("down_bias", getDownBias());
    if (failed(check.elementType(bias, input.elementType())) ||
        failed(check.shape(bias, {input.dim(2)})))
      return failure();
    if (getOutput().getType() != getInput().getType())
      return emitOpError("expected the output of the input's type ")
             << getInput().getType() << ", got " << getOutput().getType();
  }
  if (failed(verifyAtLeast(*this, "chunks", getChunks(),
                           knobs::kFeedForwardChunks.attributeMinimum())) ||
      failed(verifyAtMost(*this, "chunks", getChunks(), "seq", input.dim(1))))
    return failure();
  return success();
}

LogicalResult SoftmaxCrossEntropyBackwardOp::verify() {
  ShapeChecker check(*this);
  NamedTensor logits("logits", getLogits()), labels("labels", getLabels()),
      lossGrad("loss_grad", getLossGrad());
  if (failed(check.minRank(logits, 2, "[..., vocab]")) ||
      failed(check.shape(labels, logits.type.getShape().drop_back())) ||
      failed(check.elementType(lossGrad, logits.elementType())) ||
      failed(check.shape(lossGrad, {})) ||
      failed(verifyGradientOf(*this, "logits_grad", getLogitsGrad(), "logits",
                              getLogits())))
    return failure();
  if (Value weightsValue = getWeights()) {
    NamedTensor weights("weights", weightsValue);
    if (failed(check.elementType(weights, logits.elementType())) ||
        failed(check.shape(weights, labels.type.getShape())))
      return failure();
  }
  return success();
}

LogicalResult SplitHeadsOp::verify() {
  ShapeChecker check(*this);
  NamedTensor input("input", getInput()), result("result", getResult());
  int64_t heads = getHeads();
  if (failed(check.rank(input, 3, "[batch, seq, heads * head_dim]")) ||
      failed(verifyAtLeast(*this, "heads", heads, 1)) ||
      failed(check.elementType(result, input.elementType())))
    return failure();
  if (input.dim(2) % heads != 0)
    return emitOpError() << "expected input features (" << input.dim(2)
                         << ") to be a multiple of 'heads' (" << heads << ")";
  return check.shape(result,
                     {input.dim(0), heads, input.dim(1), input.dim(2) / heads});
}

LogicalResult MergeHeadsOp::verify() {
  ShapeChecker check(*this);
  NamedTensor input("input", getInput()), result("result", getResult());
  if (failed(check.rank(input, 4, kAttentionLayout)) ||
      failed(check.elementType(result, input.elementType())))
    return failure();
  return check.shape(result,
                     {input.dim(0), input.dim(2), input.dim(1) * input.dim(3)});
}

/// Every hyper-parameter operand is a 0-d tensor: a value the train step
/// reads at run time, so its range is the trainer's to check.
static LogicalResult
verifyHyperParameters(Operation *op,
                      ArrayRef<std::pair<StringRef, Value>> operands) {
  ShapeChecker check(op);
  for (auto [name, value] : operands)
    if (failed(check.shape(NamedTensor(name, value), {})))
      return failure();
  return success();
}

LogicalResult ClipByGlobalNormOp::verify() {
  if (getGradients().getTypes() != getClipped().getTypes())
    return emitOpError("expected one result of each gradient's type");
  if (getScale() &&
      failed(verifyHyperParameters(*this, {{"scale", getScale()}})))
    return failure();
  return verifyHyperParameters(*this, {{"max_norm", getMaxNorm()}});
}

LogicalResult SGDUpdateOp::verify() {
  return verifyHyperParameters(
      *this, {{"lr", getLr()}, {"weight_decay", getWeightDecay()}});
}

LogicalResult AdamUpdateOp::verify() {
  return verifyHyperParameters(*this, {{"step", getStep()},
                                       {"lr", getLr()},
                                       {"beta1", getBeta1()},
                                       {"beta2", getBeta2()},
                                       {"epsilon", getEpsilon()},
                                       {"weight_decay", getWeightDecay()}});
}
