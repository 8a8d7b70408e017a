//===- OpsTest.cpp - Hand-computed checks of each reference op ------------===//

#include "TestUtil.h"

#include <cmath>
#include <string>

using namespace lcc::reference;

namespace {

const double kLn2 = std::log(2.0);
const double kLn3 = std::log(3.0);

//===----------------------------------------------------------------------===//
// attention
//===----------------------------------------------------------------------===//

// One head, three tokens, head_dim 2, scale 1. Scores q_i . k_j:
//   row 0: (0, 0, 0)         -> weights 1/3 each
//   row 1: (ln2, 0, 2 ln2)   -> e^s = (2, 1, 4), weights (2, 1, 4)/7
//   row 2: (0, ln3, 0)       -> e^s = (1, 3, 1), weights (1, 3, 1)/5
struct HandCase {
  Tensor q{{1, 1, 3, 2}, {0, 0, kLn2, 0, 0, kLn3}};
  Tensor k{{1, 1, 3, 2}, {1, 0, 0, 1, 2, 0}};
  Tensor v{{1, 1, 3, 2}, {1, 10, 2, 20, 4, 40}};
};

TEST(Attention, HandComputedOneHeadThreeTokens) {
  HandCase c;
  Tensor out = attention(c.q, c.k, c.v, /*causal=*/false, 1.0);
  Tensor expected({1, 1, 3, 2}, {7.0 / 3, 70.0 / 3,     // (1+2+4)/3
                                 20.0 / 7, 200.0 / 7,   // (2*1+1*2+4*4)/7
                                 11.0 / 5, 110.0 / 5}); // (1+3*2+4)/5
  expectTensorNear(out, expected, 1e-12);
}

TEST(Attention, HandComputedCausal) {
  // Row 0 sees key 0 only; row 1 sees scores (ln2, 0) -> (2/3, 1/3); row 2
  // sees everything, as above.
  HandCase c;
  Tensor out = attention(c.q, c.k, c.v, /*causal=*/true, 1.0);
  Tensor expected({1, 1, 3, 2},
                  {1, 10, 4.0 / 3, 40.0 / 3, 11.0 / 5, 110.0 / 5});
  expectTensorNear(out, expected, 1e-12);
}

TEST(Attention, DefaultScaleIsInverseSqrtHeadDim) {
  // head_dim 4 -> scale 1/2: scores (2 ln2 * 1/2, 0) = (ln2, 0), so the
  // weights are (2/3, 1/3) and the output 2/3 * 3 + 1/3 * 6 = 4. The value
  // head_dim (1) may differ from the key's.
  Tensor q({1, 1, 1, 4}, {2 * kLn2, 0, 0, 0});
  Tensor k({1, 1, 2, 4}, {1, 0, 0, 0, 0, 0, 0, 0});
  Tensor v({1, 1, 2, 1}, {3, 6});
  Tensor out = attention(q, k, v, /*causal=*/false);
  expectTensorNear(out, Tensor({1, 1, 1, 1}, {4.0}), 1e-12);
}

TEST(Attention, CausalFirstRowIsFirstValue) {
  SplitMix64 rng(1);
  Shape shape{2, 3, 9, 5};
  Tensor q = randomTensor(shape, rng), k = randomTensor(shape, rng),
         v = randomTensor(shape, rng);
  Tensor out = attention(q, k, v, /*causal=*/true);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t h = 0; h < 3; ++h)
      for (int64_t d = 0; d < 5; ++d)
        EXPECT_NEAR(out.at({b, h, 0, d}), v.at({b, h, 0, d}), 1e-14);
}

TEST(Attention, StableForHugeScores) {
  // Scores of 1e4 would overflow exp() without subtracting the row max.
  Tensor q({1, 1, 1, 1}, {100.0});
  Tensor k({1, 1, 2, 1}, {100.0, 100.0 - kLn2 / 100});
  Tensor v({1, 1, 2, 1}, {3, 6});
  // Scores 1e4 and 1e4 - ln2: weights (2/3, 1/3).
  Tensor out = attention(q, k, v, false, 1.0);
  EXPECT_NEAR(out.data[0], 4.0, 1e-9);
}

TEST(Attention, RejectsMismatchedShapes) {
  Tensor q({1, 1, 3, 2}), k({1, 1, 3, 4}), v({1, 1, 3, 2});
  EXPECT_NE(errorOf([&] { attention(q, k, v, false); }).find("key"),
            std::string::npos);
  Tensor bad({1, 3, 2});
  EXPECT_NE(errorOf([&] { attention(bad, bad, bad, false); }), "");
}

//===----------------------------------------------------------------------===//
// shared-QK attention
//===----------------------------------------------------------------------===//

// qk = (1, 0), (0, 2), (3, 4); keys are the unit vectors (1, 0), (0, 1),
// (0.6, 0.8); scale 1. v = (1, 0), (0, 1), (5, 5).
struct SharedCase {
  Tensor qk{{1, 1, 3, 2}, {1, 0, 0, 2, 3, 4}};
  Tensor v{{1, 1, 3, 2}, {1, 0, 0, 1, 5, 5}};
};

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

TEST(SharedQKAttention, HandComputedCausal) {
  SharedCase c;
  Tensor out = attention(c.qk, c.qk, c.v, /*causal=*/true, 1.0,
                         /*sharedQK=*/true);
  // Row 0: only itself is visible, so the -1e5 self score still gets
  //        weight 1: v0.
  // Row 1: key 0 scores q1 . (1,0) = 0, itself -1e5: v0.
  // Row 2: keys 0, 1 score 3 and 4 (|q2| = 5 is not normalised away),
  //        itself -1e5: sigmoid(-1) v0 + sigmoid(1) v1.
  Tensor expected({1, 1, 3, 2}, {1, 0, 1, 0, sigmoid(-1), sigmoid(1)});
  expectTensorNear(out, expected, 1e-12);
}

TEST(SharedQKAttention, HandComputedNonCausal) {
  SharedCase c;
  Tensor out = attention(c.qk, c.qk, c.v, /*causal=*/false, 1.0,
                         /*sharedQK=*/true);
  // Row 0: keys 1, 2 score 0 and 0.6.  Row 1: keys 0, 2 score 0 and 1.6.
  double w0 = 1 / (1 + std::exp(0.6)), w1 = 1 / (1 + std::exp(1.6));
  Tensor expected({1, 1, 3, 2}, {w0 * 0 + (1 - w0) * 5, w0 * 1 + (1 - w0) * 5,
                                 w1 * 1 + (1 - w1) * 5, w1 * 0 + (1 - w1) * 5,
                                 sigmoid(-1), sigmoid(1)});
  expectTensorNear(out, expected, 1e-12);
}

TEST(SharedQKAttention, SelfOnlyWhenNothingElseIsVisible) {
  // v_j = e_j (one-hot), so output row i is the attention weights of row i.
  const int64_t seq = 6;
  SplitMix64 rng(2);
  Tensor qk = randomTensor({1, 1, seq, 4}, rng);
  Tensor v({1, 1, seq, seq});
  for (int64_t j = 0; j < seq; ++j)
    v.at({0, 0, j, j}) = 1.0;
  Tensor causal = attention(qk, qk, v, true, std::nullopt, true);
  EXPECT_EQ(causal.at({0, 0, 0, 0}), 1.0); // token 0 sees only itself
  for (int64_t i = 1; i < seq; ++i) {
    EXPECT_LT(causal.at({0, 0, i, i}), 1e-30) << "row " << i;
    for (int64_t j = i + 1; j < seq; ++j)
      EXPECT_EQ(causal.at({0, 0, i, j}), 0.0);
  }
  Tensor full = attention(qk, qk, v, false, std::nullopt, true);
  for (int64_t i = 0; i < seq; ++i)
    EXPECT_LT(full.at({0, 0, i, i}), 1e-30) << "row " << i;

  // A single token has nothing else to see.
  Tensor one = attention(Tensor({1, 1, 1, 2}, {0.3, -2}),
                         Tensor({1, 1, 1, 2}, {0.3, -2}),
                         Tensor({1, 1, 1, 1}, {7}), false, std::nullopt, true);
  EXPECT_EQ(one.data[0], 7.0);
}

TEST(SharedQKAttention, NeedsKeyEqualToQuery) {
  SharedCase c;
  Tensor other = c.qk;
  other.data[0] += 1;
  EXPECT_NE(errorOf([&] { attention(c.qk, other, c.v, false, 1.0, true); }),
            "");
}

//===----------------------------------------------------------------------===//
// sparse attention
//===----------------------------------------------------------------------===//

/// The mask as rows of '0'/'1', row i = query i.
std::vector<std::string> maskRows(SparsePattern pattern, int64_t seq,
                                  int64_t stride, int64_t summary,
                                  bool causal) {
  std::vector<std::string> rows;
  for (int64_t i = 0; i < seq; ++i) {
    std::string row;
    for (int64_t j = 0; j < seq; ++j)
      row +=
          sparseMaskAllows(pattern, i, j, stride, summary, causal) ? '1' : '0';
    rows.push_back(row);
  }
  return rows;
}

TEST(SparseMask, FixedListedByHand) {
  // l = 4, c = 1: own block of 4, plus the summary column j % 4 == 3.
  EXPECT_EQ(maskRows(SparsePattern::Fixed, 8, 4, 1, false),
            (std::vector<std::string>{"11110001", "11110001", "11110001",
                                      "11110001", "00011111", "00011111",
                                      "00011111", "00011111"}));
  EXPECT_EQ(maskRows(SparsePattern::Fixed, 8, 4, 1, true),
            (std::vector<std::string>{"10000000", "11000000", "11100000",
                                      "11110000", "00011000", "00011100",
                                      "00011110", "00011111"}));
  // c = 2: summary columns j % 4 in {2, 3}.
  EXPECT_EQ(maskRows(SparsePattern::Fixed, 8, 4, 2, false),
            (std::vector<std::string>{"11110011", "11110011", "11110011",
                                      "11110011", "00111111", "00111111",
                                      "00111111", "00111111"}));
  // c = 0: own block only.
  EXPECT_EQ(maskRows(SparsePattern::Fixed, 4, 2, 0, false),
            (std::vector<std::string>{"1100", "1100", "0011", "0011"}));
}

TEST(SparseMask, StridedListedByHand) {
  // l = 3: |i - j| < 3, or i - j a multiple of 3.
  EXPECT_EQ(
      maskRows(SparsePattern::Strided, 7, 3, 0, false),
      (std::vector<std::string>{"1111001", "1111100", "1111110", "1111111",
                                "0111111", "0011111", "1001111"}));
  EXPECT_EQ(
      maskRows(SparsePattern::Strided, 7, 3, 0, true),
      (std::vector<std::string>{"1000000", "1100000", "1110000", "1111000",
                                "0111100", "0011110", "1001111"}));
}

TEST(SparseMask, RejectsBadParameters) {
  EXPECT_NE(errorOf([] {
              sparseMaskAllows(SparsePattern::Strided, 0, 0, 0, 0, false);
            }),
            "");
  EXPECT_NE(errorOf([] {
              sparseMaskAllows(SparsePattern::Fixed, 0, 0, 4, 5, false);
            }),
            "");
}

TEST(SparseAttention, UsesTheMask) {
  // With q = 0 every visible key scores 0, and with v_j = e_j row i is the
  // uniform distribution over A(i).
  const int64_t seq = 8;
  Tensor q({1, 1, seq, 3});
  Tensor v({1, 1, seq, seq});
  for (int64_t j = 0; j < seq; ++j)
    v.at({0, 0, j, j}) = 1.0;
  for (bool causal : {false, true}) {
    Tensor out = sparseAttention(q, q, v, SparsePattern::Fixed, 4, 1, causal);
    std::vector<std::string> rows =
        maskRows(SparsePattern::Fixed, seq, 4, 1, causal);
    for (int64_t i = 0; i < seq; ++i) {
      double count = 0;
      for (char c : rows[i])
        count += c == '1';
      for (int64_t j = 0; j < seq; ++j)
        EXPECT_NEAR(out.at({0, 0, i, j}), rows[i][j] == '1' ? 1 / count : 0,
                    1e-15);
    }
  }
}

TEST(SparseAttention, EqualsDenseWhenTheMaskIsFull) {
  SplitMix64 rng(3);
  Shape shape{2, 2, 11, 4};
  Tensor q = randomTensor(shape, rng), k = randomTensor(shape, rng),
         v = randomTensor(shape, rng);
  for (bool causal : {false, true}) {
    Tensor dense = attention(q, k, v, causal);
    // strided with stride >= seq: |i - j| < stride always.
    for (int64_t stride : {11, 12, 100})
      expectTensorNear(
          sparseAttention(q, k, v, SparsePattern::Strided, stride, 0, causal),
          dense, 1e-14);
    // strided with stride 1: every i - j is a multiple of 1.
    expectTensorNear(
        sparseAttention(q, k, v, SparsePattern::Strided, 1, 0, causal), dense,
        1e-14);
    // fixed with one block (stride >= seq), or with summary == stride.
    expectTensorNear(
        sparseAttention(q, k, v, SparsePattern::Fixed, 11, 0, causal), dense,
        1e-14);
    expectTensorNear(
        sparseAttention(q, k, v, SparsePattern::Fixed, 3, 3, causal), dense,
        1e-14);
    // An explicit scale reaches the scores.
    expectTensorNear(
        sparseAttention(q, k, v, SparsePattern::Strided, 20, 0, causal, 0.3),
        attention(q, k, v, causal, 0.3), 1e-14);
  }
}

//===----------------------------------------------------------------------===//
// Model-level ops
//===----------------------------------------------------------------------===//

TEST(LayerNorm, KnownVector) {
  // x = (1, 2, 3, 4): mean 2.5, biased variance 1.25.
  double s = std::sqrt(1.25);
  Tensor out = layerNorm(Tensor({1, 4}, {1, 2, 3, 4}),
                         Tensor({4}, {1, 2, 1, 1}), Tensor({4}, {0, 0, 1, 0}),
                         /*epsilon=*/0.0);
  expectTensorNear(
      out, Tensor({1, 4}, {-1.5 / s, 2 * -0.5 / s, 0.5 / s + 1, 1.5 / s}),
      1e-14);
  EXPECT_NEAR(out.data[0], -1.3416407864998738, 1e-15);
}

TEST(LayerNorm, DefaultEpsilonAndConstantRows) {
  // Row (0, 2): mean 1, variance 1 -> (-1, 1) / sqrt(1 + 1e-5).
  // Row (5, 5): variance 0, epsilon keeps it finite -> beta.
  Tensor out = layerNorm(Tensor({2, 2}, {0, 2, 5, 5}), Tensor({2}, {1, 1}),
                         Tensor({2}, {0.25, -0.5}));
  double r = 1 / std::sqrt(1 + 1e-5);
  expectTensorNear(out, Tensor({2, 2}, {-r + 0.25, r - 0.5, 0.25, -0.5}),
                   1e-14);
}

TEST(Linear, HandComputed) {
  Tensor x({1, 1, 2}, {1, 2});
  Tensor w({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b({3}, {1, 1, -1});
  expectTensorNear(linear(x, w), Tensor({1, 1, 3}, {9, 12, 15}), 0);
  expectTensorNear(linear(x, w, &b), Tensor({1, 1, 3}, {10, 13, 14}), 0);
  EXPECT_NE(errorOf([&] { linear(Tensor({1, 3}), w); }), "");
}

TEST(FeedForward, GeluAgainstErf) {
  // Phi(1) = 0.841344746068543, Phi(2) = 0.977249868051821.
  EXPECT_EQ(gelu(0.0), 0.0);
  EXPECT_NEAR(gelu(1.0), 0.8413447460685429, 1e-15);
  EXPECT_NEAR(gelu(-1.0), -0.15865525393145707, 1e-15);
  EXPECT_NEAR(gelu(2.0), 2 * 0.9772498680518208, 1e-15);
  EXPECT_NEAR(gelu(1.0), 0.5 * (1 + std::erf(1 / std::sqrt(2.0))), 1e-16);

  // With identity weights and zero biases the block is the activation.
  Tensor eye({3, 3});
  for (int64_t i = 0; i < 3; ++i)
    eye.at({i, i}) = 1;
  Tensor zero({3});
  Tensor x({1, 1, 3}, {0, 1, -1});
  expectTensorNear(
      feedForward(x, eye, zero, eye, zero, Activation::Gelu),
      Tensor({1, 1, 3}, {0, 0.8413447460685429, -0.15865525393145707}), 1e-15);
  expectTensorNear(feedForward(x, eye, zero, eye, zero, Activation::Relu),
                   Tensor({1, 1, 3}, {0, 1, 0}), 0);
}

TEST(FeedForward, BiasesAndShapes) {
  // d_model 1, d_ff 2: relu(x * (1, -1) + (0, 1)) . (2, 3)^T + 0.5.
  Tensor x({1, 2, 1}, {2, -3});
  Tensor up({1, 2}, {1, -1}), upBias({2}, {0, 1});
  Tensor down({2, 1}, {2, 3}), downBias({1}, {0.5});
  // x = 2: relu(2, -1) = (2, 0) -> 4.5. x = -3: relu(-3, 4) = (0, 4) -> 12.5.
  expectTensorNear(feedForward(x, up, upBias, down, downBias, Activation::Relu),
                   Tensor({1, 2, 1}, {4.5, 12.5}), 0);
}

TEST(Embedding, LooksUpRows) {
  Tensor table({3, 2}, {0, 1, 10, 11, 20, 21});
  expectTensorNear(embedding(Tensor({1, 2}, {2, 0}), table),
                   Tensor({1, 2, 2}, {20, 21, 0, 1}), 0);
  EXPECT_NE(errorOf([&] {
              embedding(Tensor({1, 1}, {3}), table);
            }).find("outside [0, 3)"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { embedding(Tensor({1, 1}, {-1}), table); }), "");
  EXPECT_NE(errorOf([&] { embedding(Tensor({1, 1}, {1.5}), table); }), "");
}

TEST(MultiHeadAttention, HeadColumnsSplitAndMergeInOrder) {
  // Identity projections: head h of q must be columns h*2 .. h*2+1 of x.
  SplitMix64 rng(4);
  Tensor x = randomTensor({2, 3, 6}, rng);
  Tensor eye({6, 6});
  for (int64_t i = 0; i < 6; ++i)
    eye.at({i, i}) = 1;
  int calls = 0;
  Tensor out = multiHeadAttention(
      x, eye, &eye, eye, eye, 3, [&](const std::vector<Tensor> &args) {
        ++calls;
        EXPECT_EQ(args.size(), 3u);
        for (int64_t b = 0; b < 2; ++b)
          for (int64_t h = 0; h < 3; ++h)
            for (int64_t s = 0; s < 3; ++s)
              for (int64_t d = 0; d < 2; ++d)
                EXPECT_EQ(args[0].at({b, h, s, d}), x.at({b, s, h * 2 + d}));
        return args[2]; // v: merging must give x back
      });
  EXPECT_EQ(calls, 1);
  expectTensorNear(out, x, 0);
}

TEST(MultiHeadAttention, ProjectionsAndSharedQK) {
  // x . Wq feeds the body; the body result is merged and projected by Wo.
  SplitMix64 rng(5);
  Tensor x = randomTensor({1, 4, 4}, rng);
  Tensor wq = randomTensor({4, 4}, rng), wv = randomTensor({4, 4}, rng),
         wo = randomTensor({4, 2}, rng);
  Tensor out = multiHeadAttention(
      x, wq, nullptr, wv, wo, 2, [&](const std::vector<Tensor> &args) {
        EXPECT_EQ(args.size(), 2u); // (qk, v) without a key weight
        expectTensorNear(args[0], splitHeads(linear(x, wq), 2), 0);
        expectTensorNear(args[1], splitHeads(linear(x, wv), 2), 0);
        return args[0];
      });
  expectTensorNear(out, linear(linear(x, wq), wo), 1e-12);
}

TEST(Residual, AddsTheBody) {
  Tensor x({1, 3}, {1, 2, 3});
  Tensor y = residual(x, [](const Tensor &a) {
    Tensor r = a;
    for (double &v : r.data)
      v = v * v;
    return r;
  });
  expectTensorNear(y, Tensor({1, 3}, {2, 6, 12}), 0);
}

TEST(Reversible, InvertsAndMatchesDefinition) {
  SplitMix64 rng(6);
  Tensor x1 = randomTensor({1, 5, 4}, rng), x2 = randomTensor({1, 5, 4}, rng);
  Tensor wf = randomTensor({4, 4}, rng), wg = randomTensor({4, 4}, rng);
  Tensor gamma = Tensor::filled({4}, 1.0);
  Tensor beta = Tensor::filled({4}, 0.1);
  Block f = [&](const Tensor &a) {
    Tensor r = linear(layerNorm(a, gamma, beta), wf);
    for (double &v : r.data)
      v = std::tanh(v);
    return r;
  };
  Block g = [&](const Tensor &a) {
    return feedForward(a, wg, beta, wf, beta, Activation::Gelu);
  };
  auto [y1, y2] = reversible(x1, x2, f, g);
  expectTensorNear(y1, add(x1, f(x2)), 0);
  expectTensorNear(y2, add(x2, g(y1)), 0);

  // Recompute the inputs from the outputs: x2 = y2 - G(y1), x1 = y1 - F(x2).
  Tensor gy1 = g(y1), back2(y2.shape), back1(y1.shape);
  for (int64_t i = 0; i < y2.size(); ++i)
    back2.data[i] = y2.data[i] - gy1.data[i];
  Tensor fx2 = f(back2);
  for (int64_t i = 0; i < y1.size(); ++i)
    back1.data[i] = y1.data[i] - fx2.data[i];
  expectTensorNear(back2, x2, 1e-12);
  expectTensorNear(back1, x1, 1e-12);
}

TEST(SoftmaxCrossEntropy, UniformLogitsGiveLogVocab) {
  Tensor logits = Tensor::filled({2, 3, 5}, 0.7);
  Tensor labels({2, 3}, {0, 1, 2, 3, 4, 0});
  Tensor loss = softmaxCrossEntropy(logits, labels);
  EXPECT_EQ(loss.rank(), 0);
  EXPECT_NEAR(loss.data[0], std::log(5.0), 1e-14);
}

TEST(SoftmaxCrossEntropy, HandComputed) {
  // logits (0, ln3): logsumexp = ln 4. Label 1 -> ln(4/3); label 0 -> ln 4.
  Tensor logits({2, 2}, {0, kLn3, 0, kLn3});
  Tensor loss = softmaxCrossEntropy(logits, Tensor({2}, {1, 0}));
  EXPECT_NEAR(loss.data[0], (std::log(4.0 / 3) + std::log(4.0)) / 2, 1e-14);
  // Large logits stay finite (max subtraction).
  Tensor big({1, 2}, {1000, 1000});
  EXPECT_NEAR(softmaxCrossEntropy(big, Tensor({1}, {0})).data[0], std::log(2.0),
              1e-12);
  EXPECT_NE(errorOf([&] {
              softmaxCrossEntropy(logits, Tensor({2}, {1, 2}));
            }),
            "");
}

TEST(SoftmaxCrossEntropy, WeightedTwoPositions) {
  // As above, ce = (ln(4/3), ln 4). Weights (3, 1): (3 ln(4/3) + ln 4) / 4;
  // (0, 2): position 1 alone; equal weights: the plain mean.
  Tensor logits({2, 2}, {0, kLn3, 0, kLn3});
  Tensor labels({2}, {1, 0});
  Tensor weights({2}, {3, 1});
  EXPECT_NEAR(softmaxCrossEntropy(logits, labels, &weights).data[0],
              (3 * std::log(4.0 / 3) + std::log(4.0)) / 4, 1e-14);
  Tensor second({2}, {0, 2});
  EXPECT_NEAR(softmaxCrossEntropy(logits, labels, &second).data[0],
              std::log(4.0), 1e-14);
  Tensor equal = Tensor::filled({2}, 0.5);
  EXPECT_DOUBLE_EQ(softmaxCrossEntropy(logits, labels, &equal).data[0],
                   softmaxCrossEntropy(logits, labels).data[0]);

  Tensor zero({2}, {1, -1});
  EXPECT_EQ(errorOf([&] { softmaxCrossEntropy(logits, labels, &zero); }),
            "softmax_cross_entropy: the weights sum to 0");
  Tensor misshapen({1, 2}, {1, 1});
  EXPECT_EQ(errorOf([&] { softmaxCrossEntropy(logits, labels, &misshapen); }),
            "softmax_cross_entropy: weights: expected shape [2], got [1, 2]");
}

} // namespace
