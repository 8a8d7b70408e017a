//===- ModelParser.cpp - reading a model file -----------------------------===//

#include "compiler/ModelParser.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/AsmParser/AsmParserState.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringExtras.h"
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
                                      MLIRContext *context) {
  Block parsed;
  AsmParserState state;
  ParserConfig config(context);
  if (failed(parseAsmSourceFile(sourceMgr, &parsed, config, &state)))
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
