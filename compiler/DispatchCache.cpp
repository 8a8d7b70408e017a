//===- DispatchCache.cpp - kernels found by their dispatch ----------------===//

#include "compiler/DispatchCache.h"

#include "compiler/KernelCache.h"
#include "compiler/SourceNames.h"
#include "dialects/Attn/IR/AttnKnownAttributes.h"
#include "passes/Passes.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>

using namespace mlir;

namespace {

/// Bumped when what an entry holds, or what decides a dispatch's kernel
/// besides the libraries below, changes.
constexpr llvm::StringLiteral kEntryFormat = "lcc-dispatch-kernel-1";

/// The builds that lower a dispatch to LLVM IR, beyond the code generator's
/// (codeGeneratorIdentity): MLIR's, lcc's passes and dialect.
llvm::StringRef loweringIdentity() {
  static const std::string identity =
      lcc::libraryIdentity(reinterpret_cast<const void *>(
          static_cast<std::unique_ptr<llvm::Module> (*)(
              Operation *, llvm::LLVMContext &, llvm::StringRef, bool)>(
              &translateModuleToLLVMIR))) +
      "/" +
      lcc::libraryIdentity(
          reinterpret_cast<const void *>(&lcc::populateLowerToLinalgPatterns)) +
      "/" +
      lcc::libraryIdentity(
          reinterpret_cast<const void *>(&lcc::attn::verifyKnownAttributes));
  return identity;
}

/// The dialects whose ops lcc's own stages and MLIR lower: a dispatch of
/// only these is lowered by the builds the key names. An op of another
/// (a plugin's, whose lowering its own library holds) leaves the dispatch
/// unkeyed, so that a rebuilt plugin never meets its old kernels.
constexpr llvm::StringLiteral kLoweredDialects[] = {
    "affine", "arith", "bufferization", "builtin", "cf",     "complex",
    "func",   "gpu",   "index",         "linalg",  "math",   "memref",
    "scf",    "tensor", "ub",           "vector"};

/// Whether the print of `dispatch` is all of its code: it names no other
/// symbol (a function it calls, a global it reads), holds no resource blob
/// (printed apart from the op) and has only ops of kLoweredDialects.
bool printsWhole(func::FuncOp dispatch) {
  WalkResult result = dispatch.getBody().walk([](Operation *op) {
    Dialect *dialect = op->getDialect();
    if (!dialect ||
        !llvm::is_contained(kLoweredDialects, dialect->getNamespace()))
      return WalkResult::interrupt();
    for (NamedAttribute attribute : op->getAttrs()) {
      bool named = false;
      attribute.getValue().walk([&](Attribute nested) {
        if (isa<SymbolRefAttr, DenseResourceElementsAttr>(nested))
          named = true;
      });
      if (named)
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
}

/// The dispatch's code as text: every flag that could drop part of it
/// (elided constants, skipped regions) is set here, whatever the command
/// line asked of the printer.
std::string printedCode(func::FuncOp dispatch) {
  OwningOpRef<func::FuncOp> copy = dispatch.clone();
  copy->setSymName("lcc_dispatch");
  for (llvm::StringRef name : lcc::kDispatchNamingAttributes)
    (*copy)->removeAttr(name);
  OpPrintingFlags flags;
  flags.printGenericOpForm()
      .useLocalScope()
      .enableDebugInfo(false)
      .skipRegions(false)
      .printValueUsers(false)
      .printUniqueSSAIDs(false)
      .elideLargeElementsAttrs(std::numeric_limits<int64_t>::max())
      .printLargeElementsAttrWithHex(16);
  std::string text;
  llvm::raw_string_ostream os(text);
  copy->print(os, flags);
  return text;
}

} // namespace

std::string lcc::dispatchKernelKey(func::FuncOp dispatch,
                                   llvm::StringRef target) {
  if (!printsWhole(dispatch))
    return "";
  std::string code = printedCode(dispatch);
  return kernelCacheKey({kEntryFormat, target, code, codeGeneratorIdentity(),
                         loweringIdentity()});
}

std::optional<lcc::EntryPointKernel>
lcc::lookupDispatchKernel(KernelCache &cache, llvm::StringRef key) {
  std::optional<std::string> entry = cache.lookup(key);
  if (!entry)
    return std::nullopt;
  SmallVector<llvm::StringRef> lines;
  llvm::StringRef(*entry).split(lines, '\n');
  // The symbol KernelObjects names a kernel by: lcc_kernel_<SHA-256>.
  llvm::StringRef symbol = lines.size() >= 2 ? lines[1] : "";
  if (lines[0] != kEntryFormat || !symbol.consume_front("lcc_kernel_") ||
      symbol.size() != 64 || !llvm::all_of(symbol, llvm::isHexDigit))
    return std::nullopt;
  EntryPointKernel kernel;
  kernel.symbol = lines[1].str();
  for (llvm::StringRef declaration : llvm::drop_begin(lines, 2))
    kernel.declarations.push_back(declaration.str());
  std::optional<std::string> object =
      cache.lookup(kernelObjectKey(kernel.symbol));
  if (!object || object->empty())
    return std::nullopt;
  kernel.object = std::move(*object);
  return kernel;
}

void lcc::storeDispatchKernel(KernelCache &cache, llvm::StringRef key,
                              const EntryPointKernel &kernel) {
  // One name a line.
  if (llvm::any_of(kernel.declarations, [](const std::string &name) {
        return name.empty() || name.find('\n') != std::string::npos;
      }))
    return;
  std::string entry = (kEntryFormat + "\n" + kernel.symbol).str();
  for (const std::string &declaration : kernel.declarations)
    entry += "\n" + declaration;
  cache.store(key, entry);
}
