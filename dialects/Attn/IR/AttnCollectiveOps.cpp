//===- AttnCollectiveOps.cpp - ops among the ranks of a job ---------------===//

#include "dialects/Attn/IR/AttnOps.h"
#include "dialects/Attn/IR/Verification.h"

using namespace mlir;
using namespace lcc::attn;
using namespace lcc::attn::detail;

LogicalResult AllReduceOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location>,
                                            ValueRange operands, DictionaryAttr,
                                            OpaqueProperties, RegionRange,
                                            SmallVectorImpl<Type> &inferred) {
  llvm::append_range(inferred, operands.getTypes());
  return success();
}

LogicalResult AllReduceOp::verify() {
  if (getValues().empty())
    return emitOpError("expected at least one tensor to reduce");
  for (Value operand : getValues())
    if (!cast<RankedTensorType>(operand.getType()).hasStaticShape())
      return emitOpError("expected statically shaped tensors, got ")
             << operand.getType();
  return success();
}

/// A tensor a collective can carry: its bytes known when compiling.
static LogicalResult verifyStaticShape(Operation *op, Type type) {
  if (!cast<RankedTensorType>(type).hasStaticShape())
    return op->emitOpError("expected a statically shaped tensor, got ") << type;
  return success();
}

LogicalResult AllToAllOp::verify() {
  if (cast<RankedTensorType>(getValue().getType()).getRank() == 0)
    return emitOpError("expected a leading dimension of one block per rank, "
                       "got a scalar");
  return verifyStaticShape(*this, getValue().getType());
}

LogicalResult RingShiftOp::verify() {
  return verifyStaticShape(*this, getValue().getType());
}

/// `block` is one of `blocks`' leading-dimension blocks: its leading
/// dimension 1, the rest the same.
static LogicalResult verifyRankBlock(Operation *op, Type blocks, Type block) {
  auto whole = cast<RankedTensorType>(blocks);
  auto one = cast<RankedTensorType>(block);
  if (failed(verifyStaticShape(op, whole)) ||
      failed(verifyStaticShape(op, one)))
    return failure();
  if (whole.getElementType() != one.getElementType() || whole.getRank() == 0 ||
      one.getRank() != whole.getRank() || one.getDimSize(0) != 1 ||
      one.getShape().drop_front() != whole.getShape().drop_front())
    return op->emitOpError("expected ")
           << one << " to be one leading-dimension block of " << whole;
  return success();
}

LogicalResult RankSliceOp::verify() {
  return verifyRankBlock(*this, getValue().getType(), getType());
}

LogicalResult RankPadOp::verify() {
  return verifyRankBlock(*this, getType(), getValue().getType());
}

/// A ring attention's operands and attributes; its share whole chunk
/// pairs (2P chunks of the sequence).
static LogicalResult verifyRingAttention(Operation *op, Value query, Value key,
                                         Value value, Value result,
                                         std::optional<APFloat> scale,
                                         int64_t ranks) {
  if (failed(lcc::attn::detail::verifyAttentionOperands(op, query, key, value, result,
                                             /*sameSeq=*/true)) ||
      failed(lcc::attn::detail::verifyScale(op, scale)))
    return failure();
  if (ranks < 1)
    return op->emitOpError("expected ranks >= 1, got ") << ranks;
  int64_t share = cast<RankedTensorType>(query.getType()).getDimSize(2);
  if (!ShapedType::isDynamic(share) && share % 2 != 0)
    return op->emitOpError("expected a share of two equal chunks of "
                           "positions, got ")
           << share << " positions";
  return success();
}

/// A ring attention's form: none (attn.attention's steps, no form
/// operands or attributes), or an attention form that attends at a query
/// offset, with no regions (the form's own attributes say what it hides).
static LogicalResult verifyRingForm(Operation *op,
                                    std::optional<StringRef> form,
                                    DictionaryAttr attributes,
                                    ValueRange formOperands,
                                    unsigned modifiers) {
  if (!form) {
    if (!formOperands.empty() || attributes)
      return op->emitOpError("expected form operands and form attributes "
                             "only with a form");
    return success();
  }
  std::optional<RegisteredOperationName> name =
      RegisteredOperationName::lookup(*form, op->getContext());
  std::optional<RegisteredOperationName> backward =
      RegisteredOperationName::lookup((*form + "_backward").str(),
                                      op->getContext());
  if (!name || !backward || !name->hasInterface<AttentionFormInterface>())
    return op->emitOpError("expected form to name an attention form with "
                           "a backward op, got '")
           << *form << "'";
  if (modifiers != 0)
    return op->emitOpError("expected no mask or score region with a form "
                           "(its attributes say what it hides)");
  return success();
}

LogicalResult RingAttentionOp::verify() {
  if (failed(verifyRingForm(*this, getForm(), getFormAttributesAttr(),
                            getFormOperands(), getModifiers().size())))
    return failure();
  if (failed(verifyRingAttention(*this, getQuery(), getKey(), getValue(),
                                 getResult(), getScale(), getRanks())) ||
      failed(
          lcc::attn::detail::verifyAttentionModifiers(*this, getModifiers())))
    return failure();
  if (Value lse = getLogsumexp()) {
    ShapeChecker check(*this);
    NamedTensor q("query", getQuery());
    return check.shape(NamedTensor("logsumexp", lse),
                       {q.dim(0), q.dim(1), q.dim(2)});
  }
  return success();
}

LogicalResult RingAttentionBackwardOp::verify() {
  if (failed(verifyRingForm(*this, getForm(), getFormAttributesAttr(),
                            getFormOperands(), getModifiers().size())))
    return failure();
  if (getFormOperandGrads().size() != getFormOperands().size())
    return emitOpError("expected a gradient per form operand, got ")
           << getFormOperandGrads().size() << " for "
           << getFormOperands().size();
  if (failed(verifyRingAttention(*this, getQuery(), getKey(), getValue(),
                                 getResult(), getScale(), getRanks())) ||
      failed(
          lcc::attn::detail::verifyAttentionModifiers(*this, getModifiers())))
    return failure();
  ShapeChecker check(*this);
  NamedTensor q("query", getQuery());
  if (failed(check.shape(NamedTensor("logsumexp", getLogsumexp()),
                         {q.dim(0), q.dim(1), q.dim(2)})))
    return failure();
  SmallVector<std::pair<Value, Value>> gradients = {
      {getResultGrad(), getResult()},
      {getQueryGrad(), getQuery()},
      {getKeyGrad(), getKey()},
      {getValueGrad(), getValue()}};
  for (auto [grad, of] : llvm::zip(getFormOperandGrads(), getFormOperands()))
    gradients.push_back({grad, of});
  for (auto [grad, of] : gradients)
    if (grad.getType() != of.getType())
      return emitOpError("expected each gradient of its value's type, got ")
             << grad.getType() << " for " << of.getType();
  return success();
}
