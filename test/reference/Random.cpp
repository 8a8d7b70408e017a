//===- Random.cpp - A documented, reproducible random stream --------------===//

#include "Random.h"

#include "Reference.h"

#include <cmath>

namespace lcc::reference {

uint64_t SplitMix64::nextU64() {
  state += 0x9E3779B97F4A7C15ull;
  uint64_t z = state;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double SplitMix64::uniform() {
  // The top 53 bits fill a double's mantissa exactly.
  return static_cast<double>(nextU64() >> 11) * 0x1.0p-53;
}

double SplitMix64::uniform(double lo, double hi) {
  return lo + (hi - lo) * uniform();
}

double SplitMix64::normal() {
  const double pi = 3.14159265358979323846;
  double u1 = uniform();
  double u2 = uniform();
  // 1 - u1 is in (0, 1], so the log is finite.
  return std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(2.0 * pi * u2);
}

int64_t SplitMix64::integer(int64_t lo, int64_t hi) {
  if (lo >= hi)
    throw ReferenceError("random integer: empty range [" + std::to_string(lo) +
                         ", " + std::to_string(hi) + ")");
  double span = static_cast<double>(hi - lo);
  int64_t offset = static_cast<int64_t>(std::floor(uniform() * span));
  // Rounding of uniform() * span can reach span itself for huge spans.
  if (offset >= hi - lo)
    offset = hi - lo - 1;
  return lo + offset;
}

} // namespace lcc::reference
