//===- GradientCheck.h - Finite-difference gradients of a reference loss --===//
//
// The compiled training step's gradients (lcc --train) are checked against
// central finite differences of the reference's loss, in double precision:
//
//   fd = (L(p + h) - L(p - h)) / ((p + h) - (p - h)),  h = step * max(1, |p|)
//
// The denominator is the step actually taken once p + h and p - h are
// rounded (2h in exact arithmetic). Every entry costs two evaluations of the
// loss, so a large tensor is checked on a sample of its entries
// (sampleEntries), and a bundled model's loss reruns only the stages from the
// first one that reads the changed parameter (modelLoss).
//
//===----------------------------------------------------------------------===//

#ifndef LCC_TEST_REFERENCE_GRADIENTCHECK_H
#define LCC_TEST_REFERENCE_GRADIENTCHECK_H

#include "Random.h"
#include "Reference.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace lcc::reference {

struct JsonValue;

/// The loss at `weights`. `changed` names the only parameter in which
/// `weights` may differ from the weights the loss was made with ("" when
/// none does), so that an evaluator may reuse what does not depend on it.
using LossFunction =
    std::function<double(const Weights &weights, const std::string &changed)>;

/// The first output of the graph `spec` (Graph.h) on `inputs`; it must be a
/// 0-d tensor. The whole graph runs on every evaluation; its stop_gradient
/// nodes keep their values at `base`, the weights differentiated at.
LossFunction graphLoss(const JsonValue &spec, std::vector<Tensor> inputs,
                       const Weights &base);

/// softmaxCrossEntropy(logits, labels, positionWeights) of the logits of
/// `stages` (a bundled model, Reference.h) run on {tokens}. The activations
/// before every stage are computed once, at `weights`; an evaluation reruns
/// the stages from the first that lists `changed` (none if no stage does:
/// the model does not read it).
LossFunction modelLoss(std::vector<ModelStage> stages, const Weights &weights,
                       const Tensor &tokens, const Tensor &labels,
                       std::optional<Tensor> positionWeights = std::nullopt);

constexpr double kDefaultFiniteDifferenceStep = 1e-4;

/// d loss / d weights[name].data[entry] by the central difference above.
/// `weights` changes during the call and is restored exactly.
double finiteDifference(const LossFunction &loss, Weights &weights,
                        const std::string &name, int64_t entry,
                        double step = kDefaultFiniteDifferenceStep);

/// The central differences of the loss around one entry at the step and at
/// half of it, and how far the loss is from one parabola across them (what
/// --skip-kinks judges an entry by).
struct LocalDifferences {
  double full, half;
  /// (S(h) - 4 S(h/2)) / h, S(t) = L(p+t) - 2 L(p) + L(p-t): O(h³) where
  /// the loss is smooth, about the change of slope times h where a kink
  /// lies within the step, wherever it lies (where `full - half` vanishes
  /// for a kink at the entry itself).
  double curvatureMismatch;
  /// How large either test's quantity can be from the rounding of the loss
  /// values alone (32 ulps of the largest, over h): below it, nothing can
  /// be told apart, and a kink that small biases nothing that matters.
  double roundingNoise;
};
/// `center` is the loss at `weights` as they are, the same for every
/// entry: computed once by the caller.
LocalDifferences localDifferences(const LossFunction &loss, Weights &weights,
                                  const std::string &name, int64_t entry,
                                  double center,
                                  double step = kDefaultFiniteDifferenceStep);

/// Whether the loss is smooth enough around an entry for a check to `rtol`
/// of `scale`: the central differences at the step and at half of it agree,
/// and the loss is one parabola across them, each to rtol / 4 of the larger
/// of `scale` and the entry's own derivative. A ReLU that changes side at a
/// fraction t of the step from the entry biases the difference by (1 - t) / 2
/// of its change of slope; the first test is blind to it at t = 0, the
/// second at t = 1/3, and together they leave an undetected bias below 0.63
/// rtol. `scale` is what the check divides by (gradientError: the largest
/// difference of the tensor), so an entry whose derivative is tiny beside it
/// is not judged more strictly than the check judges it. A smooth loss
/// passes both by O(h²), and no test asks for less than the loss's own
/// rounding can show.
bool isSmooth(const LocalDifferences &d, double rtol, double scale);

/// How many times, and by what factor, --skip-kinks shrinks the step around
/// an entry whose differences are not smooth. A kink at distance d from the
/// entry biases no step below d, so an entry with a ReLU input near zero is
/// checked at a smaller step rather than skipped (with random inputs, a
/// parameter every ReLU depends on otherwise loses each of its few entries
/// now and then). Two shrinks by 8 keep the loss's rounding, 32 ulps over
/// step / 64, below 1e-8 of a loss of 1 at the default step.
constexpr int kKinkStepShrinks = 2;
constexpr double kKinkStepShrinkFactor = 8;

/// localDifferences at `step`, then, while the last are not smooth for
/// `rtol` of `scale`, at the step shrunk by kKinkStepShrinkFactor, at most
/// kKinkStepShrinks times: every set computed, the last at the smallest
/// step.
std::vector<LocalDifferences>
differencesAroundKinks(const LossFunction &loss, Weights &weights,
                       const std::string &name, int64_t entry, double center,
                       double step, double rtol, double scale);

/// The first of `tries` that isSmooth judges smooth, or null.
const LocalDifferences *firstSmooth(const std::vector<LocalDifferences> &tries,
                                    double rtol, double scale);

/// finiteDifference of every entry of parameter `name`, in its shape.
Tensor finiteDifferenceGradient(const LossFunction &loss, Weights &weights,
                                const std::string &name,
                                double step = kDefaultFiniteDifferenceStep);

/// The flat entries of a tensor of `size` entries to check: all of them, in
/// order, when size <= count; else `count` distinct ones, the first `count`
/// of a partial Fisher-Yates shuffle of 0..size-1 (for i = 0..count-1, swap
/// entries i and rng.integer(i, size)), in that order.
std::vector<int64_t> sampleEntries(int64_t size, int64_t count,
                                   SplitMix64 &rng);

/// max|compiled - fd| / max|fd| over the entries; when every fd is 0, the
/// absolute max|compiled - fd|. NaN if any value is not finite.
double gradientError(const std::vector<double> &compiled,
                     const std::vector<double> &fd);

} // namespace lcc::reference

#endif // LCC_TEST_REFERENCE_GRADIENTCHECK_H
