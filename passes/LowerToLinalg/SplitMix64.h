//===- SplitMix64.h - the compile-time random stream ------------*- C++ -*-===//
//
// splitmix64: the reproducible stream behind the LSH rotations and the
// routed k-means initialisation. A compiled model draws its randomness at
// compile time from its seed, so it behaves the same on every call and on
// every device.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_PASSES_LOWERTOLINALG_SPLITMIX64_H
#define LCC_PASSES_LOWERTOLINALG_SPLITMIX64_H

#include <cstdint>

namespace lcc::lowering {

struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
};

} // namespace lcc::lowering

#endif // LCC_PASSES_LOWERTOLINALG_SPLITMIX64_H
