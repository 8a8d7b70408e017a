//===- AttnCollectiveOps.cpp - ops among the ranks of a job ---------------===//

#include "dialects/Attn/IR/AttnOps.h"

using namespace mlir;
using namespace lcc::attn;

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
    return op->emitOpError("expected a statically shaped tensor, got ")
           << type;
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
  if (failed(verifyStaticShape(op, whole)) || failed(verifyStaticShape(op, one)))
    return failure();
  if (whole.getRank() == 0 || one.getRank() != whole.getRank() ||
      one.getDimSize(0) != 1 ||
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
