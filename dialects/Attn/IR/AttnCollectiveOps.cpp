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
