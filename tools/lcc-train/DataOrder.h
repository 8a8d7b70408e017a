//===- DataOrder.h - which rows each training step takes --------*- C++ -*-===//
//
// Training reads a stream of positions that runs through the data pass
// after pass, B positions a step; position p is row p mod N of pass
// p / N, in row order, or with --shuffle in that pass's own permutation of
// the rows, drawn from the seed. The position of the next step is all the
// state there is: a checkpoint records it, and a run resumed from the
// checkpoint continues the same order, so that k steps and then m resumed
// ones are the k + m steps of one run.
//
// The permutation of pass p for seed S (what a replay needs): Fisher-Yates,
// for i from N - 1 down to 1 swap rows i and j, j uniform in [0, i] from
// SplitMix64 numbers (rejecting those at or above the largest multiple of
// i + 1 that fits in 64 bits, then j = r mod (i + 1)), the generator's
// state starting at S ^ ((p + 1) * 0x9E3779B97F4A7C15).
//
//===----------------------------------------------------------------------===//

#ifndef LCC_TOOLS_LCC_TRAIN_DATAORDER_H
#define LCC_TOOLS_LCC_TRAIN_DATAORDER_H

#include <cstdint>
#include <optional>
#include <vector>

namespace lcc::train {

class DataOrder {
public:
  /// `rows` (N) and `batch` (B) at least 1, B <= N; `shuffleSeed` for
  /// --shuffle.
  DataOrder(uint64_t rows, uint64_t batch, std::optional<uint64_t> shuffleSeed);

  /// The rows of the next step's batch, in order; moves past them.
  const std::vector<uint64_t> &next();
  /// Whether the next batch begins a pass over the data (carried memories
  /// start again from zeros there).
  bool startsPass() const { return position % rows < batch; }

  /// The position of the next step's first row in the stream.
  uint64_t getPosition() const { return position; }
  void setPosition(uint64_t at) { position = at; }

private:
  /// The row at position `at`.
  uint64_t rowAt(uint64_t at);

  uint64_t rows, batch;
  std::optional<uint64_t> seed;
  uint64_t position = 0;
  // The permutation of the pass last asked for (shuffled only).
  std::optional<uint64_t> permutedPass;
  std::vector<uint64_t> permutation;
  std::vector<uint64_t> batchRows;
};

} // namespace lcc::train

#endif // LCC_TOOLS_LCC_TRAIN_DATAORDER_H
