//===- ModelParser.cpp - reading a model file -----------------------------===//

#include "compiler/ModelParser.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/AsmParser/AsmParserState.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

namespace {

/// "tokens" for the SSA name "%tokens" the range covers; "" for a number.
StringRef argumentName(llvm::SMRange range) {
  if (!range.isValid())
    return "";
  StringRef text(range.Start.getPointer(),
                 range.End.getPointer() - range.Start.getPointer());
  if (!text.consume_front("%") || text.empty() ||
      llvm::all_of(text, [](char c) { return llvm::isDigit(c); }))
    return "";
  return text;
}

void recordArgumentNames(Block &parsed, const AsmParserState &state) {
  parsed.walk([&](func::FuncOp func) {
    if (func.isExternal())
      return;
    Block &entry = func.getBody().front();
    const AsmParserState::BlockDefinition *definition =
        state.getBlockDef(&entry);
    if (!definition)
      return;
    for (auto [i, argument] : llvm::enumerate(definition->arguments)) {
      StringRef name = argumentName(argument.loc);
      if (!name.empty() && !func.getArgAttr(i, "lcc.name"))
        func.setArgAttr(i, "lcc.name",
                        StringAttr::get(func.getContext(), name));
    }
  });
}

} // namespace

OwningOpRef<ModuleOp> lcc::parseModel(const llvm::SourceMgr &sourceMgr,
                                      MLIRContext *context,
                                      bool *parserCrashed) {
  if (parserCrashed)
    *parserCrashed = false;
  Block parsed;
  AsmParserState state;
  ParserConfig config(context);
  // Some upstream op parsers crash after reporting a syntax error (a
  // malformed `dimensions = [0` of linalg.broadcast dereferences the null
  // attribute it failed to parse). lcc must not crash on any input: the
  // parse runs where a crash is recovered from, and the error it reported
  // first is the one line the user sees.
  unsigned errors = 0;
  LogicalResult result = failure();
  {
    ScopedDiagnosticHandler counter(context, [&](Diagnostic &diagnostic) {
      if (diagnostic.getSeverity() == DiagnosticSeverity::Error)
        ++errors;
      return failure(); // and on to the tool's own handler
    });
    llvm::CrashRecoveryContext::Enable();
    llvm::CrashRecoveryContext recovery;
    if (!recovery.RunSafely([&] {
          result = parseAsmSourceFile(sourceMgr, &parsed, config, &state);
        })) {
      if (errors == 0)
        emitError(UnknownLoc::get(context))
            << "MLIR's parser crashed on this input without saying why (an "
               "upstream bug); check the model's syntax";
      if (parserCrashed)
        *parserCrashed = true;
      return {};
    }
  }
  if (failed(result))
    return {};
  recordArgumentNames(parsed, state);
  // An implicit module is placed at line 1, so that what is said of it
  // points into the file rather than at 0:0.
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  Location file =
      FileLineColLoc::get(context, buffer->getBufferIdentifier(), 1, 1);
  return detail::constructContainerOpForParserIfNecessary<ModuleOp>(
      &parsed, context, file);
}
