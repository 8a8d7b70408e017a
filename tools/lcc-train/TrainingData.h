//===- TrainingData.h - lcc-train's data and batches -------------*- C++
//-*-===//
//
// The .npy files of lcc-train's --data and --eval-data, one per argument of
// train_step, each [N, ...]: the argument's shape without its first (batch)
// dimension B. They are checked against the arguments once, when read, so
// that a wrong file is one message naming it, the argument, and the
// expected and actual dtype or shape; a batch is then B rows of every file
// (DataOrder.h says which). C API only, as the tool is.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_TOOLS_LCC_TRAIN_TRAININGDATA_H
#define LCC_TOOLS_LCC_TRAIN_TRAININGDATA_H

#include "common/RuntimeTool.h"
#include "common/SequenceShares.h"

#include "lcc/runtime.h"

#include <cstdint>
#include <string>
#include <vector>

namespace lcc::train {

using tools::formatShape;

/// The function that training calls.
constexpr const char *kTrainStep = "train_step";
constexpr const char *kAccumulateStep = "accumulate_step";

/// A name from a file in single quotes, escaped so that it stays on one
/// line (as the runtime quotes names in its own messages).
std::string quote(const std::string &text);

/// An argument or result of a function, as the module declares it.
struct Argument {
  std::string name;
  LccDType dtype;
  std::vector<int64_t> shape;
  uint64_t bytes;
};

/// What a function of the module takes and returns.
struct Signature {
  std::string name;
  std::vector<Argument> inputs;
  std::vector<Argument> outputs;
};

/// The signature of the function named `name`; false if there is none.
bool findSignature(LccModule module, const std::string &name,
                   Signature &signature);
/// "argument 1 'labels'".
std::string describeArgument(const Argument &argument, size_t index);

/// "" when `step` takes arguments that all have the same first dimension
/// B >= 1, the batch (a step takes B rows of every file), else why not.
/// loadDataset and Batcher need it.
std::string checkBatchDimension(const Signature &step);

/// The .npy files of one data set, checked against the arguments.
struct Dataset {
  tools::NpyFiles files;
  std::vector<uint64_t> rowBytes; // per file
  uint64_t rows = 0;
  /// Context parallelism: each file's rows cut to this rank's share of the
  /// positions (keepRankShares), which its view then shows.
  std::vector<std::vector<uint8_t>> shareBytes;
  std::vector<std::vector<int64_t>> shareShapes;
};

/// Context parallelism: every row of `dataset`'s files, read whole, cut to
/// this rank's share of the positions (`shares`, input i of the step fed
/// by file i).
void keepRankShares(Dataset &dataset, const tools::SequenceShares &shares,
                    uint64_t ranks, uint64_t rank);

/// Reads `paths` (named `flag` in messages: "--data", "--eval-data") and
/// checks each against the argument of `step` it feeds; returns an error
/// message or "".
std::string loadDataset(const std::vector<std::string> &paths, const char *flag,
                        const Signature &step, Dataset &dataset);

/// Batches of a dataset: B rows of every file. Consecutive rows are passed
/// as they lie in the files; others (a batch that wraps at the end, a
/// shuffled one) are gathered.
class Batcher {
public:
  Batcher(const Dataset &dataset, const Signature &step);
  uint64_t getBatchRows() const { return batch; }
  /// The inputs of the batch of `rows` (B of them, in order), valid until
  /// the next call.
  const LccTensorView *of(const std::vector<uint64_t> &rows);

private:
  const Dataset &dataset;
  const Signature &step;
  uint64_t batch;
  std::vector<std::vector<uint8_t>> staging;
  std::vector<LccTensorView> views;
};

/// B consecutive rows from `start`, wrapping after `rows` of them.
std::vector<uint64_t> consecutiveRows(uint64_t start, uint64_t batch,
                                      uint64_t rows);

/// "rows 8-11 of the --data files", "row 8 and rows 0-2 of ...", "rows 7,
/// 2, 9, 4 of ...": the rows of a batch, so that an error in one points at
/// the data.
std::string describeRows(const std::vector<uint64_t> &rows, const char *flag);

} // namespace lcc::train

#endif // LCC_TOOLS_LCC_TRAIN_TRAININGDATA_H
