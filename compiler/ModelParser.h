//===- ModelParser.h - reading a model file ---------------------*- C++ -*-===//
//
// Parses a model as mlir-opt would, and keeps what the parser otherwise
// forgets: the names the model gives its function arguments (%tokens), as
// `lcc.name` argument attributes that become the artifact's input names.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_COMPILER_MODELPARSER_H
#define LCC_COMPILER_MODELPARSER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace lcc {

/// The module of the source file in `sourceMgr` (ops outside a module are
/// wrapped in one, located at the file's first line), or null after the
/// parser or a verifier reported why. When an upstream op parser crashed
/// (and was recovered from), `*parserCrashed` is set: the operations it was
/// building are then unowned and `context` should not be used further; a
/// tool reports and exits.
mlir::OwningOpRef<mlir::ModuleOp> parseModel(const llvm::SourceMgr &sourceMgr,
                                             mlir::MLIRContext *context,
                                             bool *parserCrashed = nullptr);

} // namespace lcc

#endif // LCC_COMPILER_MODELPARSER_H
