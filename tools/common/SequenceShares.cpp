//===- SequenceShares.cpp - a rank's share of one sequence ----------------===//

#include "common/SequenceShares.h"

#include "common/RuntimeTool.h"

#include <cstring>

namespace lcc::tools {
namespace {

/// Elements before `dim` (outer), and bytes of the dimensions after it
/// (inner), of a C-order tensor.
std::pair<uint64_t, uint64_t> aroundDim(const std::vector<int64_t> &shape,
                                        size_t dim, size_t elementBytes) {
  uint64_t outer = 1, inner = elementBytes;
  for (size_t d = 0; d < shape.size(); ++d)
    (d < dim ? outer : inner) *= d == dim ? 1 : uint64_t(shape[d]);
  return {outer, inner};
}

/// The chunk of 2P equal chunks of the positions that half `half` of rank
/// `part`'s share holds: chunks r and 2P - 1 - r (zigzag, as
/// passes/Parallel lays shares out).
uint64_t chunkOfShare(uint64_t parts, uint64_t part, int half) {
  return half == 0 ? part : 2 * parts - 1 - part;
}

} // namespace

void cutShare(const void *whole, const std::vector<int64_t> &wholeShape,
              size_t elementBytes, size_t dim, uint64_t parts, uint64_t part,
              void *share) {
  auto [outer, inner] = aroundDim(wholeShape, dim, elementBytes);
  uint64_t rows = uint64_t(wholeShape[dim]), chunk = rows / (2 * parts);
  const auto *from = static_cast<const uint8_t *>(whole);
  auto *to = static_cast<uint8_t *>(share);
  for (uint64_t o = 0; o < outer; ++o)
    for (int half = 0; half < 2; ++half)
      std::memcpy(to + (2 * o + uint64_t(half)) * chunk * inner,
                  from + (o * rows + chunkOfShare(parts, part, half) * chunk) *
                             inner,
                  chunk * inner);
}

SequenceShares::SequenceShares(LccModule module, const std::string &name,
                               int jobRank)
    : rank(jobRank % int(lccModuleGetContextParallel(module))),
      ranks(int(lccModuleGetContextParallel(module))) {
  for (size_t f = 0; f < lccModuleGetFunctionCount(module); ++f) {
    if (name != lccModuleGetFunctionName(module, f))
      continue;
    for (size_t i = 0; i < lccModuleGetFunctionInputCount(module, f); ++i)
      inputDims.push_back(lccModuleGetFunctionInputSplitDim(module, f, i));
    for (size_t i = 0; i < lccModuleGetFunctionOutputCount(module, f); ++i)
      outputDims.push_back(lccModuleGetFunctionOutputSplitDim(module, f, i));
  }
}

bool SequenceShares::splits() const {
  for (const std::vector<int> *dims : {&inputDims, &outputDims})
    for (int dim : *dims)
      if (dim >= 0)
        return true;
  return false;
}

std::vector<int64_t>
SequenceShares::wholeInputShape(size_t index,
                                std::vector<int64_t> shape) const {
  if (inputDims[index] >= 0)
    shape[size_t(inputDims[index])] *= ranks;
  return shape;
}

std::string SequenceShares::cutInput(size_t index,
                                     const LccTensorView &signature,
                                     LccTensorView &view,
                                     const std::string &what) {
  int dim = inputDims[index];
  if (dim < 0)
    return "";
  std::vector<int64_t> whole = wholeInputShape(
      index,
      std::vector<int64_t>(signature.shape, signature.shape + signature.rank));
  std::vector<int64_t> given(view.shape, view.shape + view.rank);
  if (given != whole)
    return what + " is " + formatShape(given) + ": each of the " +
           std::to_string(ranks) + " ranks takes its share of the whole " +
           formatShape(whole) + " (lcc --context-parallel)";
  std::vector<int64_t> &shape =
      shapes.emplace_back(signature.shape, signature.shape + signature.rank);
  std::vector<uint8_t> &bytes = data.emplace_back(signature.size);
  cutShare(view.data, whole, lccDTypeGetSize(view.dtype), size_t(dim),
           uint64_t(ranks), uint64_t(rank), bytes.data());
  view.shape = shape.data();
  view.data = bytes.data();
  view.size = bytes.size();
  return "";
}

std::string SequenceShares::gatherResult(LccCommunicator communicator,
                                         size_t index, LccTensorView &result) {
  int dim = outputDims[index];
  if (dim < 0)
    return "";
  // Every rank's share; the first group's make the whole.
  std::vector<uint8_t> every(result.size *
                             uint64_t(lccCommunicatorGetSize(communicator)));
  if (LccStatus status = lccCommunicatorAllGather(communicator, result.data,
                                                  result.size, every.data()))
    return takeMessage(status);
  std::vector<int64_t> &shape =
      shapes.emplace_back(result.shape, result.shape + result.rank);
  auto [outer, inner] =
      aroundDim(shape, size_t(dim), lccDTypeGetSize(result.dtype));
  uint64_t chunk = uint64_t(shape[size_t(dim)]) / 2;
  uint64_t parts = uint64_t(ranks), rows = 2 * chunk * parts;
  shape[size_t(dim)] *= ranks;
  // A job of several groups gathers each group's copy: the whole is one.
  std::vector<uint8_t> &whole = data.emplace_back(result.size * parts);
  for (uint64_t r = 0; r < parts; ++r)
    for (uint64_t o = 0; o < outer; ++o)
      for (int half = 0; half < 2; ++half)
        std::memcpy(whole.data() +
                        (o * rows + chunkOfShare(parts, r, half) * chunk) *
                            inner,
                    every.data() + r * result.size +
                        (2 * o + uint64_t(half)) * chunk * inner,
                    chunk * inner);
  result.shape = shape.data();
  result.data = whole.data();
  result.size = whole.size();
  return "";
}

} // namespace lcc::tools
