//===- Diagnostics.h - one-line tool diagnostics ----------------*- C++ -*-===//
//
// The command-line contract (docs/design.md §6) wants every error on stderr
// as one line, `TOOL: error: FILE:LINE:COL: message`. This handler prints
// MLIR diagnostics that way instead of MLIR's multi-line source excerpts.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_COMPILER_DIAGNOSTICS_H
#define LCC_COMPILER_DIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSet.h"

namespace lcc {

/// While alive, prints every diagnostic of `context` to stderr as
/// `tool: severity: location: message`, one line each, and counts errors.
class OneLineDiagnosticHandler {
public:
  OneLineDiagnosticHandler(mlir::MLIRContext *context, llvm::StringRef tool);
  ~OneLineDiagnosticHandler();

  unsigned getNumErrors() const { return numErrors; }

private:
  mlir::MLIRContext *context;
  mlir::DiagnosticEngine::HandlerID id;
  std::string tool;
  unsigned numErrors = 0;
  /// The remarks and warnings printed so far: a model op that two functions
  /// hold (inlined from `forward` into `loss`) is told about once.
  llvm::StringSet<> printed;
};

/// Parses the command line with llvm::cl, printing its errors in the
/// one-line `tool: error: ...` form. Returns false on a bad command line.
bool parseCommandLine(int argc, char **argv, llvm::StringRef tool,
                      llvm::StringRef overview);

/// `text` as one line of a diagnostic: line breaks and tabs become spaces and
/// other control bytes \xNN, so that no text (a plugin's, a file's) can
/// start a line of its own that reads as another diagnostic.
std::string asOneLine(llvm::StringRef text);

/// Prints `tool: error: message` to stderr, as one line.
void reportError(llvm::StringRef tool, const llvm::Twine &message);

} // namespace lcc

#endif // LCC_COMPILER_DIAGNOSTICS_H
