//===- Random.h - A documented, reproducible random stream ----------------===//
//
// Test data must be reproducible from a printed seed on any machine, so the
// generator is spelled out here instead of relying on <random>'s
// distributions (whose output is implementation-defined):
//
//   nextU64:  splitmix64 (Steele, Lea, Flood 2014):
//               state += 0x9E3779B97F4A7C15; z = state;
//               z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
//               z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
//               return z ^ (z >> 31);
//   uniform:  (nextU64() >> 11) * 2^-53, in [0, 1).
//   normal:   Box-Muller from two uniforms, u1 first:
//               sqrt(-2 ln(1 - u1)) * cos(2 pi u2)
//             (the sine partner is discarded, so each normal costs exactly
//             two draws).
//   integer in [lo, hi): lo + floor(uniform() * (hi - lo)).
//
//===----------------------------------------------------------------------===//

#ifndef LCC_TEST_REFERENCE_RANDOM_H
#define LCC_TEST_REFERENCE_RANDOM_H

#include <cstdint>

namespace lcc::reference {

class SplitMix64 {
public:
  explicit SplitMix64(uint64_t seed) : state(seed) {}

  uint64_t nextU64();
  /// Uniform in [0, 1).
  double uniform();
  /// Uniform in [lo, hi).
  double uniform(double lo, double hi);
  /// Standard normal N(0, 1).
  double normal();
  /// Uniform integer in [lo, hi); needs lo < hi.
  int64_t integer(int64_t lo, int64_t hi);

private:
  uint64_t state;
};

} // namespace lcc::reference

#endif // LCC_TEST_REFERENCE_RANDOM_H
