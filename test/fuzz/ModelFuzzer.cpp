//===- ModelFuzzer.cpp - libFuzzer target: parse, verify, compile ---------===//
//
// The input is the text of a model. Whatever it holds, lcc parses it,
// verifies it, checks that it is compilable and compiles it to an artifact
// for the CPU, or reports errors: no crash, no hang, no runaway memory. The
// seed corpus is the repository's own models, so mutations stay near valid
// ones. Errors are expected and swallowed; only the process's fate counts.
//
//===----------------------------------------------------------------------===//

#include "compiler/ModelParser.h"
#include "compiler/Pipeline.h"
#include "compiler/Registration.h"
#include "passes/AttentionForms.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <memory>

using namespace mlir;

namespace {

/// One context for many inputs (registering every dialect is slow); made
/// anew now and then, since uniqued types and attributes accumulate in it.
std::unique_ptr<MLIRContext> &sharedContext() {
  static std::unique_ptr<MLIRContext> shared;
  return shared;
}

MLIRContext &context() {
  std::unique_ptr<MLIRContext> &shared = sharedContext();
  static unsigned uses = 0;
  if (!shared || ++uses % 256 == 0) {
    lcc::registerBuiltinAttentionForms();
    DialectRegistry registry;
    lcc::registerLccDialects(registry);
    shared = std::make_unique<MLIRContext>(registry);
    shared->disableMultithreading();
    shared->loadAllAvailableDialects();
  }
  return *shared;
}

/// Forgets the context without destroying it: what a crashed parser left in
/// it is unowned, and tearing it down could crash again.
void dropContext() { (void)sharedContext().release(); }

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // Models are text; a huge input only slows the search down.
  if (size > 64 * 1024)
    return 0;
  MLIRContext &ctx = context();
  ScopedDiagnosticHandler quiet(&ctx, [](Diagnostic &) { return success(); });
  // lcc's own path: parseModel recovers from a crash inside an upstream op
  // parser; the context that parser left half-built ops in is dropped.
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          StringRef(reinterpret_cast<const char *>(data), size), "model.mlir"),
      llvm::SMLoc());
  bool parserCrashed = false;
  OwningOpRef<ModuleOp> module =
      lcc::parseModel(sourceMgr, &ctx, &parserCrashed);
  if (parserCrashed)
    dropContext();
  if (!module)
    return 0;
  lcc::CompileOptions options;
  options.cpu = "x86-64"; // the same code on every machine
  // Every input compiled, and nothing left behind in the user's cache.
  options.kernelCache.enabled = false;
  (void)lcc::compile(*module, options);
  return 0;
}
