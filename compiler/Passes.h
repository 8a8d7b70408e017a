//===- Passes.h - lcc compiler (codegen) passes -----------------*- C++ -*-===//

#ifndef LCC_COMPILER_PASSES_H
#define LCC_COMPILER_PASSES_H

#include "mlir/Pass/Pass.h"

namespace lcc {

#define GEN_PASS_DECL
#include "compiler/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/Passes.h.inc"

} // namespace lcc

#endif // LCC_COMPILER_PASSES_H
