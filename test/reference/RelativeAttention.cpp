//===- RelativeAttention.cpp - Transformer-XL's ops, the reference --------===//
//
// attn.relative_attention (docs/design.md §3, docs/attn-dialect.md) as
// dense attention of q + u whose score modifier adds the position term of
// each visible key, from its distance; and the sinusoidal encodings of
// distances. See Reference.h.
//
//===----------------------------------------------------------------------===//

#include "Reference.h"

#include <algorithm>
#include <cmath>

namespace lcc::reference {

Tensor relativeAttention(const Tensor &q, const Tensor &k, const Tensor &v,
                         const Tensor &pos, const Tensor &u, const Tensor &w,
                         const RelativeAttentionOptions &options) {
  const std::string op = "relative_attention";
  expectMemoryAttentionOperands(q, k, v, op);
  int64_t batch = q.dim(0), heads = q.dim(1), querySeq = q.dim(2),
          headDim = q.dim(3), keySeq = k.dim(2);
  expectShape(pos, {heads, keySeq, headDim}, op + ": pos");
  expectShape(u, {heads, headDim}, op + ": u");
  expectShape(w, {heads, headDim}, op + ": w");
  if (options.clampLen && *options.clampLen < 0)
    throw ReferenceError(op + ": clamp_len must be >= 0");
  if (options.sameLength && *options.sameLength < 1)
    throw ReferenceError(op + ": same_length must be >= 1");
  double scale = options.scale ? *options.scale
                               : 1.0 / std::sqrt(static_cast<double>(headDim));
  int64_t memory = keySeq - querySeq;

  // Dense attention of q + u with the position term as its score modifier:
  // query i is position M + i and sees keys 0 .. M + i, the nearest
  // `same_length` of them with that option.
  Tensor contentQueries = q;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < querySeq; ++i)
        for (int64_t d = 0; d < headDim; ++d)
          contentQueries.at({b, h, i, d}) += u.at({h, d});
  PositionMask visible = [&](int64_t, int64_t, int64_t i, int64_t j) {
    int64_t distance = memory + i - j;
    return distance >= 0 &&
           (!options.sameLength || distance < *options.sameLength);
  };
  ScoreModifier addPosition = [&](double score, int64_t b, int64_t h, int64_t i,
                                  int64_t j) {
    int64_t distance = memory + i - j;
    if (options.clampLen)
      distance = std::min(distance, *options.clampLen);
    // Rows of the row-major tensors: this runs for every score.
    const double *query = &q.data[((b * heads + h) * querySeq + i) * headDim];
    const double *bias = &w.data[h * headDim];
    const double *encoding = &pos.data[(h * keySeq + distance) * headDim];
    double position = 0;
    for (int64_t d = 0; d < headDim; ++d)
      position += (query[d] + bias[d]) * encoding[d];
    return score + position * scale;
  };
  return modifiedAttention(contentQueries, k, v, /*causal=*/false, scale,
                           visible, addPosition);
}

Tensor sinusoidalEncoding(int64_t positions, int64_t dim) {
  if (positions < 1 || dim < 2 || dim % 2 != 0)
    throw ReferenceError("sinusoidal_encoding: expected [positions >= 1, "
                         "even dim >= 2], got [" +
                         std::to_string(positions) + ", " +
                         std::to_string(dim) + "]");
  int64_t half = dim / 2;
  Tensor out({positions, dim});
  for (int64_t i = 0; i < half; ++i) {
    float frequency =
        static_cast<float>(std::pow(10000.0, -2.0 * double(i) / double(dim)));
    for (int64_t t = 0; t < positions; ++t) {
      double angle = static_cast<float>(static_cast<float>(t) * frequency);
      out.at({t, i}) = std::sin(angle);
      out.at({t, half + i}) = std::cos(angle);
    }
  }
  return out;
}

} // namespace lcc::reference
