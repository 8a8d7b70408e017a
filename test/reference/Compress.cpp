//===- Compress.cpp - the Compressive Transformer's compression -----------===//
//
// attn.compress (docs/design.md §3, docs/attn-dialect.md) from its
// formula: each group of `rate` rows convolved with the weight. See
// Reference.h.
//
//===----------------------------------------------------------------------===//

#include "Reference.h"

namespace lcc::reference {

Tensor compress(const Tensor &x, const Tensor &weight, const Tensor &bias,
                int64_t rate) {
  const std::string op = "compress";
  if (x.rank() != 3)
    throw ReferenceError(op + ": x must be [batch, length, d], got " +
                         shapeToString(x.shape));
  if (rate < 1)
    throw ReferenceError(op + ": rate must be >= 1");
  int64_t batch = x.dim(0), length = x.dim(1), dim = x.dim(2);
  if (length % rate != 0)
    throw ReferenceError(op + ": length " + std::to_string(length) +
                         " is not a multiple of rate " + std::to_string(rate));
  if (weight.rank() != 3)
    throw ReferenceError(op + ": weight must be [rate, d, d_out], got " +
                         shapeToString(weight.shape));
  int64_t out = weight.dim(2);
  expectShape(weight, {rate, dim, out}, op + ": weight");
  expectShape(bias, {out}, op + ": bias");
  int64_t groups = length / rate;
  Tensor result({batch, groups, out});
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t < groups; ++t) {
      double *row = &result.data[(b * groups + t) * out];
      for (int64_t e = 0; e < out; ++e)
        row[e] = bias.data[e];
      for (int64_t r = 0; r < rate; ++r) {
        const double *in = &x.data[(b * length + t * rate + r) * dim];
        for (int64_t d = 0; d < dim; ++d) {
          const double *w = &weight.data[(r * dim + d) * out];
          for (int64_t e = 0; e < out; ++e)
            row[e] += in[d] * w[e];
        }
      }
    }
  return result;
}

} // namespace lcc::reference
