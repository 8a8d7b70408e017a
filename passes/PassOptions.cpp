//===- PassOptions.cpp - range checks of the attention passes' options ----===//
//
// Each out-of-range option gets an error of its own that names it: a user
// who typed one bad value should not have to work out which of three it was.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

using namespace mlir;

LogicalResult lcc::checkOptionRanges(Operation *root, StringRef pass,
                                     ArrayRef<OptionRange> options) {
  for (const OptionRange &option : options) {
    if (option.value < option.minimum)
      return root->emitError()
             << pass << ": expected " << option.name << " >= " << option.minimum
             << ", got " << option.value;
    if (option.value > option.maximum)
      return root->emitError()
             << pass << ": expected " << option.name << " <= " << option.maximum
             << ", got " << option.value;
  }
  return success();
}
