//===- PassOptions.cpp - range checks of the attention passes' options ----===//
//
// Each out-of-range option gets an error of its own that names it: a user
// who typed one bad value should not have to work out which of three it was.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

using namespace mlir;

LogicalResult lcc::checkOptionRanges(Operation *root, StringRef pass,
                                     ArrayRef<KnobValue> options) {
  for (const KnobValue &option : options) {
    std::string problem =
        checkKnob(option.knob, option.knob.option, option.value);
    if (!problem.empty())
      return root->emitError() << pass << ": " << problem;
  }
  return success();
}
