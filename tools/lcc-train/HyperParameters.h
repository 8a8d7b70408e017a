//===- HyperParameters.h - the train step's run-time settings ---*- C++ -*-===//
//
// A module compiled with `lcc --train` keeps its optimizer's
// hyper-parameters as state parameters (`optimizer.lr`,
// `optimizer.weight_decay`, `optimizer.grad_clip`, and for Adam
// `optimizer.beta1`, `optimizer.beta2`, `optimizer.epsilon`) that start at
// the values lcc was given. lcc-train's flags set them before the first
// step, and the learning rate before every step as its schedule says: no
// recompiling to change them.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_TOOLS_LCC_TRAIN_HYPERPARAMETERS_H
#define LCC_TOOLS_LCC_TRAIN_HYPERPARAMETERS_H

#include "common/RuntimeTool.h"

#include "lcc/runtime.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lcc::train {

enum class Schedule { Constant, Linear, Cosine };

/// The learning rate of each step (from 1) of a run of `totalSteps`:
/// `warmup` steps rising linearly to `peak` (step s: peak * s / warmup),
/// then with p = (s - warmup) / (totalSteps - warmup) in (0, 1]:
///   constant  peak
///   linear    peak - (peak - minimum) * p
///   cosine    minimum + (peak - minimum) * (1 + cos(pi p)) / 2
/// so that the last step trains at `minimum` (linear, cosine).
class LearningRateSchedule {
public:
  LearningRateSchedule(Schedule schedule, double peak, double minimum,
                       uint64_t warmup, uint64_t totalSteps)
      : schedule(schedule), peak(peak), minimum(minimum), warmup(warmup),
        totalSteps(totalSteps) {}
  double at(uint64_t step) const;
  /// Whether every step trains at one rate (nothing to set per step).
  bool isConstant() const {
    return schedule == Schedule::Constant && warmup == 0;
  }

private:
  Schedule schedule;
  double peak, minimum;
  uint64_t warmup, totalSteps;
};

/// lcc-train's optimizer flags; unset ones leave the module's values.
struct OptimizerOptions {
  std::optional<double> lr, minLr, weightDecay, gradClip, beta1, beta2, epsilon;
  uint64_t warmup = 0;
  std::optional<uint64_t> totalSteps; ///< --total-steps
  Schedule schedule = Schedule::Constant;

  /// Takes `argument` if it is one of these flags (error in `error`).
  bool read(const tools::FlagArgument &argument, std::string &error);
  /// An error message when the flags contradict each other.
  std::string check() const;
  /// Whether any of them is given.
  bool any() const;
};

/// The hyper-parameters of one session.
class HyperParameters {
public:
  /// Finds them in `session` (fresh: before any weights file is bound, so
  /// that they hold the module's starting values).
  std::string find(LccModule module, LccSession session,
                   const std::string &modelPath);
  /// Whether the module reads its learning rate from `optimizer.lr`; a
  /// train_step built otherwise (a test's) has its rate in its code.
  bool hasLearningRate() const { return learningRate.has_value(); }
  /// Sets those `options` give, after the weights (or a checkpoint) are
  /// bound; an error message naming one the module lacks (--beta1 of an
  /// SGD module). Then the learning rate is `options.lr` or, unset, the
  /// module's starting value.
  std::string apply(const OptimizerOptions &options);
  /// The learning rate the schedule starts from.
  double getPeakLearningRate() const { return peakLr; }
  /// Sets the learning rate of the next step.
  std::string setLearningRate(double lr);
  /// Sets the factor of the gradients summed over a step's batches (1/K
  /// for --accumulate=K); a module without accumulation takes 1 only.
  std::string setGradientScale(double scale);

private:
  /// Index of `name` among the session's parameters, if it has it.
  std::optional<size_t> indexOf(const std::string &name) const;
  std::string set(const std::string &name, double value);

  LccModule module = nullptr;
  LccSession session = nullptr;
  std::string modelPath;
  std::optional<size_t> learningRate; ///< optimizer.lr's index
  double peakLr = 0;
};

} // namespace lcc::train

#endif // LCC_TOOLS_LCC_TRAIN_HYPERPARAMETERS_H
