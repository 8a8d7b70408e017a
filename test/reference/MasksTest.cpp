//===- MasksTest.cpp - the named masks and modified attention -------------===//

#include "Masks.h"
#include "Random.h"
#include "Reference.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace lcc::reference;

namespace {

std::vector<std::string> rowsOf(const PositionMask &mask, int64_t seq,
                                int64_t h = 0) {
  std::vector<std::string> rows;
  for (int64_t i = 0; i < seq; ++i) {
    std::string row;
    for (int64_t j = 0; j < seq; ++j)
      row += mask(0, h, i, j) ? '1' : '0';
    rows.push_back(row);
  }
  return rows;
}

TEST(NamedMasks, ListedByHand) {
  EXPECT_EQ(
      rowsOf(namedMask("sliding:2"), 5),
      (std::vector<std::string>{"11000", "11100", "01110", "00111", "00011"}));
  EXPECT_EQ(rowsOf(namedMask("longformer:1,1"), 4),
            (std::vector<std::string>{"1111", "1100", "1010", "1001"}));
  EXPECT_EQ(rowsOf(namedMask("documents:2,3"), 6),
            (std::vector<std::string>{"110000", "110000", "001110", "001110",
                                      "001110", "000001"}));
  EXPECT_EQ(rowsOf(namedMask("lag:2"), 4),
            (std::vector<std::string>{"0000", "0000", "1000", "1100"}));
  // Blocks of 1, no window beyond the neighbours, no global block, and the
  // random pairs (31 qb + 17 kb + 0) mod 101 < 40: (0,0) 0, (0,3) 51,
  // (3,0) 93, (2,0) 62, (0,2) 34.
  PositionMask bigbird = namedMask("bigbird:1,0,40,0");
  EXPECT_TRUE(bigbird(0, 0, 0, 2));
  EXPECT_FALSE(bigbird(0, 0, 0, 3));
  EXPECT_FALSE(bigbird(0, 0, 3, 0));
  EXPECT_FALSE(bigbird(0, 0, 2, 0));
  EXPECT_TRUE(bigbird(0, 0, 2, 3)); // neighbouring blocks
}

TEST(NamedMasks, RejectsBadSpecs) {
  for (const char *spec : {"sliding", "sliding:1,2", "window:3", "sliding:-1",
                           "bigbird:0,1,1,1", "documents"})
    EXPECT_NE(errorOf([&] { namedMask(spec); }), "") << spec;
  EXPECT_NE(errorOf([] { namedScore("alibi:3", 4); }), "");
  EXPECT_NE(errorOf([] { namedScore("softcap:0", 4); }), "");
}

TEST(NamedScores, AlibiAndSoftCap) {
  ScoreModifier alibi = namedScore("alibi", 4);
  // m_0 = 2^-2, m_3 = 2^-8.
  EXPECT_DOUBLE_EQ(alibi(1.0, 0, 0, 5, 1), 1.0 - 0.25 * 4);
  EXPECT_DOUBLE_EQ(alibi(0.0, 0, 3, 2, 2), 0.0);
  EXPECT_DOUBLE_EQ(alibi(0.0, 0, 3, 9, 1), -8.0 / 256.0);
  ScoreModifier cap = namedScore("softcap:2", 1);
  EXPECT_DOUBLE_EQ(cap(1.0, 0, 0, 0, 0), 2.0 * std::tanh(0.5));
}

TEST(ModifiedAttention, AgreesWithTheOtherForms) {
  SplitMix64 rng(5);
  Shape shape{1, 2, 9, 4};
  Tensor q = randomTensor(shape, rng), k = randomTensor(shape, rng),
         v = randomTensor(shape, rng);
  for (bool causal : {false, true}) {
    // No mask, no score: dense attention.
    expectTensorNear(modifiedAttention(q, k, v, causal, std::nullopt, {}, {}),
                     attention(q, k, v, causal), 1e-14);
    // The strided pattern as a mask: sparse attention.
    PositionMask strided = [](int64_t, int64_t, int64_t i, int64_t j) {
      return sparseMaskAllows(SparsePattern::Strided, i, j, 3, 0, false);
    };
    expectTensorNear(
        modifiedAttention(q, k, v, causal, std::nullopt, strided, {}),
        sparseAttention(q, k, v, SparsePattern::Strided, 3, 0, causal), 1e-14);
  }
  // A score that adds a constant changes nothing (softmax is shift-free).
  ScoreModifier shift = [](double s, int64_t, int64_t, int64_t, int64_t) {
    return s + 3.0;
  };
  expectTensorNear(modifiedAttention(q, k, v, false, std::nullopt, {}, shift),
                   attention(q, k, v, false), 1e-12);
}

TEST(ModifiedAttention, QueriesThatSeeNoKeyGetZeros) {
  SplitMix64 rng(6);
  Shape shape{1, 1, 6, 3};
  Tensor q = randomTensor(shape, rng), k = randomTensor(shape, rng),
         v = randomTensor(shape, rng);
  Tensor out =
      modifiedAttention(q, k, v, false, std::nullopt, namedMask("lag:2"), {});
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t d = 0; d < 3; ++d)
      EXPECT_EQ(out.at({0, 0, i, d}), 0.0);
  // Query 2 sees key 0 only.
  for (int64_t d = 0; d < 3; ++d)
    EXPECT_NEAR(out.at({0, 0, 2, d}), v.at({0, 0, 0, d}), 1e-15);
}

} // namespace
