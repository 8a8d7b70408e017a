//===- LSHAttentionTest.cpp - Hand-computed checks of LSH attention -------===//

#include "TestUtil.h"

#include <cmath>

using namespace lcc::reference;

namespace {

LSHAttentionOptions lsh(int64_t nHashes, int64_t bucketSize, bool causal,
                        uint64_t seed, std::optional<double> scale = {}) {
  LSHAttentionOptions options;
  options.nHashes = nHashes;
  options.bucketSize = bucketSize;
  options.causal = causal;
  options.seed = seed;
  options.scale = scale;
  return options;
}

TEST(LSHAttention, PaddedSeqIsAMultipleOfTwoBuckets) {
  EXPECT_EQ(lshPaddedSeq(256, 32), 256);
  EXPECT_EQ(lshPaddedSeq(200, 32), 256);
  EXPECT_EQ(lshPaddedSeq(65, 32), 128);
  EXPECT_EQ(lshPaddedSeq(1, 1), 2);
}

TEST(LSHAttention, RotationsFollowTheDocumentedStream) {
  // Computed apart from this code (Python, the formulas of Reference.h):
  // the first four values from seed 7, before their rounding to f32.
  Tensor r = lshRotations(2, 1, 2, 7);
  const double expected[] = {1.3649922974572282, -0.3965239752538177,
                             0.004498526159831532, -0.5806130552620294};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(r.data[i], static_cast<double>(static_cast<float>(expected[i])))
        << "value " << i;
  }
  // Row-major over [head_dim, n_hashes, half]: more rounds continue the
  // same stream, so the first values stay.
  Tensor wider = lshRotations(2, 3, 2, 7);
  EXPECT_EQ(wider.data[0], r.data[0]);
  EXPECT_EQ(wider.data[1], r.data[1]);
  EXPECT_NE(lshRotations(2, 1, 2, 8).data, r.data);
}

// One head, seq 4, head_dim 2, bucket 1: padded 4, so 4 buckets, half 2.
// Two rounds: R_0 = identity (xR = (x0, x1)) and R_1 = the swap (xR =
// (x1, x0)). Candidates, in tie order: +xR_0 -> bucket 0, -xR_0 -> 2,
// +xR_1 -> 1, -xR_1 -> 3.
//   token            round 0                    round 1 (xR = (x1, x0))
//   p0 = ( 0, 2)     +x1 = 2         -> 1       +xR_0 = 2        -> 0
//   p1 = ( 3, 1)     +x0 = 3         -> 0       +xR_1 = 3        -> 1
//   p2 = (-1, 1)     -x0 = +x1 = 1   -> 2 (-xR_0 before +xR_1)
//                                               +xR_0 = -xR_1 = 1 -> 0
//   p3 = ( 1, 1)     +x0 = +x1 = 1   -> 0       +xR_0 = +xR_1 = 1 -> 0
// Sorted by (bucket, position), one token per chunk:
//   round 0: p1 p3 p0 p2;   round 1: p0 p2 p3 p1.
// With one round, each chunk attends to itself and the chunk before it
// (the first to the last): p1<-p2, p3<-p1, p0<-p3, p2<-p0. With both, the
// rounds' orders run end to end, p1 p3 p0 p2 p0 p2 p3 p1, and a round's
// first chunk looks back at the previous round's last: round 0's p1 at
// round 1's p1 (itself), round 1's p0 at round 0's p2.
// The self score -1e5 leaves each query all its weight on the other key
// (exp(-1e5) is 0 in double), and the round's logsumexp is that key's
// score q_i . k_j / ||k_j||.
struct HandLSH {
  Tensor qk{{1, 1, 4, 2}, {0, 2, 3, 1, -1, 1, 1, 1}};
  Tensor v{{1, 1, 4, 1}, {10, 20, 30, 40}};
  Tensor rotations{{2, 2, 2},     // [dim, round, j]
                   {1, 0, 0, 1,   // dim 0: R_0 = (1, 0), R_1 = (0, 1)
                    0, 1, 1, 0}}; // dim 1: R_0 = (0, 1), R_1 = (1, 0)
};

TEST(LSHAttention, HandComputedBuckets) {
  HandLSH c;
  Tensor buckets = lshBuckets(c.qk, c.rotations, lsh(2, 1, false, 0));
  expectTensorNear(buckets, Tensor({1, 1, 2, 4}, {1, 0, 2, 0, 0, 1, 0, 0}), 0);
}

TEST(LSHAttention, HandComputedOneRound) {
  HandLSH c;
  Tensor firstRound({2, 1, 2}, {1, 0, 0, 1});
  Tensor out = lshAttentionWithRotations(c.qk, c.v, firstRound,
                                         lsh(1, 1, /*causal=*/false, 0, 1.0));
  // p0 <- p3, p1 <- p2, p2 <- p0, p3 <- p1.
  expectTensorNear(out, Tensor({1, 1, 4, 1}, {40, 30, 10, 20}), 1e-12);
  // Causal: a previous token at a later position is hidden, leaving only
  // the query itself (p0, p1).
  Tensor causal = lshAttentionWithRotations(c.qk, c.v, firstRound,
                                            lsh(1, 1, /*causal=*/true, 0, 1.0));
  expectTensorNear(causal, Tensor({1, 1, 4, 1}, {10, 20, 10, 20}), 1e-12);
}

TEST(LSHAttention, HandComputedRoundsCombinedByLogSumExp) {
  HandLSH c;
  Tensor out = lshAttentionWithRotations(c.qk, c.v, c.rotations,
                                         lsh(2, 1, /*causal=*/false, 0, 1.0));
  // Each round's output of p_i is the value of its one key j, weighted by
  // exp(q_i . k_j / ||k_j||):
  //   p0: p3 (score 2/sqrt2) and p2 (2/sqrt2);
  //   p1: only itself in round 0 (two self scores: logsumexp -1e5 + ln 2,
  //       a weight of 0), p3 (4/sqrt2) in round 1;
  //   p2: p0 in both rounds;
  //   p3: p1 (4/sqrt10) and p2 (0).
  auto mix = [](double s0, double v0, double s1, double v1) {
    return (std::exp(s0) * v0 + std::exp(s1) * v1) /
           (std::exp(s0) + std::exp(s1));
  };
  double r2 = std::sqrt(2.0), r10 = std::sqrt(10.0);
  Tensor expected({1, 1, 4, 1}, {mix(2 / r2, 40, 2 / r2, 30), 40, 10,
                                 mix(4 / r10, 20, 0, 30)});
  expectTensorNear(out, expected, 1e-12);
}

// n_buckets apart from the chunks: buckets of their own, chunks of the
// bucket size all the same. Four tokens in chunks of 2, hashed into 2
// buckets by the identity rotation (+x0 -> 0, -x0 -> 1): p0, p1 and p3 in
// bucket 0, p2 in 1; sorted p0 p1 p3 | p2, so p0 and p1 see each other
// only (and the chunk p3 p2 before them), p3 and p2 see p0 p1 and
// themselves.
TEST(LSHAttention, BucketCountOfItsOwn) {
  Tensor qk({1, 1, 4, 1}, {1, 2, -1, 3});
  Tensor v({1, 1, 4, 1}, {10, 20, 30, 40});
  LSHAttentionOptions options = lsh(1, 2, false, 0, 1.0);
  options.nBuckets = 2;
  Tensor rotations({1, 1, 1}, {1});
  expectTensorNear(lshBuckets(qk, rotations, options),
                   Tensor({1, 1, 1, 4}, {0, 0, 1, 0}), 0);
  // Keys are the signs of the tokens; scores q_i * sign(q_j) but -1e5 for
  // j = i.
  auto softmaxOf = [](std::vector<std::pair<double, double>> scored) {
    double top = -1e300, total = 0, sum = 0;
    for (auto [s, value] : scored)
      top = std::max(top, s);
    for (auto [s, value] : scored) {
      total += std::exp(s - top);
      sum += std::exp(s - top) * value;
    }
    return sum / total;
  };
  // Chunk 0 = (p0, p1) looks back at chunk 1 = (p3, p2).
  double p0 = softmaxOf({{-1e5, 10}, {1, 20}, {1, 40}, {-1, 30}});
  double p1 = softmaxOf({{2, 10}, {-1e5, 20}, {2, 40}, {-2, 30}});
  double p3 = softmaxOf({{-1e5, 40}, {-3, 30}, {3, 10}, {3, 20}});
  double p2 = softmaxOf({{-1, 40}, {-1e5, 30}, {-1, 10}, {-1, 20}});
  expectTensorNear(lshAttentionWithRotations(qk, v, rotations, options),
                   Tensor({1, 1, 4, 1}, {p0, p1, p2, p3}), 1e-12);
  options.nBuckets = 3;
  EXPECT_EQ(errorOf([&] { lshAttention(qk, v, options); }),
            "lsh_attention: n_buckets must be even and >= 2, got 3");
}

// seq <= 2 * bucket and one round: the two chunks see each other, so
// every token sees the whole sequence whatever the hashes, and LSH is
// shared-QK attention (seq 11 also pads: the padded keys must stay hidden).
// With more rounds a round's first chunk looks back at the previous
// round's last, which need not hold the tokens of its own round's other
// chunk.
TEST(LSHAttention, OneNeighbourhoodEqualsSharedQKAttention) {
  SplitMix64 rng(5);
  for (int64_t seq : {16, 11}) {
    Tensor qk = randomTensor({2, 3, seq, 8}, rng);
    Tensor v = randomTensor({2, 3, seq, 6}, rng);
    for (bool causal : {false, true}) {
      SCOPED_TRACE("seq " + std::to_string(seq) + ", causal " +
                   std::to_string(causal));
      Tensor lsh1 = lshAttention(qk, v, lsh(1, 8, causal, 42));
      Tensor dense = attention(qk, qk, v, causal, std::nullopt, true);
      expectTensorNear(lsh1, dense, 1e-12);
      Tensor scaled = lshAttention(qk, v, lsh(1, 8, causal, 42, 0.3));
      expectTensorNear(scaled, attention(qk, qk, v, causal, 0.3, true), 1e-12);
    }
  }
}

TEST(LSHAttention, SmallBucketsDifferFromDenseAndDependOnTheSeed) {
  // Four chunks: a token no longer sees every other, and the seed decides
  // which.
  SplitMix64 rng(6);
  Tensor qk = randomTensor({1, 1, 32, 8}, rng),
         v = randomTensor({1, 1, 32, 4}, rng);
  Tensor dense = attention(qk, qk, v, false, std::nullopt, true);
  Tensor a = lshAttention(qk, v, lsh(1, 4, false, 1));
  Tensor b = lshAttention(qk, v, lsh(1, 4, false, 2));
  EXPECT_TRUE(allFinite(a));
  EXPECT_NE(a.data, dense.data);
  EXPECT_NE(a.data, b.data);
  EXPECT_EQ(lshAttention(qk, v, lsh(1, 4, false, 1)).data, a.data);
}

TEST(LSHAttention, RejectsBadOperands) {
  Tensor qk({1, 1, 4, 2}), v({1, 1, 4, 3});
  EXPECT_EQ(errorOf([&] { lshAttention(qk, v, lsh(0, 2, false, 1)); }),
            "lsh_attention: n_hashes must be >= 1, got 0");
  EXPECT_EQ(errorOf([&] { lshAttention(qk, v, lsh(1, 0, false, 1)); }),
            "lsh_attention: bucket_size must be >= 1, got 0");
  EXPECT_EQ(errorOf([&] {
              lshAttention(qk, Tensor({1, 1, 5, 3}), lsh(1, 2, false, 1));
            }),
            "lsh_attention: value: expected shape [1, 1, 4, 3], got "
            "[1, 1, 5, 3]");
  EXPECT_EQ(errorOf([&] {
              lshAttentionWithRotations(qk, v, Tensor({2, 1, 2}),
                                        lsh(1, 2, false, 0));
            }),
            "lsh_attention: rotations: expected shape [2, 1, 1], got "
            "[2, 1, 2]");
}

} // namespace
