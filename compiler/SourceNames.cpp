//===- SourceNames.cpp - what each op of a model is, in its own words -----===//

#include "compiler/SourceNames.h"

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace {

/// The dotted prefix every name in `names` shares ("layers.1.ff" of
/// "layers.1.ff.w1" and "layers.1.ff.b2"); for a single name, its parent.
std::string commonPrefix(ArrayRef<StringRef> names) {
  SmallVector<StringRef> prefix;
  names.front().split(prefix, '.');
  prefix.pop_back(); // a parameter's own name never names the op
  for (StringRef name : names.drop_front()) {
    SmallVector<StringRef> parts;
    name.split(parts, '.');
    size_t same = 0;
    while (same < prefix.size() && same < parts.size() &&
           prefix[same] == parts[same])
      ++same;
    prefix.resize(same);
  }
  return llvm::join(prefix, ".");
}

/// The names of the parameters `op` reads directly.
SmallVector<StringRef> parameterNames(Operation *op) {
  SmallVector<StringRef> names;
  for (Value operand : op->getOperands())
    if (auto param = operand.getDefiningOp<lcc::attn::ParamOp>())
      names.push_back(param.getName());
  return names;
}

/// An op's kind without its dialect: "feed_forward", "addf".
std::string kindOf(Operation *op) {
  return op->getName().stripDialect().str();
}

void nameOps(Block &block, const std::optional<std::string> &enclosing) {
  for (Operation &op : block) {
    if (isa<lcc::attn::ParamOp, lcc::attn::YieldOp, func::ReturnOp>(op))
      continue;
    std::optional<std::string> name = enclosing;
    if (!name) {
      SmallVector<StringRef> params = parameterNames(&op);
      std::string prefix = params.empty() ? "" : commonPrefix(params);
      name = prefix.empty() ? kindOf(&op) : prefix;
    }
    if (!isa<NameLoc>(op.getLoc()))
      op.setLoc(NameLoc::get(StringAttr::get(op.getContext(), *name),
                             op.getLoc()));
    // A block of ops (residual, reversible) names its ops one by one; an
    // op with parameters (multi-head attention) gives its body its name.
    std::optional<std::string> inner =
        parameterNames(&op).empty() ? std::nullopt : name;
    for (Region &region : op.getRegions())
      for (Block &nested : region)
        nameOps(nested, inner);
  }
}

} // namespace

void lcc::attachSourceNames(ModuleOp module) {
  for (auto func : module.getOps<func::FuncOp>())
    for (Block &block : func.getBody())
      nameOps(block, std::nullopt);
}

std::optional<std::string> lcc::sourceNameOf(Location loc) {
  std::optional<std::string> name;
  loc->walk([&](Location inner) {
    if (auto named = dyn_cast<NameLoc>(inner)) {
      name = named.getName().str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return name;
}

std::optional<std::string> lcc::sourcePositionOf(Location loc) {
  std::optional<std::string> position;
  loc->walk([&](Location inner) {
    auto file = dyn_cast<FileLineColLoc>(inner);
    if (!file)
      return WalkResult::advance();
    position = (file.getFilename().getValue() + ":" + Twine(file.getLine()) +
                ":" + Twine(file.getColumn()))
                   .str();
    return WalkResult::interrupt();
  });
  return position;
}

std::string lcc::symbolSafe(StringRef name) {
  std::string safe;
  for (char c : name)
    safe += llvm::isAlnum(c) || c == '_' ? c : '_';
  return safe;
}
