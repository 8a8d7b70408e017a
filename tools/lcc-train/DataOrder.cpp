//===- DataOrder.cpp - which rows each training step takes ----------------===//

#include "DataOrder.h"

#include <numeric>
#include <utility>

namespace lcc::train {
namespace {

/// Steele, Lea and Flood's SplitMix64: a 64-bit state, one number a step.
uint64_t splitMix64(uint64_t &state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// A uniform number in [0, bound), by rejection: no modulo bias.
uint64_t uniformBelow(uint64_t &state, uint64_t bound) {
  uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
  for (;;) {
    uint64_t r = splitMix64(state);
    if (r < limit)
      return r % bound;
  }
}

} // namespace

DataOrder::DataOrder(uint64_t rows, uint64_t batch,
                     std::optional<uint64_t> shuffleSeed)
    : rows(rows), batch(batch), seed(shuffleSeed), batchRows(batch) {}

uint64_t DataOrder::rowAt(uint64_t at) {
  uint64_t pass = at / rows, row = at % rows;
  if (!seed)
    return row;
  if (permutedPass != pass) {
    permutation.resize(rows);
    std::iota(permutation.begin(), permutation.end(), uint64_t(0));
    uint64_t state = *seed ^ ((pass + 1) * 0x9E3779B97F4A7C15ull);
    for (uint64_t i = rows - 1; i > 0; --i)
      std::swap(permutation[i], permutation[uniformBelow(state, i + 1)]);
    permutedPass = pass;
  }
  return permutation[row];
}

const std::vector<uint64_t> &DataOrder::next() {
  for (uint64_t i = 0; i < batch; ++i)
    batchRows[i] = rowAt(position + i);
  position += batch;
  return batchRows;
}

} // namespace lcc::train
