//===- lcc-opt.cpp - mlir-opt with the lcc dialects and passes ------------===//
//
// Runs any pipeline of lcc and upstream passes on attn IR; the lit suite
// tests every pass and verifier through it. `--load-plugin=LIB.so`
// (repeatable) loads attention forms and passes first, as lcc does.
//
//===----------------------------------------------------------------------===//

#include "compiler/Diagnostics.h"
#include "compiler/PluginLoader.h"
#include "compiler/Registration.h"
#include "passes/AttentionForms.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

#include <cstring>
#include <vector>

namespace {

/// Loads the plugins named by --load-plugin=LIB.so (or --load-plugin LIB.so)
/// and returns the other arguments: plugins must be loaded before the
/// command line that names their passes is parsed.
bool loadPlugins(int argc, char **argv, std::vector<char *> &rest) {
  for (int i = 0; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    if (i == 0 || (!arg.consume_front("--load-plugin") &&
                   !arg.consume_front("-load-plugin"))) {
      rest.push_back(argv[i]);
      continue;
    }
    std::string path;
    if (arg.consume_front("="))
      path = arg.str();
    else if (arg.empty() && i + 1 < argc)
      path = argv[++i];
    else {
      rest.push_back(argv[i]);
      continue;
    }
    std::string error;
    if (!lcc::loadPlugin(path, error)) {
      lcc::reportError("lcc-opt", error);
      return false;
    }
  }
  rest.push_back(nullptr);
  return true;
}

/// A diagnostic names its op; MLIR would append the op's whole text to
/// each (a remark on an attention block: 25 lines). lcc-opt prints it only
/// when asked: --mlir-print-op-on-diagnostic.
void printOpOnDiagnosticOnlyWhenAsked() {
  mlir::registerMLIRContextCLOptions();
  auto &options = llvm::cl::getRegisteredOptions();
  auto it = options.find("mlir-print-op-on-diagnostic");
  if (it != options.end())
    static_cast<llvm::cl::opt<bool> *>(it->second)->setInitialValue(false);
}

} // namespace

int main(int argc, char **argv) {
  // lcc's own attention forms, once and first: the ones plugins add come
  // after them.
  lcc::registerBuiltinAttentionForms();
  std::vector<char *> arguments;
  if (!loadPlugins(argc, argv, arguments))
    return 1;
  mlir::DialectRegistry registry;
  lcc::registerLccDialects(registry);
  lcc::registerLccPasses();
  printOpOnDiagnosticOnlyWhenAsked();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      static_cast<int>(arguments.size()) - 1, arguments.data(),
      "lcc optimizer driver: attn and upstream MLIR passes, and lcc's "
      "stages by name\n\n  --load-plugin=LIB.so  load a plugin's attention "
      "forms and passes first (repeatable)\n", registry));
}
