//===- CarriedInputs.cpp - lcc-train's segment state ----------------------===//

#include "CarriedInputs.h"

#include <algorithm>

using namespace lcc::train;

CarriedInputs::CarriedInputs(const Signature &step,
                             std::vector<std::pair<uint64_t, uint64_t>> carries)
    : step(step), carries(std::move(carries)), views(step.inputs.size()) {}

bool CarriedInputs::isCarried(size_t input) const {
  return std::any_of(carries.begin(), carries.end(),
                     [&](const auto &carry) { return carry.second == input; });
}

std::string CarriedInputs::check() const {
  std::vector<bool> seen(step.inputs.size(), false);
  for (const auto &[result, input] : carries) {
    std::string carry =
        "--carry=" + std::to_string(result) + ":" + std::to_string(input);
    if (result == 0)
      return carry + ": result 0 of " + kTrainStep +
             " is the loss; carry a later result (a new memory)";
    if (result >= step.outputs.size())
      return carry + ": " + kTrainStep + " has " +
             std::to_string(step.outputs.size()) + " results";
    if (input >= step.inputs.size())
      return carry + ": " + kTrainStep + " has " +
             std::to_string(step.inputs.size()) + " arguments";
    if (seen[input])
      return carry + ": " + describeArgument(step.inputs[input], input) +
             " is carried into twice";
    seen[input] = true;
    // Before any data is read: a wrong carry is named as such, not as a
    // data file that no longer fits the arguments left to feed.
    const Argument &from = step.outputs[result], &to = step.inputs[input];
    if (from.dtype != to.dtype || from.shape != to.shape)
      return "carrying result " + std::to_string(result) + " " +
             quote(from.name) + " to input " + std::to_string(input) + " " +
             quote(to.name) + ": their types differ, " +
             formatShape(from.shape) + " " + lccDTypeGetName(from.dtype) +
             " and " + formatShape(to.shape) + " " + lccDTypeGetName(to.dtype);
  }
  if (!carries.empty() && carries.size() == step.inputs.size())
    return std::string("every argument of ") + kTrainStep +
           " is carried; there is no data to feed it";
  return "";
}

Signature CarriedInputs::dataSignature() const {
  Signature data = step;
  data.inputs.clear();
  for (size_t i = 0; i < step.inputs.size(); ++i)
    if (!isCarried(i))
      data.inputs.push_back(step.inputs[i]);
  return data;
}

LccStatus CarriedInputs::bind(LccFunction function) const {
  for (const auto &[result, input] : carries)
    if (LccStatus status = lccFunctionCarryResult(function, result, input))
      return status;
  return nullptr;
}

const LccTensorView *CarriedInputs::callInputs(const LccTensorView *data,
                                               bool fresh) {
  size_t next = 0;
  zeros.resize(step.inputs.size());
  for (size_t i = 0; i < step.inputs.size(); ++i) {
    if (!isCarried(i)) {
      views[i] = data[next++];
      continue;
    }
    const Argument &argument = step.inputs[i];
    if (zeros[i].size() != argument.bytes)
      zeros[i].assign(argument.bytes, 0);
    LccTensorView &view = views[i];
    view.name = nullptr;
    view.dtype = argument.dtype;
    view.rank = argument.shape.size();
    view.shape = argument.shape.data();
    view.size = argument.bytes;
    view.data = fresh ? zeros[i].data() : nullptr;
  }
  return views.data();
}
