//===- PassOptions.cpp - range checks of the attention passes' options ----===//
//
// Each out-of-range option gets an error of its own that names it: a user
// who typed one bad value should not have to work out which of three it was.
// Also the defaults that several forms' options share.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include <cmath>

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

int64_t lcc::nearestPowerOfTwoSqrt(int64_t n) {
  int64_t root = std::llround(std::sqrt(static_cast<double>(n)));
  int64_t power = 1;
  while (power * 2 <= root)
    power *= 2;
  return (root - power <= power * 2 - root) ? power : power * 2;
}
