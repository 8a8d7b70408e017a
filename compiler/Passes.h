//===- Passes.h - lcc compiler (codegen) passes -----------------*- C++ -*-===//

#ifndef LCC_COMPILER_PASSES_H
#define LCC_COMPILER_PASSES_H

#include "dialects/Attn/IR/Knobs.h"
#include "mlir/Pass/Pass.h"

namespace lcc {

/// Whether a linalg op is cheap enough to compute more than once: at most
/// 4 ops per element in its body (a scale, a cast, a broadcast, a fill;
/// not a mask or a score modifier). What elementwise fusion may recompute
/// in a consumer, and what rematerialization clones at each use.
bool isCheapPerElement(mlir::Operation *op);

#define GEN_PASS_DECL
#include "compiler/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/Passes.h.inc"

} // namespace lcc

#endif // LCC_COMPILER_PASSES_H
