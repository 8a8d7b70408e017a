//===- lcc.cpp - the lcc compiler driver ----------------------------------===//
//
// lcc MODEL.mlir -o OUT [--emit=attn]
//
// Reads a model written in the attn dialect, verifies it and writes the
// requested stage. The command line is a contract (DESIGN.md §6): errors are
// one `lcc: error:` line on stderr and a non-zero exit.
//
//===----------------------------------------------------------------------===//

#include "compiler/Diagnostics.h"
#include "compiler/Registration.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {

constexpr llvm::StringLiteral kTool = "lcc";

/// What `--emit` asks for; each stage of the pipeline adds its value.
enum class EmitKind { Attn };

struct EmitChoice {
  llvm::StringLiteral name;
  EmitKind kind;
};
constexpr EmitChoice kEmitChoices[] = {{"attn", EmitKind::Attn}};

cl::OptionCategory lccCategory("lcc options");

cl::opt<std::string> inputFilename(cl::Positional, cl::desc("<model.mlir>"),
                                   cl::Required, cl::cat(lccCategory));

cl::opt<std::string> outputFilename("o",
                                    cl::desc("Output file ('-' for stdout)"),
                                    cl::value_desc("file"), cl::init("-"),
                                    cl::cat(lccCategory));

// A string rather than a cl::values enum: llvm::cl reports a bad enum value
// on its own, without the one-line `lcc: error:` form.
cl::opt<std::string> emitName(
    "emit", cl::desc("What to write: 'attn' (the verified model in the attn "
                     "dialect)"),
    cl::value_desc("stage"), cl::init("attn"), cl::cat(lccCategory));

std::optional<EmitKind> parseEmitKind(StringRef name) {
  for (const EmitChoice &choice : kEmitChoices)
    if (choice.name == name)
      return choice.kind;
  return std::nullopt;
}

void printVersion(llvm::raw_ostream &os) {
  os << "lcc " << LCC_VERSION << " (MLIR/LLVM " << LLVM_VERSION_STRING
     << ")\n";
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::SetVersionPrinter(printVersion);
  cl::HideUnrelatedOptions(lccCategory);
  if (!lcc::parseCommandLine(
          argc, argv, kTool,
          "lcc: compiles transformer models written in the attn dialect\n\n"
          "  Reads MODEL.mlir, verifies every op and writes the stage chosen "
          "by\n  --emit. Errors are printed as one 'lcc: error:' line "
          "each.\n"))
    return 1;

  std::optional<EmitKind> emitKind = parseEmitKind(emitName);
  if (!emitKind) {
    std::string choices;
    for (const EmitChoice &choice : kEmitChoices)
      choices += (choices.empty() ? "'" : ", '") + choice.name.str() + "'";
    lcc::reportError(kTool, "unknown --emit value '" + emitName +
                                "'; expected one of " + choices);
    return 1;
  }

  DialectRegistry registry;
  lcc::registerLccDialects(registry);
  MLIRContext context(registry);
  lcc::OneLineDiagnosticHandler diagnostics(&context, kTool);

  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFilename, &errorMessage);
  if (!input) {
    lcc::reportError(kTool, errorMessage);
    return 1;
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1; // The parser or a verifier reported why.

  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    lcc::reportError(kTool, errorMessage);
    return 1;
  }
  switch (*emitKind) {
  case EmitKind::Attn:
    module->print(output->os());
    output->os() << "\n";
    break;
  }
  if (output->os().has_error()) {
    lcc::reportError(kTool, "failed writing '" + outputFilename + "'");
    output->os().clear_error();
    return 1;
  }
  output->keep();
  return 0;
}
