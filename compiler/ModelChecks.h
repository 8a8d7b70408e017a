//===- ModelChecks.h - what lcc can compile ---------------------*- C++ -*-===//
//
// Checks, before any lowering, that a verified module is within what lcc
// compiles: functions of statically shaped tensors (every dimension >= 1,
// below 2^31, at most 1 TiB, an artifact dtype) whose bodies use the attn
// dialect, arith/math, linalg and a few tensor ops. docs/user-guide.md lists
// the same rules.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_COMPILER_MODELCHECKS_H
#define LCC_COMPILER_MODELCHECKS_H

#include "mlir/IR/BuiltinOps.h"

namespace lcc {

/// Emits one error naming the first op or argument outside those rules.
mlir::LogicalResult checkModelIsCompilable(mlir::ModuleOp module);

} // namespace lcc

#endif // LCC_COMPILER_MODELCHECKS_H
