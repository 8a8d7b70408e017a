//===- AttnKnownAttributes.h - attributes an attn op defines ----*- C++ -*-===//
//
// A misspelled attribute would otherwise change a model silently: with
// properties, `{casual = true}` is kept as a discardable attribute nobody
// reads, and the op is not causal. Every attn op has this trait (Attn_Op in
// AttnBase.td): it refuses an attribute the op does not define, naming the
// nearest one it has, and a flag in the wrong spelling (`{causal}`,
// `{shared_qk = true}`), naming the right one. Attributes of a dialect
// (`lcc.recomputed`) are not the op's and pass.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_DIALECT_ATTN_IR_ATTNKNOWNATTRIBUTES_H
#define LCC_DIALECT_ATTN_IR_ATTNKNOWNATTRIBUTES_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpDefinition.h"

namespace lcc::attn {

/// The value of a flag as stored (Attn_BoolFlag, Attn_UnitFlag): true for
/// a unit attribute or `true`, false for `false` or none.
inline bool flagValue(mlir::Attribute attr) {
  if (auto value = llvm::dyn_cast_or_null<mlir::BoolAttr>(attr))
    return value.getValue();
  return attr != nullptr;
}

/// The trait's check: unknown attributes and flags in the wrong spelling.
mlir::LogicalResult verifyKnownAttributes(mlir::Operation *op);

template <typename ConcreteType>
class AttnKnownAttributes
    : public mlir::OpTrait::TraitBase<ConcreteType, AttnKnownAttributes> {
public:
  static mlir::LogicalResult verifyTrait(mlir::Operation *op) {
    return verifyKnownAttributes(op);
  }
};

} // namespace lcc::attn

#endif // LCC_DIALECT_ATTN_IR_ATTNKNOWNATTRIBUTES_H
