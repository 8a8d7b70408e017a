//===- DeduplicateDispatches.cpp - one kernel per distinct dispatch -------===//
//
// The layers of a model are identical. Outlining calls one dispatch for the
// copies of an op it recognises, but not every copy is one there (an op
// reading one value twice where another reads two equal ones), and the
// canonicalizer makes more dispatches equal. Every dispatch left would be
// translated, optimised and code-generated (the CPU and the CUDA kernels
// alike), so the compile time would grow with depth. As IREE deduplicates
// executables, the calls of dispatches with equal bodies are pointed at one
// of them; each call keeps the name and source position of the dispatch it
// was outlined as, for the host program's commands and profiles.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "compiler/SourceNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/Hashing.h"

namespace lcc {
#define GEN_PASS_DEF_DEDUPLICATEDISPATCHES
#include "compiler/Passes.h.inc"
} // namespace lcc

using namespace mlir;

namespace {

/// Whether `attribute` of a dispatch is part of its code.
bool isCodeAttribute(NamedAttribute attribute, func::FuncOp dispatch) {
  StringRef name = attribute.getName().getValue();
  return name != dispatch.getSymNameAttrName().getValue() &&
         !llvm::is_contained(lcc::kDispatchNamingAttributes, name);
}

/// The attributes of `dispatch` that are part of its code (all but its
/// names), read once: a function's attribute dictionary is rebuilt from its
/// properties at each read.
SmallVector<NamedAttribute> codeAttributesOf(func::FuncOp dispatch) {
  SmallVector<NamedAttribute> kept;
  for (NamedAttribute attribute : dispatch->getAttrs())
    if (isCodeAttribute(attribute, dispatch))
      kept.push_back(attribute);
  return kept;
}

/// A hash of what the dispatch computes, as the upstream
/// duplicate-function-elimination pass hashes a function: its type, its
/// code attributes, and each op's name, attributes, properties and result
/// types with its operands numbered in the dispatch's order. Equal for
/// copies; a collision only costs an exact comparison.
llvm::hash_code structuralHash(func::FuncOp dispatch,
                               ArrayRef<NamedAttribute> codeAttributes) {
  llvm::hash_code hash = hash_value(dispatch.getFunctionType());
  for (NamedAttribute attribute : codeAttributes)
    hash = llvm::hash_combine(hash, attribute.getName(), attribute.getValue());
  llvm::DenseMap<Value, unsigned> numbers;
  auto number = [&](Value value) {
    return llvm::hash_value(
        numbers.try_emplace(value, numbers.size()).first->second);
  };
  for (BlockArgument argument : dispatch.getArguments())
    number(argument);
  dispatch.getBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument argument : block.getArguments())
          number(argument);
    hash = llvm::hash_combine(
        hash, OperationEquivalence::computeHash(
                  op, number, number, OperationEquivalence::IgnoreLocations));
  });
  return hash;
}

/// A dispatch kept as the one kernel of its body, with its code attributes.
struct KeptDispatch {
  func::FuncOp dispatch;
  SmallVector<NamedAttribute> codeAttributes;
};

/// Whether `dispatch` compiles to the same kernel as `kept`: the same type,
/// the same code attributes, and equivalent bodies (ops, attributes,
/// properties, types and uses alike; locations aside).
bool computeTheSame(const KeptDispatch &kept, func::FuncOp dispatch,
                    ArrayRef<NamedAttribute> codeAttributes) {
  func::FuncOp first = kept.dispatch;
  return first.getFunctionType() == dispatch.getFunctionType() &&
         ArrayRef<NamedAttribute>(kept.codeAttributes) == codeAttributes &&
         OperationEquivalence::isRegionEquivalentTo(
             &first.getBody(), &dispatch.getBody(),
             OperationEquivalence::IgnoreLocations);
}

struct DeduplicateDispatchesPass
    : lcc::impl::DeduplicateDispatchesBase<DeduplicateDispatchesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::DenseMap<llvm::hash_code, SmallVector<KeptDispatch, 1>> firsts;
    llvm::DenseMap<StringAttr, func::FuncOp> kept;
    SmallVector<func::FuncOp> duplicates;
    for (auto dispatch : module.getOps<func::FuncOp>()) {
      if (!dispatch->hasAttr("lcc.dispatch"))
        continue;
      SmallVector<NamedAttribute> codeAttributes = codeAttributesOf(dispatch);
      SmallVector<KeptDispatch, 1> &candidates =
          firsts[structuralHash(dispatch, codeAttributes)];
      auto first = llvm::find_if(candidates, [&](const KeptDispatch &c) {
        return computeTheSame(c, dispatch, codeAttributes);
      });
      if (first == candidates.end()) {
        candidates.push_back({dispatch, std::move(codeAttributes)});
        kept[dispatch.getSymNameAttr()] = dispatch;
      } else {
        kept[dispatch.getSymNameAttr()] = first->dispatch;
        duplicates.push_back(dispatch);
      }
    }
    SymbolTable symbols(module);
    auto pointAtKept = [&](func::CallOp call) {
      auto it = kept.find(call.getCalleeAttr().getAttr());
      if (it == kept.end() || it->second.getSymNameAttr() == it->first)
        return;
      // A call pointed here before (by an earlier run, or by outlining,
      // which calls a copy's first dispatch) already names what it
      // computes: the callee's names are another copy's.
      if (call->hasAttr("lcc.name")) {
        call.setCallee(it->second.getSymName());
        return;
      }
      // The call keeps the names of what it computes (set at once: each
      // attribute set alone rebuilds the call's dictionary).
      auto outlined = symbols.lookup<func::FuncOp>(call.getCallee());
      NamedAttrList attributes(call->getDiscardableAttrDictionary());
      attributes.set("lcc.name", outlined.getSymNameAttr());
      for (StringRef name : lcc::kDispatchNamingAttributes)
        if (Attribute value = outlined->getAttr(name))
          attributes.set(name, value);
      call->setDiscardableAttrs(attributes.getDictionary(call.getContext()));
      call.setCallee(it->second.getSymName());
    };
    // Only host programs call dispatches: their bodies need no walk.
    for (auto host : module.getOps<func::FuncOp>())
      if (!host->hasAttr("lcc.dispatch"))
        host.walk(pointAtKept);
    for (func::FuncOp duplicate : duplicates)
      duplicate.erase();
  }
};

} // namespace
