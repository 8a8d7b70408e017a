//===- CountingSort.h - sorting tokens by a small key -----------*- C++ -*-===//
//
// LSH attention sorts tokens by bucket and routed attention sorts queries
// by cluster: a stable counting sort, since the keys are few and small.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_PASSES_LOWERTOLINALG_COUNTINGSORT_H
#define LCC_PASSES_LOWERTOLINALG_COUNTINGSORT_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace lcc::lowering {

/// The positions of a row in key order, their inverse (where each position
/// went), and where each key's run starts (numKeys + 1 values, the last
/// one the row's length).
struct CountingSort {
  mlir::Value positions, inverse, starts;
};

/// A stable counting sort of `keys` ([n] i32, each in [0, numKeys)) as
/// sequential loops.
CountingSort countingSort(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value keys, int64_t n, int64_t numKeys);

/// Each row (last dimension) of `keys` ([..., n] i32, each in
/// [0, numKeys)) sorted by countingSort, one row per scf.forall iteration;
/// with `withStarts`, also where each key's run starts.
struct SortedRows {
  mlir::Value positions, inverse; // [..., n] i32 each
  mlir::Value starts;             // [..., numKeys + 1] i32, or null
};
SortedRows sortRowsByKey(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value keys, int64_t numKeys,
                         bool withStarts = false);

} // namespace lcc::lowering

#endif // LCC_PASSES_LOWERTOLINALG_COUNTINGSORT_H
