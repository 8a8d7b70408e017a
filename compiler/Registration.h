//===- Registration.h - dialects and passes lcc tools load ------*- C++ -*-===//
//
// One place that says which dialects, extensions and passes the lcc tools
// know, so lcc and lcc-opt accept the same IR.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_COMPILER_REGISTRATION_H
#define LCC_COMPILER_REGISTRATION_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace lcc {

/// Adds attn and the upstream dialects the pipeline lowers through (func,
/// arith, math, tensor, linalg, scf, cf, affine, memref, bufferization,
/// vector, gpu, nvvm, llvm, and the rest of upstream), with their interface
/// models and extensions, and the dialects of every registered attention
/// form (register the built-in forms and load plugins first).
void registerLccDialects(mlir::DialectRegistry &registry);

/// Registers lcc's passes and the upstream passes they are composed with, so
/// lcc-opt can run each one by name.
void registerLccPasses();

} // namespace lcc

#endif // LCC_COMPILER_REGISTRATION_H
