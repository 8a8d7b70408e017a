//===- GradientCheck.cpp - Finite-difference gradients of a reference loss ===//

#include "GradientCheck.h"

#include "Graph.h"
#include "Json.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <numeric>

namespace lcc::reference {

LossFunction graphLoss(const JsonValue &spec, std::vector<Tensor> inputs,
                       const Weights &base) {
  auto graph = std::make_shared<const JsonValue>(spec);
  auto args = std::make_shared<const std::vector<Tensor>>(std::move(inputs));
  auto frozen = std::make_shared<FrozenValues>();
  runGraph(*graph, *args, base, {}, frozen.get());
  return [graph, args, frozen](const Weights &weights, const std::string &) {
    std::vector<Tensor> outputs =
        runGraph(*graph, *args, weights, {}, frozen.get());
    if (outputs.empty() || outputs[0].rank() != 0)
      throw ReferenceError(
          "gradient check: the graph's first output must be a 0-d loss, got " +
          (outputs.empty() ? std::string("no output")
                           : shapeToString(outputs[0].shape)));
    return outputs[0].data[0];
  };
}

namespace {

/// What a model loss keeps between evaluations.
struct StagedLoss {
  std::vector<ModelStage> stages;
  /// inputs[i]: the activations entering stage i at the base weights.
  std::vector<std::vector<Tensor>> inputs;
  /// The index of the first stage that reads each parameter.
  std::map<std::string, size_t> firstStage;
  Tensor labels;
  std::optional<Tensor> positionWeights;
  double baseLoss = 0;

  double loss(const std::vector<Tensor> &logits) const {
    return softmaxCrossEntropy(logits.at(0), labels,
                               positionWeights ? &*positionWeights : nullptr)
        .data[0];
  }
};

} // namespace

LossFunction modelLoss(std::vector<ModelStage> stages, const Weights &weights,
                       const Tensor &tokens, const Tensor &labels,
                       std::optional<Tensor> positionWeights) {
  auto state = std::make_shared<StagedLoss>();
  state->labels = labels;
  state->positionWeights = std::move(positionWeights);
  std::vector<Tensor> activations{tokens};
  for (size_t i = 0; i < stages.size(); ++i) {
    state->inputs.push_back(activations);
    activations = stages[i].run(weights, activations);
    for (const std::string &name : stages[i].params)
      state->firstStage.emplace(name, i); // keeps the first
  }
  state->baseLoss = state->loss(activations);
  state->stages = std::move(stages);

  return [state](const Weights &moved, const std::string &changed) {
    auto first = state->firstStage.find(changed);
    if (first == state->firstStage.end())
      return state->baseLoss; // no stage reads it
    std::vector<Tensor> rerun = state->inputs[first->second];
    for (size_t i = first->second; i < state->stages.size(); ++i)
      rerun = state->stages[i].run(moved, rerun);
    return state->loss(rerun);
  };
}

namespace {

/// The entry of a parameter that a finite difference moves; puts the value
/// back on every exit, exceptions included, so the weights stay pure.
class Perturbation {
public:
  Perturbation(Weights &weights, const std::string &name, int64_t entry) {
    auto it = weights.find(name);
    if (it == weights.end())
      throw ReferenceError("finite difference: no parameter named '" + name +
                           "'");
    if (entry < 0 || entry >= it->second.size())
      throw ReferenceError("finite difference: entry " + std::to_string(entry) +
                           " is outside the " +
                           std::to_string(it->second.size()) + " entries of '" +
                           name + "'");
    value = &it->second.data[static_cast<size_t>(entry)];
    original = *value;
  }
  ~Perturbation() { *value = original; }
  Perturbation(const Perturbation &) = delete;
  Perturbation &operator=(const Perturbation &) = delete;

  double *value;
  double original;
};

void checkStep(double step) {
  if (!(step > 0) || !std::isfinite(step))
    throw ReferenceError("finite difference: the step must be a positive "
                         "number");
}

} // namespace

double finiteDifference(const LossFunction &loss, Weights &weights,
                        const std::string &name, int64_t entry, double step) {
  checkStep(step);
  Perturbation moved(weights, name, entry);
  double p = moved.original;
  double h = step * std::max(1.0, std::fabs(p));
  double up = p + h, down = p - h;
  *moved.value = up;
  double lossUp = loss(weights, name);
  *moved.value = down;
  double lossDown = loss(weights, name);
  return (lossUp - lossDown) / (up - down);
}

LocalDifferences localDifferences(const LossFunction &loss, Weights &weights,
                                  const std::string &name, int64_t entry,
                                  double center, double step) {
  checkStep(step);
  Perturbation moved(weights, name, entry);
  double p = moved.original;
  double h = step * std::max(1.0, std::fabs(p));
  auto lossAt = [&](double value) {
    *moved.value = value;
    return loss(weights, name);
  };
  double up = p + h, down = p - h, upHalf = p + h / 2, downHalf = p - h / 2;
  double lossUp = lossAt(up), lossDown = lossAt(down);
  double lossUpHalf = lossAt(upHalf), lossDownHalf = lossAt(downHalf);
  LocalDifferences d;
  d.full = (lossUp - lossDown) / (up - down);
  d.half = (lossUpHalf - lossDownHalf) / (upHalf - downHalf);
  double curvature = lossUp - 2 * center + lossDown;
  double halfCurvature = lossUpHalf - 2 * center + lossDownHalf;
  d.curvatureMismatch = (curvature - 4 * halfCurvature) / h;
  double largest =
      std::max({std::fabs(center), std::fabs(lossUp), std::fabs(lossDown),
                std::fabs(lossUpHalf), std::fabs(lossDownHalf)});
  d.roundingNoise = 32 * std::numeric_limits<double>::epsilon() * largest / h;
  return d;
}

bool isSmooth(const LocalDifferences &d, double rtol, double scale) {
  double derivative =
      std::max({scale, std::fabs(d.full), std::fabs(d.half), 1e-12});
  double tolerance = std::max(0.25 * rtol * derivative, d.roundingNoise);
  return std::fabs(d.half - d.full) <= tolerance &&
         std::fabs(d.curvatureMismatch) <= tolerance;
}

std::vector<LocalDifferences>
differencesAroundKinks(const LossFunction &loss, Weights &weights,
                       const std::string &name, int64_t entry, double center,
                       double step, double rtol, double scale) {
  std::vector<LocalDifferences> tries = {
      localDifferences(loss, weights, name, entry, center, step)};
  for (int shrink = 0;
       shrink < kKinkStepShrinks && !isSmooth(tries.back(), rtol, scale);
       ++shrink) {
    step /= kKinkStepShrinkFactor;
    tries.push_back(localDifferences(loss, weights, name, entry, center, step));
  }
  return tries;
}

const LocalDifferences *firstSmooth(const std::vector<LocalDifferences> &tries,
                                    double rtol, double scale) {
  for (const LocalDifferences &d : tries)
    if (isSmooth(d, rtol, scale))
      return &d;
  return nullptr;
}

Tensor finiteDifferenceGradient(const LossFunction &loss, Weights &weights,
                                const std::string &name, double step) {
  auto it = weights.find(name);
  if (it == weights.end())
    throw ReferenceError("finite difference: no parameter named '" + name +
                         "'");
  Tensor gradient(it->second.shape);
  for (int64_t i = 0; i < gradient.size(); ++i)
    gradient.data[i] = finiteDifference(loss, weights, name, i, step);
  return gradient;
}

std::vector<int64_t> sampleEntries(int64_t size, int64_t count,
                                   SplitMix64 &rng) {
  if (size < 0 || count < 1)
    throw ReferenceError("sample entries: need a size >= 0 and a count >= 1");
  std::vector<int64_t> entries(static_cast<size_t>(size));
  std::iota(entries.begin(), entries.end(), 0);
  if (size <= count)
    return entries;
  for (int64_t i = 0; i < count; ++i)
    std::swap(entries[i], entries[rng.integer(i, size)]);
  entries.resize(static_cast<size_t>(count));
  return entries;
}

double gradientError(const std::vector<double> &compiled,
                     const std::vector<double> &fd) {
  if (compiled.size() != fd.size())
    throw ReferenceError("gradient error: " + std::to_string(compiled.size()) +
                         " compiled values against " +
                         std::to_string(fd.size()) + " finite differences");
  double maxDiff = 0, maxFd = 0;
  for (size_t i = 0; i < fd.size(); ++i) {
    if (!std::isfinite(compiled[i]) || !std::isfinite(fd[i]))
      return std::nan("");
    maxDiff = std::max(maxDiff, std::fabs(compiled[i] - fd[i]));
    maxFd = std::max(maxFd, std::fabs(fd[i]));
  }
  return maxFd > 0 ? maxDiff / maxFd : maxDiff;
}

} // namespace lcc::reference
