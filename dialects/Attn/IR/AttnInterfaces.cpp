//===- AttnInterfaces.cpp - the interfaces and their shared helpers -------===//

#include "dialects/Attn/IR/AttnInterfaces.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

#include "dialects/Attn/IR/AttnInterfaces.cpp.inc"

SmallVector<Value> lcc::attn::withRowStatistics(OpBuilder &builder,
                                                Operation *op, Value query) {
  auto q = cast<RankedTensorType>(query.getType());
  OperationState state(op->getLoc(), op->getName());
  state.addOperands(op->getOperands());
  state.addAttributes(op->getAttrs());
  // The softmax's statistics are f32 whatever the operands' type.
  state.addTypes({op->getResult(0).getType(),
                  RankedTensorType::get(
                      {q.getDimSize(0), q.getDimSize(1), q.getDimSize(2)},
                      builder.getF32Type())});
  for (Region &region : op->getRegions())
    state.addRegion()->takeBody(region);
  Operation *saved = builder.create(state);
  return {saved->getResult(0)};
}

void lcc::attn::copyModifiers(MutableArrayRef<Region> modifiers,
                              Operation *into) {
  for (auto [from, to] : llvm::zip_equal(modifiers, into->getRegions())) {
    IRMapping mapping;
    from.cloneInto(&to, mapping);
  }
}

Value lcc::attn::splatLike(OpBuilder &builder, Location loc, Value like,
                           double value) {
  auto type = cast<RankedTensorType>(like.getType());
  return arith::ConstantOp::create(
      builder, loc, type,
      DenseElementsAttr::get(type,
                             FloatAttr::get(type.getElementType(), value)));
}
