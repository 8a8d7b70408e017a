//===- AdaptiveSpanAttention.cpp - adaptive span, the reference -----------===//
//
// attn.adaptive_span_attention (docs/design.md §3, docs/attn-dialect.md)
// straight from its formula: a softmax over each query's visible keys,
// the soft span mask applied after it and the weights renormalised. See
// Reference.h.
//
//===----------------------------------------------------------------------===//

#include "Reference.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace lcc::reference {

Tensor adaptiveSpanAttention(const Tensor &q, const Tensor &k, const Tensor &v,
                             const Tensor &z,
                             const AdaptiveSpanOptions &options) {
  const std::string op = "adaptive_span_attention";
  expectMemoryAttentionOperands(q, k, v, op);
  int64_t batch = q.dim(0), heads = q.dim(1), querySeq = q.dim(2),
          headDim = q.dim(3), keySeq = k.dim(2), valueDim = v.dim(3);
  expectShape(z, {heads}, op + ": z");
  if (options.maxSpan < 1 || options.ramp < 1)
    throw ReferenceError(op + ": max_span and ramp must be >= 1");
  double scale = options.scale ? *options.scale
                               : 1.0 / std::sqrt(static_cast<double>(headDim));
  int64_t memory = keySeq - querySeq;
  double ramp = static_cast<double>(options.ramp);

  Tensor out({batch, heads, querySeq, valueDim});
  std::vector<double> scores(keySeq), spanMask(keySeq);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h) {
      double span = z.data[h] * static_cast<double>(options.maxSpan);
      for (int64_t i = 0; i < querySeq; ++i) {
        const double *query =
            &q.data[((b * heads + h) * querySeq + i) * headDim];
        double largest = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < keySeq; ++j) {
          double distance = static_cast<double>(memory + i - j);
          spanMask[j] = std::clamp((ramp + span - distance) / ramp, 0.0, 1.0);
          bool visible =
              ramp + span - distance > 0 && !(options.causal && distance < 0);
          if (!visible) {
            scores[j] = -std::numeric_limits<double>::infinity();
            continue;
          }
          const double *key = &k.data[((b * heads + h) * keySeq + j) * headDim];
          double dot = 0;
          for (int64_t d = 0; d < headDim; ++d)
            dot += query[d] * key[d];
          scores[j] = dot * scale;
          largest = std::max(largest, scores[j]);
        }
        if (largest == -std::numeric_limits<double>::infinity())
          continue; // Sees no key: zeros.
        // a = softmax; a' = a m / (sum a m + 1e-8).
        double total = 0, masked = 0;
        for (int64_t j = 0; j < keySeq; ++j) {
          scores[j] = std::exp(scores[j] - largest);
          total += scores[j];
        }
        for (int64_t j = 0; j < keySeq; ++j) {
          scores[j] = scores[j] / total * spanMask[j];
          masked += scores[j];
        }
        double *row = &out.data[((b * heads + h) * querySeq + i) * valueDim];
        for (int64_t j = 0; j < keySeq; ++j) {
          double weight = scores[j] / (masked + 1e-8);
          const double *value =
              &v.data[((b * heads + h) * keySeq + j) * valueDim];
          for (int64_t d = 0; d < valueDim; ++d)
            row[d] += weight * value[d];
        }
      }
    }
  return out;
}

} // namespace lcc::reference
