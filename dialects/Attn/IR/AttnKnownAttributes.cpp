//===- AttnKnownAttributes.cpp - attributes an attn op defines ------------===//

#include "dialects/Attn/IR/AttnKnownAttributes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace lcc::attn {
namespace {

/// The flags of attn ops by how they are written (AttnBase.td declares
/// them Attn_BoolFlag and Attn_UnitFlag): with a value, or bare.
constexpr llvm::StringLiteral kFlagsWithValue[] = {"causal"};
constexpr llvm::StringLiteral kBareFlags[] = {"shared_qk", "factorized_hash",
                                              "state"};

/// ", did you mean 'NAME'?" for the attribute of `known` nearest `name`
/// (close enough to be a slip: at most a third of its letters, or two,
/// changed), else the attributes the op has.
std::string suggestion(StringRef name, ArrayRef<StringAttr> known) {
  if (known.empty())
    return ": it takes no attributes";
  StringRef nearest;
  unsigned best = ~0u;
  for (StringAttr candidate : known) {
    unsigned distance = name.edit_distance(candidate.getValue());
    if (distance < best) {
      best = distance;
      nearest = candidate.getValue();
    }
  }
  if (best <= std::max<size_t>(2, name.size() / 3))
    return "; did you mean '" + nearest.str() + "'?";
  std::string list;
  for (StringAttr candidate : known)
    list += (list.empty() ? "'" : ", '") + candidate.getValue().str() + "'";
  return "; it has " + list;
}

} // namespace

LogicalResult verifyKnownAttributes(Operation *op) {
  ArrayRef<StringAttr> known = op->getName().getAttributeNames();
  // With properties, what is left in the attribute dictionary is exactly
  // what the op does not define.
  for (NamedAttribute attribute : op->getDiscardableAttrs()) {
    StringRef name = attribute.getName().getValue();
    if (name.contains('.'))
      continue; // a dialect's (lcc.recomputed), not the op's
    return op->emitOpError()
           << "has no attribute '" << name << "'" << suggestion(name, known);
  }
  auto inherent = [&](StringRef name) {
    return op->getInherentAttr(name).value_or(Attribute());
  };
  for (StringRef flag : kFlagsWithValue)
    if (llvm::is_contained(known, flag) &&
        isa_and_nonnull<UnitAttr>(inherent(flag)))
      return op->emitOpError()
             << "attribute '" << flag << "' needs a value: write '" << flag
             << " = true' (or leave it out for false)";
  for (StringRef flag : kBareFlags)
    if (llvm::is_contained(known, flag))
      if (auto value = dyn_cast_or_null<BoolAttr>(inherent(flag)))
        return op->emitOpError()
               << "attribute '" << flag << "' is a flag written bare: write '"
               << flag << "'"
               << (value.getValue() ? "" : " or leave it out (false)");
  return success();
}

} // namespace lcc::attn
