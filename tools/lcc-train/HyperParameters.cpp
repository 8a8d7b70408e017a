//===- HyperParameters.cpp - the train step's run-time settings
//------------===//

#include "HyperParameters.h"

#include <cmath>

using namespace lcc::tools;

namespace lcc::train {

namespace {

constexpr const char *kPrefix = "optimizer.";

/// Each flag and the hyper-parameter it sets.
struct HyperParameterFlag {
  const char *flag;
  const char *name; ///< Without kPrefix.
  std::optional<double> OptimizerOptions::*value;
};

constexpr HyperParameterFlag kHyperParameterFlags[] = {
    {"--weight-decay", "weight_decay", &OptimizerOptions::weightDecay},
    {"--grad-clip", "grad_clip", &OptimizerOptions::gradClip},
    {"--beta1", "beta1", &OptimizerOptions::beta1},
    {"--beta2", "beta2", &OptimizerOptions::beta2},
    {"--epsilon", "epsilon", &OptimizerOptions::epsilon}};

std::string formatReal(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

} // namespace

double LearningRateSchedule::at(uint64_t step) const {
  if (step <= warmup)
    return peak * double(step) / double(warmup);
  if (schedule == Schedule::Constant || totalSteps <= warmup)
    return peak;
  double progress =
      std::min(1.0, double(step - warmup) / double(totalSteps - warmup));
  if (schedule == Schedule::Linear)
    return peak - (peak - minimum) * progress;
  const double pi = 3.14159265358979323846;
  return minimum + (peak - minimum) * (1.0 + std::cos(pi * progress)) / 2.0;
}

bool OptimizerOptions::read(const FlagArgument &argument, std::string &error) {
  const std::string &flag = argument.flag, &value = argument.value;
  if (flag == "--schedule") {
    if (value == "constant")
      schedule = Schedule::Constant;
    else if (value == "linear")
      schedule = Schedule::Linear;
    else if (value == "cosine")
      schedule = Schedule::Cosine;
    else
      error = "unknown --schedule value '" + value +
              "'; expected 'constant', 'linear' or 'cosine'";
    return true;
  }
  if (flag == "--warmup") {
    warmup = argument.count;
    return true;
  }
  if (flag == "--total-steps") {
    totalSteps = argument.count;
    return true;
  }
  double real = argument.real;
  auto expect = [&](bool valid, const char *range) {
    if (!valid)
      error = flag + " must be " + range + ", got " + value;
  };
  if (flag == "--lr") {
    lr = real;
    expect(real > 0, "> 0");
  } else if (flag == "--min-lr") {
    minLr = real;
    expect(real >= 0, ">= 0");
  } else if (flag == "--weight-decay") {
    weightDecay = real;
    expect(real >= 0, ">= 0");
  } else if (flag == "--grad-clip") {
    gradClip = real;
    expect(real >= 0, ">= 0 (0 turns clipping off)");
  } else if (flag == "--beta1" || flag == "--beta2") {
    (flag == "--beta1" ? beta1 : beta2) = real;
    expect(real >= 0 && real < 1, "in [0, 1)");
  } else if (flag == "--epsilon") {
    epsilon = real;
    expect(real > 0, "> 0");
  } else {
    return false;
  }
  return true;
}

bool OptimizerOptions::any() const {
  return lr || minLr || weightDecay || gradClip || beta1 || beta2 || epsilon ||
         warmup || totalSteps || schedule != Schedule::Constant;
}

std::string OptimizerOptions::check() const {
  if (minLr && schedule == Schedule::Constant)
    return "--min-lr is where --schedule=linear or cosine ends; the "
           "constant schedule has none";
  if (minLr && lr && *minLr > *lr)
    return "--min-lr=" + formatReal(*minLr) +
           " is above --lr=" + formatReal(*lr) +
           "; the schedule decays from --lr to --min-lr";
  return "";
}

std::optional<size_t> HyperParameters::indexOf(const std::string &name) const {
  size_t count = lccModuleGetParameterCount(module);
  for (size_t i = 0; i < count; ++i) {
    LccTensorView signature;
    lccModuleGetParameter(module, i, &signature);
    if (name == signature.name && lccModuleIsStateParameter(module, i))
      return i;
  }
  return std::nullopt;
}

std::string HyperParameters::find(LccModule module, LccSession session,
                                  const std::string &modelPath) {
  this->module = module;
  this->session = session;
  this->modelPath = modelPath;
  learningRate = indexOf(std::string(kPrefix) + "lr");
  if (!learningRate)
    return "";
  LccTensorView value;
  if (LccStatus status = lccSessionGetParameter(session, *learningRate, &value))
    return takeMessage(status);
  peakLr = lccTensorGetElement(&value, 0);
  return "";
}

std::string HyperParameters::set(const std::string &name, double value) {
  float element = float(value);
  int64_t noDims = 0;
  LccTensorView view = {nullptr, LCC_DTYPE_F32, 0,
                        &noDims, &element,      sizeof(element)};
  std::string full = kPrefix + name;
  if (LccStatus status = lccSessionBindParameter(session, full.c_str(), &view))
    return takeMessage(status);
  return "";
}

std::string HyperParameters::apply(const OptimizerOptions &options) {
  if (!learningRate) {
    if (options.any())
      return modelPath +
             " has no optimizer.lr: its train_step has its hyper-parameters "
             "in its code (compile it with this lcc --train to set them)";
    return "";
  }
  for (const HyperParameterFlag &entry : kHyperParameterFlags) {
    const std::optional<double> &value = options.*entry.value;
    if (!value)
      continue;
    if (!indexOf(std::string(kPrefix) + entry.name))
      return std::string(entry.flag) + ": " + modelPath + " has no " +
             entry.name +
             " (its optimizer, chosen by lcc --optimizer, does not use it)";
    std::string error = set(entry.name, *value);
    if (!error.empty())
      return error;
  }
  if (options.lr)
    peakLr = *options.lr;
  return setLearningRate(peakLr);
}

std::string HyperParameters::setLearningRate(double lr) {
  return set("lr", lr);
}

std::string HyperParameters::setGradientScale(double scale) {
  if (!indexOf(std::string(kPrefix) + "gradient_scale"))
    return scale == 1.0 ? "" : "--accumulate: " + modelPath +
           " has no optimizer.gradient_scale: compile it with lcc --train "
           "--accumulate-gradients";
  return set("gradient_scale", scale);
}

} // namespace lcc::train
