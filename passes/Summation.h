//===- Summation.h - long float sums in blocks ------------------*- C++ -*-===//
//
// A float32 sum of N terms, one running sum, loses up to N ulps of its
// largest partial sums; summed in blocks and then the blocks' sums (as
// float32 frameworks' cascaded reductions do), about 2 sqrt(N). Over the
// 4096 positions of a sequence that is a gradient's 1e-6 against 1e-7.
// The linalg lowering sums positions so (TensorOps.h: columnSum,
// totalSum), and lcc-block-loop-sums the GPU kernels' long running sums.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_PASSES_SUMMATION_H
#define LCC_PASSES_SUMMATION_H

#include <cstdint>

namespace lcc {

/// The block a sum of `count` terms is cut into: the largest divisor of
/// `count` at most its square root (1: none, `count` prime or below 4).
inline int64_t summationBlock(int64_t count) {
  int64_t block = 1;
  for (int64_t d = 2; d * d <= count; ++d)
    if (count % d == 0)
      block = d;
  return block;
}

} // namespace lcc

#endif // LCC_PASSES_SUMMATION_H
