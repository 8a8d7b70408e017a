//===- TrainingPlot.h - lcc-train --plot: loss curves as SVG ----*- C++ -*-===//
//
// The loss of every step and the eval loss of every evaluation against the
// step (and the tokens trained so far), as one self-contained SVG file that
// any browser shows: no script, no external font or style.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_TOOLS_LCC_TRAIN_TRAININGPLOT_H
#define LCC_TOOLS_LCC_TRAIN_TRAININGPLOT_H

#include <cstdint>
#include <string>
#include <vector>

namespace lcc::train {

struct TrainingCurves {
  std::string title;      ///< the model's file name
  uint64_t firstStep = 1; ///< a resumed run's steps count on
  uint64_t tokensPerStep = 1;
  std::vector<double> losses; ///< one per step, from firstStep
  std::vector<uint64_t> evalSteps;
  std::vector<double> evalLosses;
};

/// The SVG text of `curves`.
std::string renderTrainingPlot(const TrainingCurves &curves);

} // namespace lcc::train

#endif // LCC_TOOLS_LCC_TRAIN_TRAININGPLOT_H
