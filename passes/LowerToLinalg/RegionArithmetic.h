//===- RegionArithmetic.h - defined integer arithmetic in regions -*- C++
//-*-===//
//
// A mask or score region is a user's program that runs inside the kernels,
// once per (query, key). Integer operations that LLVM leaves undefined for
// some inputs there would trap (x86's div by zero is SIGFPE) or, worse,
// fold to poison, which a mask's select may read as "visible". So before
// anything copies or evaluates a region, every such operation gets one
// defined result for every input, the results docs/masks.md states:
//
//   x / 0 = 0, x % 0 = x (every division and remainder, signed or not);
//   MIN / -1 = MIN and MIN % -1 = 0 (signed; wrapping, as -MIN does);
//   a shift by the width or more: 0 (shli, shrui), the sign (shrsi);
//   overflow flags (nsw, nuw) dropped: integer arithmetic wraps;
//   float to integer saturates at the type's range, NaN giving 0.
//
// Divisions by a constant that is neither 0 nor (signed) -1 are left as
// they are, so a table-friendly mask (a block size, a stride) is unchanged.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_PASSES_LOWERTOLINALG_REGIONARITHMETIC_H
#define LCC_PASSES_LOWERTOLINALG_REGIONARITHMETIC_H

#include "mlir/IR/Region.h"

namespace lcc::lowering {

/// Rewrites the operations of `region` (scalar arith and math ops) whose
/// result LLVM leaves undefined for some inputs into ones defined for all,
/// as the file comment says.
void defineRegionArithmetic(mlir::Region &region);

} // namespace lcc::lowering

#endif // LCC_PASSES_LOWERTOLINALG_REGIONARITHMETIC_H
