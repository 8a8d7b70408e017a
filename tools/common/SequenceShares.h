//===- SequenceShares.h - a rank's share of one sequence --------*- C++ -*-===//
//
// Context parallelism (lcc --context-parallel=P) from the tools' side: the
// module's functions take and return each rank's share of the positions
// of the inputs and results it splits (lccModuleGetFunctionInputSplitDim),
// rank r chunks r and 2P - 1 - r of 2P equal chunks (zigzag: causal
// attention's work the same on every rank). The tools take whole tensors,
// as one process does: each rank cuts its share of every split input, and
// the ranks gather every split result whole for rank 0 to write. C API
// only.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_TOOLS_COMMON_SEQUENCESHARES_H
#define LCC_TOOLS_COMMON_SEQUENCESHARES_H

#include "lcc/runtime.h"

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace lcc::tools {

/// Copies share `part` of `parts` along `dim` of the C-order tensor
/// `whole` ([..., n, ...] of `elementBytes` elements; n a multiple of 2 *
/// parts) to `share`: chunks part and 2 * parts - 1 - part of 2 * parts.
void cutShare(const void *whole, const std::vector<int64_t> &wholeShape,
              size_t elementBytes, size_t dim, uint64_t parts, uint64_t part,
              void *share);

class SequenceShares {
public:
  /// The splits of the function named `function` of `module` for rank
  /// `rank` of a job, which joinJob checked is made of groups of the
  /// module's lccModuleGetContextParallel ranks: the rank holds share
  /// rank % P of its group's sequences.
  SequenceShares(LccModule module, const std::string &function, int rank);

  /// Whether the function takes or returns any share.
  bool splits() const;
  /// The dimension input `index` holds its share of the positions on, -1
  /// when whole.
  int getInputSplitDim(size_t index) const { return inputDims[index]; }
  /// The shape the whole of input `index` has, from its share's
  /// `signature`.
  std::vector<int64_t> wholeInputShape(size_t index,
                                       std::vector<int64_t> shape) const;
  /// `view`, input `index` whole as one process takes it, cut to this
  /// rank's share (held here); an error message (naming the input and
  /// `what`, its file) when its shape is not the whole one, or "".
  std::string cutInput(size_t index, const LccTensorView &signature,
                       LccTensorView &view, const std::string &what);
  /// Result `index`, this rank's share, gathered whole on every rank from
  /// the first group's shares (a collective every rank of the job calls):
  /// `result` becomes the whole (held here).
  std::string gatherResult(LccCommunicator communicator, size_t index,
                           LccTensorView &result);

private:
  std::vector<int> inputDims, outputDims;
  int rank, ranks; // this rank's share, of `ranks`
  std::deque<std::vector<uint8_t>> data;
  std::deque<std::vector<int64_t>> shapes;
};

} // namespace lcc::tools

#endif // LCC_TOOLS_COMMON_SEQUENCESHARES_H
