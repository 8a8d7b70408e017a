//===- ReductionAccumulators.h - reduction sums in registers ---*- C++ -*-===//
//
// A linalg reduction lowered to loops reads and writes its output element
// on every step (`acc = load out[i]; store f(acc, x), out[i]`). On a GPU
// block that output is shared memory: a column maximum over 64 keys then
// costs 192 shared-memory accesses instead of 65.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_COMPILER_REDUCTIONACCUMULATORS_H
#define LCC_COMPILER_REDUCTIONACCUMULATORS_H

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace lcc {

/// Carries the accumulators of `loop` and of the loops nested in it, innermost
/// first, in registers: an element the loop's body loads and then stores,
/// both at indices defined outside the loop, of a buffer nothing else in
/// the loop reads or writes (nor a view of the same buffer), is loaded
/// before the loop, passed through it as an iteration argument and stored
/// after it. The values each step computes are unchanged.
void carryAccumulatorsInRegisters(mlir::RewriterBase &rewriter,
                                  mlir::scf::ForOp loop);

} // namespace lcc

#endif // LCC_COMPILER_REDUCTIONACCUMULATORS_H
