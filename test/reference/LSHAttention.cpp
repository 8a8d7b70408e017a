//===- LSHAttention.cpp - Reformer LSH attention, the reference -----------===//
//
// attn.lsh_attention (docs/design.md §3, docs/attn-dialect.md) one
// (batch, head) row at a time: hash, sort every round, attend within chunks
// of the rounds' sorted orders laid end to end, then combine the rounds.
// See Reference.h.
//
//===----------------------------------------------------------------------===//

#include "Random.h"
#include "Reference.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace lcc::reference {
namespace {

/// The shared-QK key of a zero token: its norm is floored, so it is the
/// zero vector (as torch.nn.functional.normalize and the compiler do).
constexpr double kMinKeyNorm = 1e-12;

void checkPositive(int64_t value, const std::string &what) {
  if (value < 1)
    throw ReferenceError("lsh_attention: " + what + " must be >= 1, got " +
                         std::to_string(value));
}

/// Sizes of one lsh_attention.
struct LSHDims {
  int64_t batch, heads, seq, headDim, valueDim;
  int64_t padded, chunks, buckets;
};

LSHDims checkOperands(const Tensor &qk, const Tensor &v,
                      const LSHAttentionOptions &options) {
  int64_t bucketSize = options.bucketSize;
  checkPositive(bucketSize, "bucket_size");
  if (qk.rank() != 4)
    throw ReferenceError("lsh_attention: query_key must be [batch, heads, "
                         "seq, head_dim], got " +
                         shapeToString(qk.shape));
  for (int64_t d : qk.shape)
    if (d < 1)
      throw ReferenceError("lsh_attention: query_key has an empty dimension: " +
                           shapeToString(qk.shape));
  if (v.rank() != 4 || v.dim(3) < 1)
    throw ReferenceError("lsh_attention: value must be [batch, heads, seq, "
                         "v_dim], got " +
                         shapeToString(v.shape));
  LSHDims d;
  d.batch = qk.dim(0);
  d.heads = qk.dim(1);
  d.seq = qk.dim(2);
  d.headDim = qk.dim(3);
  d.valueDim = v.dim(3);
  expectShape(v, {d.batch, d.heads, d.seq, d.valueDim}, "lsh_attention: value");
  d.padded = options.paddedSeq(d.seq);
  d.chunks = d.padded / bucketSize;
  d.buckets = options.bucketCount(d.seq);
  return d;
}

/// Token p of row (b, h), zero at a padded position.
std::vector<double> token(const Tensor &qk, const LSHDims &d, int64_t b,
                          int64_t h, int64_t p) {
  std::vector<double> x(d.headDim, 0.0);
  if (p < d.seq)
    for (int64_t k = 0; k < d.headDim; ++k)
      x[k] = qk.at({b, h, p, k});
  return x;
}

/// The bucket of token x in round r: the argmax over the candidates
/// +xR_0, -xR_0, +xR_1, -xR_1, ... taken in that order, the first of equal
/// maxima kept (a strict comparison). A NaN token stays in bucket 0.
/// Columns [first, first + half) of the rotations hash alone (the
/// factorized hash's two halves); by default all of them.
int64_t hashToken(const std::vector<double> &x, const Tensor &rotations,
                  int64_t r, int64_t first = 0, int64_t half = -1) {
  if (half < 0)
    half = rotations.dim(2);
  int64_t best = 0;
  double bestValue = -std::numeric_limits<double>::infinity();
  for (int64_t j = 0; j < half; ++j) {
    double projected = 0;
    for (size_t k = 0; k < x.size(); ++k)
      projected += x[k] * rotations.at({int64_t(k), r, first + j});
    if (projected > bestValue) {
      bestValue = projected;
      best = j;
    }
    if (-projected > bestValue) {
      bestValue = -projected;
      best = half + j;
    }
  }
  return best;
}

} // namespace

int64_t lshPaddedSeq(int64_t seq, int64_t bucketSize) {
  checkPositive(bucketSize, "bucket_size");
  int64_t twoBuckets = 2 * bucketSize;
  return (seq + twoBuckets - 1) / twoBuckets * twoBuckets;
}

int64_t LSHAttentionOptions::paddedSeq(int64_t seq) const {
  if (!nBuckets)
    return lshPaddedSeq(seq, bucketSize);
  checkPositive(bucketSize, "bucket_size");
  return (seq + bucketSize - 1) / bucketSize * bucketSize;
}

int64_t LSHAttentionOptions::bucketCount(int64_t seq) const {
  if (!nBuckets)
    return paddedSeq(seq) / bucketSize;
  if (*nBuckets < 2 || *nBuckets % 2 != 0)
    throw ReferenceError("lsh_attention: n_buckets must be even and >= 2, "
                         "got " +
                         std::to_string(*nBuckets));
  return *nBuckets;
}

int64_t LSHAttentionOptions::rotationColumns(int64_t seq) const {
  int64_t buckets = bucketCount(seq);
  if (!factorized)
    return buckets / 2;
  auto [n1, n2] = lshHashFactors(buckets);
  return (n1 + n2) / 2;
}

Tensor lshRotations(int64_t headDim, int64_t nHashes, int64_t columns,
                    uint64_t seed) {
  checkPositive(headDim, "head_dim");
  checkPositive(nHashes, "n_hashes");
  checkPositive(columns, "n_buckets / 2");
  const double pi = 3.14159265358979323846;
  SplitMix64 random(seed);
  // Half a step off the grid keeps u in (0, 1): ln u is finite.
  auto uniform = [&] {
    return (static_cast<double>(random.nextU64() >> 11) + 0.5) * 0x1.0p-53;
  };
  Tensor rotations({headDim, nHashes, columns});
  for (double &value : rotations.data) {
    double u1 = uniform();
    double u2 = uniform();
    value = static_cast<float>(std::sqrt(-2.0 * std::log(u1)) *
                               std::cos(2.0 * pi * u2));
  }
  return rotations;
}

std::pair<int64_t, int64_t> lshHashFactors(int64_t nBuckets) {
  if (nBuckets < 4 || nBuckets % 4 != 0)
    throw ReferenceError("lsh_attention: factorized hashing needs n_buckets "
                         "a multiple of 4, got " +
                         std::to_string(nBuckets));
  int64_t n1 = 2;
  for (int64_t f = 2; f * f <= nBuckets; f += 2)
    if (nBuckets % f == 0 && nBuckets / f % 2 == 0)
      n1 = f;
  return {n1, nBuckets / n1};
}

Tensor lshBuckets(const Tensor &qk, const Tensor &rotations,
                  const LSHAttentionOptions &options) {
  LSHDims d = checkOperands(qk, qk, options);
  if (rotations.rank() != 3)
    throw ReferenceError("lsh_attention: rotations must be [head_dim, "
                         "n_hashes, n_buckets / 2], got " +
                         shapeToString(rotations.shape));
  int64_t rounds = rotations.dim(1);
  checkPositive(rounds, "n_hashes");
  std::pair<int64_t, int64_t> factors{0, 0};
  if (options.factorized)
    factors = lshHashFactors(d.buckets);
  expectShape(rotations, {d.headDim, rounds, options.rotationColumns(d.seq)},
              "lsh_attention: rotations");
  auto bucketOf = [&](const std::vector<double> &x, int64_t r) {
    if (!options.factorized)
      return hashToken(x, rotations, r);
    auto [n1, n2] = factors;
    return hashToken(x, rotations, r, 0, n1 / 2) +
           n1 * hashToken(x, rotations, r, n1 / 2, n2 / 2);
  };
  Tensor buckets({d.batch, d.heads, rounds, d.padded});
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t h = 0; h < d.heads; ++h)
      for (int64_t p = 0; p < d.padded; ++p) {
        std::vector<double> x = token(qk, d, b, h, p);
        for (int64_t r = 0; r < rounds; ++r)
          buckets.at({b, h, r, p}) =
              static_cast<double>(p < d.seq ? bucketOf(x, r) : d.buckets);
      }
  return buckets;
}

namespace {

/// The shared-QK keys of row (b, h): its unit-normalised tokens.
std::vector<std::vector<double>> unitKeys(const Tensor &qk, const LSHDims &d,
                                          int64_t b, int64_t h) {
  std::vector<std::vector<double>> keys(d.padded);
  for (int64_t p = 0; p < d.padded; ++p) {
    keys[p] = token(qk, d, b, h, p);
    double norm = 0;
    for (double x : keys[p])
      norm += x * x;
    norm = std::max(std::sqrt(norm), kMinKeyNorm);
    for (double &x : keys[p])
      x /= norm;
  }
  return keys;
}

/// Every round's sorted order of row (b, h), end to end: [rounds *
/// padded] positions, each round stably sorted by (bucket, position).
std::vector<int64_t> sortedRounds(const Tensor &buckets, const LSHDims &d,
                                  int64_t rounds, int64_t b, int64_t h) {
  std::vector<int64_t> sorted;
  for (int64_t r = 0; r < rounds; ++r) {
    std::vector<int64_t> order(d.padded);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
      return buckets.at({b, h, r, x}) < buckets.at({b, h, r, y});
    });
    sorted.insert(sorted.end(), order.begin(), order.end());
  }
  return sorted;
}

} // namespace

Tensor lshAttentionWithRotations(const Tensor &qk, const Tensor &v,
                                 const Tensor &rotations,
                                 const LSHAttentionOptions &options) {
  LSHDims d = checkOperands(qk, v, options);
  Tensor buckets = lshBuckets(qk, rotations, options);
  int64_t rounds = rotations.dim(1);
  int64_t bucketSize = options.bucketSize;
  double scaleValue = options.scale
                          ? *options.scale
                          : 1.0 / std::sqrt(static_cast<double>(d.headDim));

  Tensor out({d.batch, d.heads, d.seq, d.valueDim});
  for (int64_t b = 0; b < d.batch; ++b) {
    for (int64_t h = 0; h < d.heads; ++h) {
      std::vector<std::vector<double>> keys = unitKeys(qk, d, b, h);
      std::vector<int64_t> sorted = sortedRounds(buckets, d, rounds, b, h);
      // Each round's output and logsumexp of every real token.
      std::vector<std::vector<std::vector<double>>> roundOut(
          rounds, std::vector<std::vector<double>>(d.seq));
      std::vector<std::vector<double>> roundLse(rounds,
                                                std::vector<double>(d.seq));
      int64_t chunks = rounds * d.chunks;
      for (int64_t c = 0; c < chunks; ++c) {
        int64_t r = c / d.chunks;
        int64_t previous = (c + chunks - 1) % chunks;
        std::vector<int64_t> chunkKeys;
        for (int64_t t = 0; t < bucketSize; ++t)
          chunkKeys.push_back(sorted[c * bucketSize + t]);
        for (int64_t t = 0; t < bucketSize; ++t)
          chunkKeys.push_back(sorted[previous * bucketSize + t]);

        for (int64_t t = 0; t < bucketSize; ++t) {
          int64_t i = sorted[c * bucketSize + t];
          if (i >= d.seq)
            continue; // a padded query's output is dropped
          std::vector<double> query = token(qk, d, b, h, i);
          std::vector<double> scores;
          std::vector<int64_t> visible;
          for (int64_t j : chunkKeys) {
            if (j >= d.seq || (options.causal && j > i))
              continue;
            double score = 0;
            for (int64_t k = 0; k < d.headDim; ++k)
              score += query[k] * keys[j][k];
            score *= scaleValue;
            if (j == i)
              score = kSharedQKSelfScore;
            scores.push_back(score);
            visible.push_back(j);
          }
          // The query itself is always visible, so scores is not empty.
          double maxScore = *std::max_element(scores.begin(), scores.end());
          double sum = 0;
          for (double &s : scores) {
            s = std::exp(s - maxScore);
            sum += s;
          }
          std::vector<double> result(d.valueDim, 0.0);
          for (size_t n = 0; n < visible.size(); ++n)
            for (int64_t e = 0; e < d.valueDim; ++e)
              result[e] += scores[n] / sum * v.at({b, h, visible[n], e});
          roundOut[r][i] = result;
          roundLse[r][i] = maxScore + std::log(sum);
        }
      }

      // Rounds weighted by softmax over their logsumexps.
      for (int64_t i = 0; i < d.seq; ++i) {
        double top = -std::numeric_limits<double>::infinity();
        for (int64_t r = 0; r < rounds; ++r)
          top = std::max(top, roundLse[r][i]);
        double total = 0;
        for (int64_t r = 0; r < rounds; ++r)
          total += std::exp(roundLse[r][i] - top);
        for (int64_t r = 0; r < rounds; ++r) {
          double weight = std::exp(roundLse[r][i] - top) / total;
          for (int64_t e = 0; e < d.valueDim; ++e)
            out.at({b, h, i, e}) += weight * roundOut[r][i][e];
        }
      }
    }
  }
  return out;
}

Tensor lshAttention(const Tensor &qk, const Tensor &v,
                    const LSHAttentionOptions &options) {
  LSHDims d = checkOperands(qk, v, options);
  checkPositive(options.nHashes, "n_hashes");
  Tensor rotations = lshRotations(d.headDim, options.nHashes,
                                  options.rotationColumns(d.seq), options.seed);
  return lshAttentionWithRotations(qk, v, rotations, options);
}

} // namespace lcc::reference
