//===- GradientCheckTest.cpp - Finite differences against hand gradients --===//

#include "GradientCheck.h"
#include "Json.h"
#include "TestUtil.h"

#include <cmath>
#include <set>

using namespace lcc::reference;

namespace {

//===----------------------------------------------------------------------===//
// linear + weighted softmax cross-entropy, differentiated by hand
//===----------------------------------------------------------------------===//

const char *const kLinearCrossEntropy = R"({
  "inputs": [{"name": "x", "shape": [3, 2]},
             {"name": "labels", "shape": [3], "dtype": "i32"},
             {"name": "pw", "shape": [3]}],
  "nodes": [{"op": "linear", "args": ["x", "w", "b"], "results": ["logits"]},
            {"op": "softmax_cross_entropy", "args": ["logits", "labels", "pw"],
             "results": ["loss"]}],
  "outputs": ["loss"]})";

struct LinearCase {
  Tensor x{{3, 2}, {0.5, -1.0, 2.0, 0.25, -0.75, 1.5}};
  Tensor labels{{3}, {2, 0, 1}};
  Tensor pw{{3}, {1.0, 0.5, 2.0}};
  Weights weights{{"w", Tensor({2, 3}, {0.3, -0.2, 0.8, -0.5, 0.4, 0.1})},
                  {"b", Tensor({3}, {0.1, 0.0, -0.3})}};

  LossFunction loss() const {
    return graphLoss(parseJson(kLinearCrossEntropy), {x, labels, pw}, weights);
  }

  /// With logits z = x w + b, S = softmax(z) per row, Y = onehot(labels):
  /// dL/dz[p] = pw_p (S[p] - Y[p]) / sum(pw), dL/dw = x^T dL/dz and
  /// dL/db = sum_p dL/dz[p]. Written out here, not with the reference's ops.
  std::pair<Tensor, Tensor> analyticGradients() const {
    const Tensor &w = weights.at("w"), &b = weights.at("b");
    double totalWeight = pw.data[0] + pw.data[1] + pw.data[2];
    Tensor dw({2, 3}), db({3});
    for (int64_t p = 0; p < 3; ++p) {
      double z[3], sum = 0;
      for (int64_t o = 0; o < 3; ++o) {
        z[o] = b.data[o] + x.at({p, 0}) * w.at({0, o}) +
               x.at({p, 1}) * w.at({1, o});
        sum += std::exp(z[o]);
      }
      for (int64_t o = 0; o < 3; ++o) {
        double dz = pw.data[p] *
                    (std::exp(z[o]) / sum - (labels.data[p] == o ? 1 : 0)) /
                    totalWeight;
        db.data[o] += dz;
        for (int64_t i = 0; i < 2; ++i)
          dw.at({i, o}) += x.at({p, i}) * dz;
      }
    }
    return {dw, db};
  }
};

TEST(FiniteDifference, LinearCrossEntropyMatchesTheHandGradient) {
  LinearCase c;
  LossFunction loss = c.loss();
  auto [dw, db] = c.analyticGradients();
  Weights weights = c.weights;
  expectTensorNear(finiteDifferenceGradient(loss, weights, "w"), dw, 1e-6);
  expectTensorNear(finiteDifferenceGradient(loss, weights, "b"), db, 1e-6);
  // A gradient that large is not the trivial zero.
  EXPECT_GT(std::fabs(dw.at({1, 2})), 0.05);
}

TEST(FiniteDifference, LeavesTheWeightsAsTheyWere) {
  LinearCase c;
  Weights weights = c.weights;
  finiteDifferenceGradient(c.loss(), weights, "w");
  EXPECT_EQ(weights.at("w").data, c.weights.at("w").data);

  // Also when the loss fails half-way.
  LossFunction failing = [](const Weights &, const std::string &) -> double {
    throw ReferenceError("no loss");
  };
  EXPECT_EQ(errorOf([&] { finiteDifference(failing, weights, "b", 2); }),
            "no loss");
  EXPECT_EQ(weights.at("b").data, c.weights.at("b").data);
}

TEST(FiniteDifference, StepScalesWithTheValue) {
  // L(p) = p^3 has derivative 3 p^2; the central difference's error is
  // h^2 exactly, with h = step * max(1, |p|) = 1e-4 * 100 at p = 100.
  Weights weights{{"p", Tensor({1}, {100.0})}};
  LossFunction cube = [](const Weights &w, const std::string &) {
    double p = w.at("p").data[0];
    return p * p * p;
  };
  EXPECT_NEAR(finiteDifference(cube, weights, "p", 0), 3e4 + 1e-4, 1e-6);
}

TEST(FiniteDifference, RejectsWhatIsNotThere) {
  LinearCase c;
  Weights weights = c.weights;
  EXPECT_EQ(errorOf([&] { finiteDifference(c.loss(), weights, "v", 0); }),
            "finite difference: no parameter named 'v'");
  EXPECT_EQ(errorOf([&] { finiteDifference(c.loss(), weights, "b", 3); }),
            "finite difference: entry 3 is outside the 3 entries of 'b'");
}

TEST(GraphLoss, NeedsAZeroDimensionalFirstOutput) {
  const char *logits = R"({
    "inputs": [{"name": "x", "shape": [3, 2]}],
    "nodes": [{"op": "linear", "args": ["x", "w"], "results": ["y"]}],
    "outputs": ["y"]})";
  LinearCase c;
  EXPECT_EQ(errorOf([&] {
              graphLoss(parseJson(logits), {c.x}, c.weights)(c.weights, "");
            }),
            "gradient check: the graph's first output must be a 0-d loss, "
            "got [3, 3]");
}

TEST(GraphLoss, StopGradientKeepsItsBaseValue) {
  // loss = sum(stop_gradient(w) * w) = w0 · w near w0: d/dw = w0, not 2 w0.
  const char *graph = R"({
    "inputs": [],
    "nodes": [
      {"op": "stop_gradient", "args": ["w"], "results": ["c"]},
      {"op": "mul", "args": ["c", "w"], "results": ["p"]},
      {"op": "reshape", "args": ["p"], "results": ["r"], "shape": [1, 2]},
      {"op": "linear", "args": ["r", "ones"], "results": ["s"]},
      {"op": "reshape", "args": ["s"], "results": ["loss"], "shape": []}],
    "outputs": ["loss"]})";
  Weights weights{{"w", Tensor({2}, {0.5, -2.0})},
                  {"ones", Tensor({2, 1}, {1.0, 1.0})}};
  LossFunction loss = graphLoss(parseJson(graph), {}, weights);
  EXPECT_NEAR(finiteDifference(loss, weights, "w", 0, 1e-4), 0.5, 1e-9);
  EXPECT_NEAR(finiteDifference(loss, weights, "w", 1, 1e-4), -2.0, 1e-9);
}

//===----------------------------------------------------------------------===//
// Staged model losses
//===----------------------------------------------------------------------===//

TinyModelConfig smallConfig() {
  TinyModelConfig c;
  c.layers = 2;
  c.dModel = 8;
  c.heads = 2;
  c.dFF = 16;
  c.vocab = 11;
  c.seq = 12;
  return c;
}

Weights randomWeights(const std::map<std::string, Shape> &shapes,
                      SplitMix64 &rng) {
  Weights weights;
  for (const auto &[name, shape] : shapes)
    weights[name] = randomTensor(shape, rng, 0.5);
  return weights;
}

Tensor randomIds(int64_t seq, int64_t vocab, SplitMix64 &rng) {
  Tensor ids({1, seq});
  for (double &t : ids.data)
    t = static_cast<double>(rng.integer(0, vocab));
  return ids;
}

TEST(ModelLoss, RerunningFromAStageEqualsTheWholeModel) {
  // Bit for bit: the reused activations are exactly those of a full run.
  TinyModelConfig c = smallConfig();
  SplitMix64 rng(21);
  for (bool reformer : {false, true}) {
    Weights weights = randomWeights(
        reformer ? reformerTinyParams(c) : transformerTinyParams(c), rng);
    weights["unused"] = Tensor({2});
    Tensor tokens = randomIds(c.seq, c.vocab, rng);
    Tensor labels = randomIds(c.seq, c.vocab, rng);
    Tensor pw = randomTensor({1, c.seq}, rng);
    auto model = [&](const Weights &w) {
      Tensor logits =
          reformer ? reformerTiny(w, tokens, c) : transformerTiny(w, tokens, c);
      return softmaxCrossEntropy(logits, labels, &pw).data[0];
    };
    LossFunction loss =
        modelLoss(reformer ? reformerTinyStages(c) : transformerTinyStages(c),
                  weights, tokens, labels, pw);
    EXPECT_EQ(loss(weights, ""), model(weights));
    for (const char *name :
         {"embed.positions", "layers.0.attn.wq", "layers.0.ff.b1",
          "layers.1.attn_norm.gamma", "layers.1.ff.w2", "final_norm.beta",
          "lm_head.weight"}) {
      Weights changed = weights;
      changed[name].data[3] += 0.25;
      EXPECT_EQ(loss(changed, name), model(changed))
          << (reformer ? "reformer " : "transformer ") << name;
    }
    // A weight that no stage reads cannot change the loss.
    Weights changed = weights;
    changed["unused"].data[0] = 1;
    EXPECT_EQ(loss(changed, "unused"), model(weights));
  }
}

TEST(ModelLoss, HeadBiasGradientIsTheMeanSoftmaxError) {
  // dL/d lm_head.bias[o] = sum_p pw_p (S[p, o] - Y[p, o]) / sum(pw).
  TinyModelConfig c = smallConfig();
  SplitMix64 rng(22);
  Weights weights = randomWeights(transformerTinyParams(c), rng);
  Tensor tokens = randomIds(c.seq, c.vocab, rng);
  Tensor labels = randomIds(c.seq, c.vocab, rng);
  Tensor pw = Tensor::filled({1, c.seq}, 1.0);
  pw.data[0] = 3; // a weighted mean, not the plain one
  Tensor logits = transformerTiny(weights, tokens, c);
  Tensor expected({c.vocab});
  double totalWeight = c.seq + 2;
  for (int64_t p = 0; p < c.seq; ++p) {
    double sum = 0;
    for (int64_t o = 0; o < c.vocab; ++o)
      sum += std::exp(logits.at({0, p, o}));
    for (int64_t o = 0; o < c.vocab; ++o)
      expected.data[o] += pw.data[p] *
                          (std::exp(logits.at({0, p, o})) / sum -
                           (labels.data[p] == o ? 1 : 0)) /
                          totalWeight;
  }
  LossFunction loss =
      modelLoss(transformerTinyStages(c), weights, tokens, labels, pw);
  expectTensorNear(finiteDifferenceGradient(loss, weights, "lm_head.bias"),
                   expected, 1e-6);
}

//===----------------------------------------------------------------------===//
// Sampling and the error measure
//===----------------------------------------------------------------------===//

TEST(SampleEntries, EveryEntryOfASmallTensor) {
  SplitMix64 rng(1);
  EXPECT_EQ(sampleEntries(4, 4, rng), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(sampleEntries(3, 48, rng), (std::vector<int64_t>{0, 1, 2}));
  // Nothing was drawn.
  SplitMix64 fresh(1);
  EXPECT_EQ(rng.nextU64(), fresh.nextU64());
}

TEST(SampleEntries, DistinctReproducibleAndAsDocumented) {
  SplitMix64 rng(7), again(7), byHand(7);
  std::vector<int64_t> entries = sampleEntries(1000, 48, rng);
  EXPECT_EQ(entries, sampleEntries(1000, 48, again));
  ASSERT_EQ(entries.size(), 48u);
  std::set<int64_t> distinct(entries.begin(), entries.end());
  EXPECT_EQ(distinct.size(), 48u);
  EXPECT_GE(*distinct.begin(), 0);
  EXPECT_LT(*distinct.rbegin(), 1000);
  // The first step of the shuffle swaps entry 0 with integer(0, 1000); the
  // second swaps entry 1 with integer(1, 1000).
  int64_t first = byHand.integer(0, 1000);
  int64_t second = byHand.integer(1, 1000);
  EXPECT_EQ(entries[0], first);
  EXPECT_EQ(entries[1], second == first ? 0 : second);
}

TEST(GradientError, RelativeAbsoluteAndNaN) {
  EXPECT_EQ(gradientError({1.0, 2.5}, {1.0, 2.0}), 0.25);
  EXPECT_EQ(gradientError({1.0, -4.0}, {1.5, -4.0}), 0.125);
  // A zero gradient is judged absolutely.
  EXPECT_EQ(gradientError({0.25, 0.0}, {0.0, 0.0}), 0.25);
  EXPECT_EQ(gradientError({0.0}, {0.0}), 0.0);
  EXPECT_TRUE(std::isnan(gradientError({std::nan("")}, {1.0})));
  EXPECT_TRUE(std::isnan(gradientError({1.0}, {INFINITY})));
}

//===----------------------------------------------------------------------===//
// localDifferences: what --skip-kinks judges an entry by
//===----------------------------------------------------------------------===//

/// L(w) = relu(w - kink) + w²/2, a kink of slope change 1.
LossFunction reluLoss(double kink) {
  return [kink](const Weights &weights, const std::string &) {
    double w = weights.at("w").data[0];
    return std::max(0.0, w - kink) + 0.5 * w * w;
  };
}

TEST(LocalDifferences, SmoothLossIsOneParabola) {
  Weights weights{{"w", Tensor({1}, {0.5})}};
  LossFunction loss = reluLoss(10.0);
  LocalDifferences d =
      localDifferences(loss, weights, "w", 0, loss(weights, "w"), 1e-3);
  EXPECT_NEAR(d.full, 0.5, 1e-9);
  EXPECT_NEAR(d.half, 0.5, 1e-9);
  EXPECT_NEAR(d.curvatureMismatch, 0.0, 1e-9);
  EXPECT_EQ(weights.at("w").data[0], 0.5);
}

TEST(LocalDifferences, KinkAtTheEntrySeenByTheCurvature) {
  // The two central differences agree (both see half the slope change),
  // so only the curvature shows the kink: (S(h) - 4 S(h/2)) / h = -1.
  Weights weights{{"w", Tensor({1}, {0.5})}};
  LossFunction loss = reluLoss(0.5);
  LocalDifferences d =
      localDifferences(loss, weights, "w", 0, loss(weights, "w"), 1e-3);
  EXPECT_NEAR(d.full - d.half, 0.0, 1e-9);
  EXPECT_NEAR(d.curvatureMismatch, -1.0, 1e-6);
}

TEST(LocalDifferences, KinkAThirdOfTheStepAwaySeenByTheDifferences) {
  // h = 1e-3, kink at h/3: the parabola test is blind, the half step not.
  Weights weights{{"w", Tensor({1}, {0.5})}};
  LossFunction loss = reluLoss(0.5 + 1e-3 / 3);
  LocalDifferences d =
      localDifferences(loss, weights, "w", 0, loss(weights, "w"), 1e-3);
  EXPECT_NEAR(d.curvatureMismatch, 0.0, 1e-6);
  EXPECT_NEAR(d.full - d.half, 1.0 / 6, 1e-6);
}

TEST(DifferencesAroundKinks, AKinkNearTheEntryIsSteppedUnder) {
  // Kink at h/3: not smooth at h; at h/8 the kink lies past both steps and
  // the difference is the derivative on the entry's side of it.
  Weights weights{{"w", Tensor({1}, {0.5})}};
  LossFunction loss = reluLoss(0.5 + 1e-3 / 3);
  std::vector<LocalDifferences> tries = differencesAroundKinks(
      loss, weights, "w", 0, loss(weights, "w"), 1e-3, 1e-5, 0.0);
  ASSERT_EQ(tries.size(), 2u);
  const LocalDifferences *smooth = firstSmooth(tries, 1e-5, 0.0);
  ASSERT_EQ(smooth, &tries[1]);
  EXPECT_NEAR(smooth->full, 0.5, 1e-9);
  EXPECT_EQ(weights.at("w").data[0], 0.5);
}

TEST(DifferencesAroundKinks, AKinkAtTheEntryStaysOne) {
  // No step is below a distance of zero: every try sees the kink.
  Weights weights{{"w", Tensor({1}, {0.5})}};
  LossFunction loss = reluLoss(0.5);
  std::vector<LocalDifferences> tries = differencesAroundKinks(
      loss, weights, "w", 0, loss(weights, "w"), 1e-3, 1e-5, 0.0);
  EXPECT_EQ(tries.size(), static_cast<size_t>(1 + kKinkStepShrinks));
  EXPECT_EQ(firstSmooth(tries, 1e-5, 0.0), nullptr);
}

TEST(DifferencesAroundKinks, ASmoothEntryIsDifferencedOnce) {
  Weights weights{{"w", Tensor({1}, {0.5})}};
  LossFunction loss = reluLoss(10.0);
  std::vector<LocalDifferences> tries = differencesAroundKinks(
      loss, weights, "w", 0, loss(weights, "w"), 1e-3, 1e-5, 0.0);
  EXPECT_EQ(tries.size(), 1u);
}

//===----------------------------------------------------------------------===//
// isSmooth: the judgement, at the scale the check divides by
//===----------------------------------------------------------------------===//

TEST(IsSmooth, KinksAreJudgedAtTheirOwnDerivativeWithoutAScale) {
  LocalDifferences d{1.0, 1.0 + 3e-6, 0.0, 0.0};
  EXPECT_FALSE(isSmooth(d, 1e-5, 0.0));
  d.half = 1.0 + 2e-6;
  EXPECT_TRUE(isSmooth(d, 1e-5, 0.0));
  d.half = 1.0;
  d.curvatureMismatch = -3e-6;
  EXPECT_FALSE(isSmooth(d, 1e-5, 0.0));
}

TEST(IsSmooth, ATinyDerivativeIsJudgedAtTheTensorsScale) {
  // A mismatch of 1.7e-10 on a derivative of 3.8e-5 is 4.4e-6 of it, but
  // 1.7e-8 of a tensor whose largest difference is 1e-2: it biases the
  // check (max|g - fd| / 1e-2) by far less than its bound.
  LocalDifferences d{-3.8e-5, -3.8e-5, -1.7e-10, 1e-10};
  EXPECT_FALSE(isSmooth(d, 1e-5, 0.0));
  EXPECT_TRUE(isSmooth(d, 1e-5, 1e-2));
  // A real kink stays one at any scale it is small beside.
  d.curvatureMismatch = -1e-7;
  EXPECT_FALSE(isSmooth(d, 1e-5, 1e-2));
}

TEST(IsSmooth, NothingBelowTheRoundingOfTheLossIsAKink) {
  LocalDifferences d{1e-9, 1e-9, 5e-11, 1e-10};
  EXPECT_TRUE(isSmooth(d, 1e-5, 0.0));
  d.curvatureMismatch = 2e-10;
  EXPECT_FALSE(isSmooth(d, 1e-5, 0.0));
}

} // namespace
