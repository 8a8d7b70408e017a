//===- DeduplicateDispatches.cpp - one kernel per distinct dispatch -------===//
//
// The layers of a model are identical, so outlining gives each layer its own
// copies of the same dispatches: a depth-2 reversible Reformer train step has
// about 1,500 dispatch functions with about 130 distinct bodies. Every one of
// them would be translated, optimised and code-generated (the CPU and the
// CUDA kernels alike), so the compile time grew with depth. As IREE
// deduplicates executables, the calls of dispatches with equal bodies are
// pointed at one of them; each call keeps the name and source position of the
// dispatch it was outlined as, for the host program's commands and profiles.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>

namespace lcc {
#define GEN_PASS_DEF_DEDUPLICATEDISPATCHES
#include "compiler/Passes.h.inc"
} // namespace lcc

using namespace mlir;

namespace {

/// The attributes of a dispatch that only name it: they differ between
/// copies of one kernel and are not part of its code.
constexpr llvm::StringLiteral kNamingAttributes[] = {"lcc.name",
                                                     "lcc.location"};

/// Every flag set, whatever the command line's --mlir-print-* options say:
/// elided constants or skipped regions would make different kernels equal.
OpPrintingFlags keyPrintingFlags() {
  constexpr int64_t kNoLimit = std::numeric_limits<int64_t>::max();
  return OpPrintingFlags()
      .printGenericOpForm()
      .useLocalScope()
      .enableDebugInfo(false)
      .skipRegions(false)
      .elideLargeElementsAttrs(kNoLimit)
      .elideLargeResourceString(kNoLimit)
      .printValueUsers(false)
      .printUniqueSSAIDs(false)
      .printNameLocAsPrefix(false);
}

/// The dispatch as text, without its names: equal for dispatches that
/// compile to the same kernel. The generic form prints every attribute
/// (the workgroup count, constants in full) and no locations; the local
/// scope numbers values from the dispatch, not from the module.
std::string structuralKey(func::FuncOp dispatch) {
  SmallVector<std::pair<StringRef, Attribute>> saved;
  for (StringRef name : kNamingAttributes)
    if (Attribute value = dispatch->getAttr(name)) {
      saved.push_back({name, value});
      dispatch->removeAttr(name);
    }
  StringAttr symbol = dispatch.getSymNameAttr();
  dispatch.setSymName("dispatch");
  std::string key;
  llvm::raw_string_ostream os(key);
  dispatch->print(os, keyPrintingFlags());
  dispatch.setSymNameAttr(symbol);
  for (auto [name, value] : saved)
    dispatch->setAttr(name, value);
  return key;
}

struct DeduplicateDispatchesPass
    : lcc::impl::DeduplicateDispatchesBase<DeduplicateDispatchesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::StringMap<func::FuncOp> firstWithKey;
    llvm::DenseMap<StringAttr, func::FuncOp> kept;
    SmallVector<func::FuncOp> duplicates;
    for (auto dispatch : module.getOps<func::FuncOp>()) {
      if (!dispatch->hasAttr("lcc.dispatch"))
        continue;
      auto [first, inserted] =
          firstWithKey.try_emplace(structuralKey(dispatch), dispatch);
      kept[dispatch.getSymNameAttr()] = first->second;
      if (!inserted)
        duplicates.push_back(dispatch);
    }
    SymbolTable symbols(module);
    module.walk([&](func::CallOp call) {
      auto it = kept.find(call.getCalleeAttr().getAttr());
      if (it == kept.end() || it->second.getSymNameAttr() == it->first)
        return;
      // The call keeps the names of what it computes.
      auto outlined = symbols.lookup<func::FuncOp>(call.getCallee());
      call->setAttr("lcc.name", outlined.getSymNameAttr());
      for (StringRef name : kNamingAttributes)
        if (Attribute value = outlined->getAttr(name))
          call->setAttr(name, value);
      call.setCallee(it->second.getSymName());
    });
    for (func::FuncOp duplicate : duplicates)
      duplicate.erase();
  }
};

} // namespace
