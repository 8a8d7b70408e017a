//===- CarriedInputs.h - lcc-train's segment state --------------*- C++ -*-===//
//
// --carry=RESULT:INPUT: a result of each step is the next step's input, on
// the device (a Transformer-XL's new memories feeding its next segment).
// Carried inputs take no --data file; they start at zeros, again whenever
// the data starts over (a new pass over the text), and at the start of each
// evaluation. The call's inputs interleave the batch's data with them.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_TOOLS_LCC_TRAIN_CARRIEDINPUTS_H
#define LCC_TOOLS_LCC_TRAIN_CARRIEDINPUTS_H

#include "TrainingData.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace lcc::train {

class CarriedInputs {
public:
  /// `carries` are (result, input) pairs of `step`; see check().
  CarriedInputs(const Signature &step,
                std::vector<std::pair<uint64_t, uint64_t>> carries);

  /// "" when every pair names a result after the loss and an input of the
  /// step, and no input is carried twice, else why not.
  std::string check() const;
  /// `step` without its carried inputs: what --data feeds.
  Signature dataSignature() const;
  /// Asks the runtime to carry the results of `function` (train_step, or
  /// the loss function that evaluates: the same arguments and results).
  LccStatus bind(LccFunction function) const;

  /// Every input of one call: `data` (the batch, in dataSignature()'s
  /// order) and the carried inputs, zeros when `fresh`, else the carried
  /// values (no data: the runtime keeps them). Valid until the next call.
  const LccTensorView *callInputs(const LccTensorView *data, bool fresh);
  size_t inputCount() const { return step.inputs.size(); }
  /// Whether no input is carried.
  bool empty() const { return carries.empty(); }

private:
  bool isCarried(size_t input) const;

  const Signature &step;
  std::vector<std::pair<uint64_t, uint64_t>> carries;
  std::vector<std::vector<uint8_t>> zeros; // per carried input
  std::vector<LccTensorView> views;
};

} // namespace lcc::train

#endif // LCC_TOOLS_LCC_TRAIN_CARRIEDINPUTS_H
