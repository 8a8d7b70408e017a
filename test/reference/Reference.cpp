//===- Reference.cpp - Independent double-precision reference of lcc ops --===//
//
// Each function transcribes the math of one op; see Reference.h.
//
//===----------------------------------------------------------------------===//

#include "Reference.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace lcc::reference {

//===----------------------------------------------------------------------===//
// Tensor
//===----------------------------------------------------------------------===//

std::string shapeToString(const Shape &shape) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < shape.size(); ++i)
    os << (i ? ", " : "") << shape[i];
  os << "]";
  return os.str();
}

int64_t numElements(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      throw ReferenceError("negative dimension in shape " +
                           shapeToString(shape));
    n *= d;
  }
  return n;
}

Tensor::Tensor(Shape shape)
    : shape(shape), data(static_cast<size_t>(numElements(shape)), 0.0) {}

Tensor Tensor::filled(Shape shape, double value) {
  Tensor t(shape);
  for (double &x : t.data)
    x = value;
  return t;
}

Tensor::Tensor(Shape shape, std::vector<double> data)
    : shape(shape), data(std::move(data)) {
  if (static_cast<int64_t>(this->data.size()) != numElements(shape))
    throw ReferenceError("tensor of shape " + shapeToString(shape) + " needs " +
                         std::to_string(numElements(shape)) + " values, got " +
                         std::to_string(this->data.size()));
}

int64_t Tensor::dim(int64_t i) const {
  int64_t r = rank();
  if (i < -r || i >= r)
    throw ReferenceError("dimension " + std::to_string(i) +
                         " out of range for shape " + shapeToString(shape));
  return shape[static_cast<size_t>(i < 0 ? i + r : i)];
}

int64_t Tensor::offset(const std::vector<int64_t> &index) const {
  if (index.size() != shape.size())
    throw ReferenceError("index of rank " + std::to_string(index.size()) +
                         " into tensor of shape " + shapeToString(shape));
  int64_t flat = 0;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (index[i] < 0 || index[i] >= shape[i])
      throw ReferenceError("index " + shapeToString(index) +
                           " out of bounds for shape " + shapeToString(shape));
    flat = flat * shape[i] + index[i];
  }
  return flat;
}

double &Tensor::at(const std::vector<int64_t> &index) {
  return data[static_cast<size_t>(offset(index))];
}

double Tensor::at(const std::vector<int64_t> &index) const {
  return data[static_cast<size_t>(offset(index))];
}

void expectShape(const Tensor &t, const Shape &expected,
                 const std::string &what) {
  if (t.shape != expected)
    throw ReferenceError(what + ": expected shape " + shapeToString(expected) +
                         ", got " + shapeToString(t.shape));
}

void expectMemoryAttentionOperands(const Tensor &q, const Tensor &k,
                                   const Tensor &v, const std::string &op) {
  for (const Tensor *t : {&q, &k, &v})
    if (t->rank() != 4)
      throw ReferenceError(op +
                           ": q, k and v must be [batch, heads, seq, "
                           "head_dim], got " +
                           shapeToString(t->shape));
  int64_t batch = q.dim(0), heads = q.dim(1), keySeq = k.dim(2);
  expectShape(k, {batch, heads, keySeq, q.dim(3)}, op + ": k");
  expectShape(v, {batch, heads, keySeq, v.dim(3)}, op + ": v");
  if (keySeq < q.dim(2))
    throw ReferenceError(op + ": k has fewer positions (" +
                         std::to_string(keySeq) + ") than q (" +
                         std::to_string(q.dim(2)) + ")");
}

Tensor add(const Tensor &a, const Tensor &b) {
  expectShape(b, a.shape, "add: second operand");
  Tensor result(a.shape);
  for (int64_t i = 0; i < a.size(); ++i)
    result.data[i] = a.data[i] + b.data[i];
  return result;
}

namespace {

/// The value of an integer tensor element (token id, label), checked to be a
/// whole number in [0, limit).
int64_t indexValue(double value, int64_t limit, const std::string &what) {
  if (!(value >= 0 && value < static_cast<double>(limit)) ||
      value != std::floor(value)) {
    std::ostringstream os;
    os << what << " " << value << " is outside [0, " << limit << ")";
    throw ReferenceError(os.str());
  }
  return static_cast<int64_t>(value);
}

double dot(const double *a, const double *b, int64_t n) {
  // Four running sums: a single one is a chain of dependent adds, and the
  // attention scores are most of a gradient check's evaluations. In double,
  // the order costs nothing the checks could see.
  double sums[4] = {0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int lane = 0; lane < 4; ++lane)
      sums[lane] += a[i + lane] * b[i + lane];
  for (; i < n; ++i)
    sums[0] += a[i] * b[i];
  return (sums[0] + sums[1]) + (sums[2] + sums[3]);
}

//===----------------------------------------------------------------------===//
// Attention core
//===----------------------------------------------------------------------===//

/// Whether key j is visible to query i.
using Mask = std::function<bool(int64_t i, int64_t j)>;

/// What the core needs besides q, k, v: which keys each (b, h, i) sees,
/// how a scaled score changes, and what a query that sees no key gets.
struct AttentionRule {
  PositionMask visible;
  ScoreModifier modify; // may be empty
  bool emptyRowsGetZeros = false;
};

/// Sizes of q [B, H, Sq, D], k [B, H, Sk, D] and v [B, H, Sk, Dv].
struct AttentionDims {
  int64_t batch, heads, querySeq, keySeq, headDim, valueDim;
};

AttentionDims checkAttentionOperands(const std::string &op, const Tensor &q,
                                     const Tensor &k, const Tensor &v) {
  auto checkRank4 = [&](const char *name, const Tensor &t) {
    if (t.rank() != 4)
      throw ReferenceError(op + ": " + name +
                           " must be [batch, heads, seq, head_dim], got " +
                           shapeToString(t.shape));
    for (int64_t d : t.shape)
      if (d < 1)
        throw ReferenceError(op + ": " + name + " has an empty dimension: " +
                             shapeToString(t.shape));
  };
  checkRank4("query", q);
  checkRank4("key", k);
  checkRank4("value", v);
  AttentionDims dims{q.dim(0), q.dim(1), q.dim(2),
                     k.dim(2), q.dim(3), v.dim(3)};
  expectShape(k, {dims.batch, dims.heads, dims.keySeq, dims.headDim},
              op + ": key");
  expectShape(v, {dims.batch, dims.heads, dims.keySeq, dims.valueDim},
              op + ": value");
  return dims;
}

/// Flat offset of the vector t[b, h, s, :] of a rank-4 tensor.
int64_t rowOffset(const Tensor &t, int64_t b, int64_t h, int64_t s) {
  return ((b * t.shape[1] + h) * t.shape[2] + s) * t.shape[3];
}

const double *rowOf(const Tensor &t, int64_t b, int64_t h, int64_t s) {
  return t.data.data() + rowOffset(t, b, h, s);
}

double *rowOf(Tensor &t, int64_t b, int64_t h, int64_t s) {
  return t.data.data() + rowOffset(t, b, h, s);
}

/// softmax(q k^T * scale) v with masked scores left out of the softmax
/// entirely (weight exactly 0). With `sharedQK`, keys are the unit-normalised
/// queries and the self score is kSharedQKSelfScore.
Tensor ruledAttention(const std::string &op, const Tensor &q, const Tensor &k,
                      const Tensor &v, std::optional<double> scale,
                      const AttentionRule &rule, bool sharedQK) {
  AttentionDims dims = checkAttentionOperands(op, q, k, v);
  double scaleValue =
      scale ? *scale : 1.0 / std::sqrt(static_cast<double>(dims.headDim));

  // The keys the scores use: k itself, or the normalised queries.
  Tensor keys = k;
  if (sharedQK) {
    if (k.shape != q.shape || k.data != q.data)
      throw ReferenceError(op + ": shared_qk needs the key to be the query");
    // A zero query gives a zero key rather than NaN (a 0/0 choice: such a
    // key scores 0 against every query).
    for (int64_t b = 0; b < dims.batch; ++b)
      for (int64_t h = 0; h < dims.heads; ++h)
        for (int64_t j = 0; j < dims.keySeq; ++j) {
          double *key = rowOf(keys, b, h, j);
          double norm = std::sqrt(dot(key, key, dims.headDim));
          for (int64_t d = 0; d < dims.headDim; ++d)
            key[d] = norm > 0 ? key[d] / norm : 0.0;
        }
  }

  Tensor out({dims.batch, dims.heads, dims.querySeq, dims.valueDim});
  std::vector<double> scores;
  std::vector<int64_t> visibleKeys;
  for (int64_t b = 0; b < dims.batch; ++b) {
    for (int64_t h = 0; h < dims.heads; ++h) {
      for (int64_t i = 0; i < dims.querySeq; ++i) {
        const double *query = rowOf(q, b, h, i);
        scores.clear();
        visibleKeys.clear();
        for (int64_t j = 0; j < dims.keySeq; ++j) {
          if (!rule.visible(b, h, i, j))
            continue;
          double score =
              dot(query, rowOf(keys, b, h, j), dims.headDim) * scaleValue;
          if (rule.modify)
            score = rule.modify(score, b, h, i, j);
          if (sharedQK && j == i)
            score = kSharedQKSelfScore;
          scores.push_back(score);
          visibleKeys.push_back(j);
        }
        if (visibleKeys.empty()) {
          if (rule.emptyRowsGetZeros)
            continue; // the output row stays zero
          throw ReferenceError(op + ": query " + std::to_string(i) +
                               " sees no key");
        }

        // Stable softmax: subtracting the row max leaves it unchanged.
        double maxScore = *std::max_element(scores.begin(), scores.end());
        // Every visible score -inf (a score modifier's): no key has any
        // weight, and the row is zeros as if it saw none (docs/masks.md).
        if (maxScore == -std::numeric_limits<double>::infinity()) {
          if (rule.emptyRowsGetZeros)
            continue;
          throw ReferenceError(op + ": query " + std::to_string(i) +
                               " has only -inf scores");
        }
        double sum = 0;
        for (double &score : scores) {
          score = std::exp(score - maxScore);
          sum += score;
        }

        double *result = rowOf(out, b, h, i);
        for (size_t n = 0; n < visibleKeys.size(); ++n) {
          double weight = scores[n] / sum;
          const double *value = rowOf(v, b, h, visibleKeys[n]);
          for (int64_t d = 0; d < dims.valueDim; ++d)
            result[d] += weight * value[d];
        }
      }
    }
  }
  return out;
}

Tensor maskedAttention(const std::string &op, const Tensor &q, const Tensor &k,
                       const Tensor &v, std::optional<double> scale,
                       const Mask &visible, bool sharedQK) {
  AttentionRule rule;
  rule.visible = [&](int64_t, int64_t, int64_t i, int64_t j) {
    return visible(i, j);
  };
  return ruledAttention(op, q, k, v, scale, rule, sharedQK);
}

} // namespace

//===----------------------------------------------------------------------===//
// Attention ops
//===----------------------------------------------------------------------===//

Tensor modifiedAttention(const Tensor &q, const Tensor &k, const Tensor &v,
                         bool causal, std::optional<double> scale,
                         const PositionMask &mask, const ScoreModifier &modify,
                         bool sharedQK) {
  AttentionRule rule;
  rule.visible = [&](int64_t b, int64_t h, int64_t i, int64_t j) {
    return (!causal || j <= i) && (!mask || mask(b, h, i, j));
  };
  rule.modify = modify;
  rule.emptyRowsGetZeros = true;
  return ruledAttention("attention", q, k, v, scale, rule, sharedQK);
}

Tensor attention(const Tensor &q, const Tensor &k, const Tensor &v, bool causal,
                 std::optional<double> scale, bool sharedQK) {
  // The same rule with and without a mask or score (docs/masks.md): a
  // query whose every score is -inf gets zeros.
  return modifiedAttention(q, k, v, causal, scale, {}, {}, sharedQK);
}

namespace {
void checkSparseParameters(SparsePattern pattern, int64_t stride,
                           int64_t summary) {
  if (stride < 1)
    throw ReferenceError("sparse_attention: stride must be >= 1, got " +
                         std::to_string(stride));
  if (pattern == SparsePattern::Fixed && (summary < 0 || summary > stride))
    throw ReferenceError("sparse_attention: fixed summary must be in [0, "
                         "stride=" +
                         std::to_string(stride) + "], got " +
                         std::to_string(summary));
}
} // namespace

bool sparseMaskAllows(SparsePattern pattern, int64_t i, int64_t j,
                      int64_t stride, int64_t summary, bool causal) {
  checkSparseParameters(pattern, stride, summary);
  if (i < 0 || j < 0)
    throw ReferenceError("sparse mask: negative position");
  if (causal && j > i)
    return false;
  int64_t l = stride;
  switch (pattern) {
  case SparsePattern::Strided:
    // (i - j) % l is 0 exactly when l divides i - j, whatever its sign.
    return std::abs(i - j) < l || (i - j) % l == 0;
  case SparsePattern::Fixed:
    return j / l == i / l || j % l >= l - summary;
  }
  throw ReferenceError("sparse mask: unknown pattern");
}

Tensor sparseAttention(const Tensor &q, const Tensor &k, const Tensor &v,
                       SparsePattern pattern, int64_t stride, int64_t summary,
                       bool causal, std::optional<double> scale) {
  checkSparseParameters(pattern, stride, summary);
  AttentionDims dims = checkAttentionOperands("sparse_attention", q, k, v);
  if (dims.querySeq != dims.keySeq)
    throw ReferenceError("sparse_attention: query and key sequences differ: " +
                         std::to_string(dims.querySeq) + " vs " +
                         std::to_string(dims.keySeq));
  Mask visible = [=](int64_t i, int64_t j) {
    return sparseMaskAllows(pattern, i, j, stride, summary, causal);
  };
  return maskedAttention("sparse_attention", q, k, v, scale, visible,
                         /*sharedQK=*/false);
}

//===----------------------------------------------------------------------===//
// Model-level ops
//===----------------------------------------------------------------------===//

Tensor embedding(const Tensor &tokens, const Tensor &table) {
  if (table.rank() != 2)
    throw ReferenceError("embedding: table must be [vocab, d_model], got " +
                         shapeToString(table.shape));
  int64_t vocab = table.dim(0), dModel = table.dim(1);
  Shape shape = tokens.shape;
  shape.push_back(dModel);
  Tensor out(shape);
  for (int64_t p = 0; p < tokens.size(); ++p) {
    int64_t token = indexValue(tokens.data[p], vocab, "embedding: token");
    for (int64_t d = 0; d < dModel; ++d)
      out.data[p * dModel + d] = table.data[token * dModel + d];
  }
  return out;
}

Tensor layerNorm(const Tensor &x, const Tensor &gamma, const Tensor &beta,
                 double epsilon) {
  if (x.rank() < 1 || x.dim(-1) < 1)
    throw ReferenceError("layer_norm: input needs a non-empty last dimension, "
                         "got " +
                         shapeToString(x.shape));
  int64_t n = x.dim(-1);
  expectShape(gamma, {n}, "layer_norm: gamma");
  expectShape(beta, {n}, "layer_norm: beta");
  Tensor out(x.shape);
  for (int64_t row = 0; row < x.size() / n; ++row) {
    const double *in = x.data.data() + row * n;
    double mean = 0;
    for (int64_t i = 0; i < n; ++i)
      mean += in[i];
    mean /= n;
    double variance = 0; // biased: divide by n, not n - 1
    for (int64_t i = 0; i < n; ++i)
      variance += (in[i] - mean) * (in[i] - mean);
    variance /= n;
    double invStd = 1.0 / std::sqrt(variance + epsilon);
    for (int64_t i = 0; i < n; ++i)
      out.data[row * n + i] =
          (in[i] - mean) * invStd * gamma.data[i] + beta.data[i];
  }
  return out;
}

Tensor linear(const Tensor &x, const Tensor &weight, const Tensor *bias) {
  if (weight.rank() != 2)
    throw ReferenceError("linear: weight must be [in, out], got " +
                         shapeToString(weight.shape));
  int64_t in = weight.dim(0), outDim = weight.dim(1);
  if (x.rank() < 1 || x.dim(-1) != in)
    throw ReferenceError("linear: input " + shapeToString(x.shape) +
                         " does not end in weight's in-dimension " +
                         std::to_string(in));
  if (bias)
    expectShape(*bias, {outDim}, "linear: bias");
  Shape shape = x.shape;
  shape.back() = outDim;
  Tensor out(shape);
  int64_t rows = numElements(Shape(x.shape.begin(), x.shape.end() - 1));
  // out[r, o] = bias[o] + sum_i x[r, i] * weight[i, o], added in increasing
  // i. Each sum still adds the same terms in the same order; the loops are
  // only arranged for the cache, as the gradient check runs the models
  // hundreds of times: o innermost, so that weight is read row by row; four
  // terms per pass over a sum held in a register; and a block of rows and a
  // tile of columns at a time, so that the weight rows of a pass serve every
  // row of the block from L1 instead of streaming the matrix once per row.
  constexpr int64_t kRowBlock = 8, kColumnTile = 256, kTermsPerPass = 4;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < outDim; ++o)
      out.data[r * outDim + o] = bias ? bias->data[o] : 0.0;
  const double *w = weight.data.data();
  for (int64_t r0 = 0; r0 < rows; r0 += kRowBlock) {
    int64_t r1 = std::min(rows, r0 + kRowBlock);
    for (int64_t o0 = 0; o0 < outDim; o0 += kColumnTile) {
      int64_t o1 = std::min(outDim, o0 + kColumnTile);
      int64_t i = 0;
      for (; i + kTermsPerPass <= in; i += kTermsPerPass) {
        const double *w0 = w + i * outDim, *w1 = w0 + outDim,
                     *w2 = w1 + outDim, *w3 = w2 + outDim;
        for (int64_t r = r0; r < r1; ++r) {
          const double *xr = x.data.data() + r * in + i;
          double x0 = xr[0], x1 = xr[1], x2 = xr[2], x3 = xr[3];
          double *sum = out.data.data() + r * outDim;
          for (int64_t o = o0; o < o1; ++o) {
            double s = sum[o];
            s += x0 * w0[o];
            s += x1 * w1[o];
            s += x2 * w2[o];
            s += x3 * w3[o];
            sum[o] = s;
          }
        }
      }
      for (; i < in; ++i)
        for (int64_t r = r0; r < r1; ++r) {
          double xi = x.data[r * in + i];
          double *sum = out.data.data() + r * outDim;
          for (int64_t o = o0; o < o1; ++o)
            sum[o] += xi * w[i * outDim + o];
        }
    }
  }
  return out;
}

double relu(double x) { return x > 0 ? x : 0.0; }

double gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }

Tensor feedForward(const Tensor &x, const Tensor &up, const Tensor &upBias,
                   const Tensor &down, const Tensor &downBias,
                   Activation activation) {
  Tensor hidden = linear(x, up, &upBias);
  for (double &h : hidden.data)
    h = activation == Activation::Gelu ? gelu(h) : relu(h);
  return linear(hidden, down, &downBias);
}

Tensor splitHeads(const Tensor &x, int64_t heads) {
  if (x.rank() != 3)
    throw ReferenceError("split heads: input must be [batch, seq, features], "
                         "got " +
                         shapeToString(x.shape));
  int64_t batch = x.dim(0), seq = x.dim(1), features = x.dim(2);
  if (heads < 1 || features % heads != 0)
    throw ReferenceError("split heads: " + std::to_string(features) +
                         " features do not split into " +
                         std::to_string(heads) + " heads");
  int64_t headDim = features / heads;
  Tensor out({batch, heads, seq, headDim});
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t s = 0; s < seq; ++s)
        for (int64_t d = 0; d < headDim; ++d)
          out.at({b, h, s, d}) = x.at({b, s, h * headDim + d});
  return out;
}

Tensor mergeHeads(const Tensor &x) {
  if (x.rank() != 4)
    throw ReferenceError("merge heads: input must be [batch, heads, seq, "
                         "head_dim], got " +
                         shapeToString(x.shape));
  int64_t batch = x.dim(0), heads = x.dim(1), seq = x.dim(2),
          headDim = x.dim(3);
  Tensor out({batch, seq, heads * headDim});
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t s = 0; s < seq; ++s)
        for (int64_t d = 0; d < headDim; ++d)
          out.at({b, s, h * headDim + d}) = x.at({b, h, s, d});
  return out;
}

Tensor multiHeadAttention(const Tensor &x, const Tensor &queryWeight,
                          const Tensor *keyWeight, const Tensor &valueWeight,
                          const Tensor &outputWeight, int64_t heads,
                          const AttentionBody &body) {
  if (x.rank() != 3)
    throw ReferenceError("multi_head_attention: input must be [batch, seq, "
                         "d_model], got " +
                         shapeToString(x.shape));
  std::vector<Tensor> args;
  args.push_back(splitHeads(linear(x, queryWeight), heads));
  if (keyWeight)
    args.push_back(splitHeads(linear(x, *keyWeight), heads));
  args.push_back(splitHeads(linear(x, valueWeight), heads));

  Tensor perHead = body(args);
  const Tensor &value = args.back();
  if (perHead.rank() != 4 || perHead.dim(0) != value.dim(0) ||
      perHead.dim(1) != heads || perHead.dim(2) != value.dim(2))
    throw ReferenceError("multi_head_attention: body returned " +
                         shapeToString(perHead.shape) + ", expected [" +
                         std::to_string(value.dim(0)) + ", " +
                         std::to_string(heads) + ", " +
                         std::to_string(value.dim(2)) + ", head_dim]");
  return linear(mergeHeads(perHead), outputWeight);
}

Tensor residual(const Tensor &x, const Block &f) {
  Tensor fx = f(x);
  expectShape(fx, x.shape, "residual: body result");
  return add(x, fx);
}

std::pair<Tensor, Tensor> reversible(const Tensor &x1, const Tensor &x2,
                                     const Block &f, const Block &g) {
  Tensor fx2 = f(x2);
  expectShape(fx2, x1.shape, "reversible: F result");
  Tensor y1 = add(x1, fx2);
  Tensor gy1 = g(y1);
  expectShape(gy1, x2.shape, "reversible: G result");
  Tensor y2 = add(x2, gy1);
  return {y1, y2};
}

Tensor softmaxCrossEntropy(const Tensor &logits, const Tensor &labels,
                           const Tensor *weights) {
  if (logits.rank() < 1 || logits.dim(-1) < 1)
    throw ReferenceError("softmax_cross_entropy: logits need a non-empty "
                         "vocab dimension, got " +
                         shapeToString(logits.shape));
  int64_t vocab = logits.dim(-1);
  Shape leading(logits.shape.begin(), logits.shape.end() - 1);
  expectShape(labels, leading, "softmax_cross_entropy: labels");
  if (weights)
    expectShape(*weights, leading, "softmax_cross_entropy: weights");
  int64_t positions = numElements(leading);
  if (positions == 0)
    throw ReferenceError("softmax_cross_entropy: no positions to average");

  double total = 0, totalWeight = 0;
  for (int64_t p = 0; p < positions; ++p) {
    const double *row = logits.data.data() + p * vocab;
    int64_t label =
        indexValue(labels.data[p], vocab, "softmax_cross_entropy: label");
    double maxLogit = *std::max_element(row, row + vocab);
    double sum = 0;
    for (int64_t c = 0; c < vocab; ++c)
      sum += std::exp(row[c] - maxLogit);
    double logSumExp = maxLogit + std::log(sum);
    double weight = weights ? weights->data[p] : 1.0;
    total += weight * (logSumExp - row[label]);
    totalWeight += weight;
  }
  if (totalWeight == 0)
    throw ReferenceError("softmax_cross_entropy: the weights sum to 0");
  return Tensor(Shape{}, std::vector<double>{total / totalWeight});
}

//===----------------------------------------------------------------------===//
// Bundled models
//===----------------------------------------------------------------------===//

TinyModelConfig transformerTinyConfig() {
  TinyModelConfig c;
  c.seq = 512;
  return c;
}

TinyModelConfig reformerTinyConfig() {
  TinyModelConfig c;
  c.seq = 1024;
  return c;
}

namespace {

std::string layerPrefix(int64_t layer) {
  return "layers." + std::to_string(layer) + ".";
}

/// Parameters both models share: embeddings, per-layer norms and
/// feed-forward, final norm and LM head.
std::map<std::string, Shape> commonParams(const TinyModelConfig &c,
                                          bool withKey) {
  std::map<std::string, Shape> p;
  p["embed.tokens"] = {c.vocab, c.dModel};
  p["embed.positions"] = {1, c.seq, c.dModel};
  for (int64_t l = 0; l < c.layers; ++l) {
    std::string pre = layerPrefix(l);
    p[pre + "attn_norm.gamma"] = {c.dModel};
    p[pre + "attn_norm.beta"] = {c.dModel};
    p[pre + "attn.wq"] = {c.dModel, c.dModel};
    if (withKey)
      p[pre + "attn.wk"] = {c.dModel, c.dModel};
    p[pre + "attn.wv"] = {c.dModel, c.dModel};
    p[pre + "attn.wo"] = {c.dModel, c.dModel};
    p[pre + "ff_norm.gamma"] = {c.dModel};
    p[pre + "ff_norm.beta"] = {c.dModel};
    p[pre + "ff.w1"] = {c.dModel, c.dFF};
    p[pre + "ff.b1"] = {c.dFF};
    p[pre + "ff.w2"] = {c.dFF, c.dModel};
    p[pre + "ff.b2"] = {c.dModel};
  }
  p["final_norm.gamma"] = {c.dModel};
  p["final_norm.beta"] = {c.dModel};
  p["lm_head.weight"] = {c.dModel, c.vocab};
  p["lm_head.bias"] = {c.vocab};
  return p;
}

/// Looks parameters up by name (attn.param) and checks their shapes.
class ParamReader {
public:
  ParamReader(const std::string &model, const Weights &weights,
              std::map<std::string, Shape> shapes)
      : model(model), weights(weights), shapes(std::move(shapes)) {}

  const Tensor &operator()(const std::string &name) const {
    auto shape = shapes.find(name);
    if (shape == shapes.end())
      throw ReferenceError(model + ": a stage reads '" + name +
                           "', which it does not list");
    const Shape &expected = shape->second;
    auto it = weights.find(name);
    if (it == weights.end())
      throw ReferenceError(model + ": missing parameter '" + name +
                           "' (expected shape " + shapeToString(expected) +
                           ")");
    expectShape(it->second, expected, model + ": parameter '" + name + "'");
    return it->second;
  }

private:
  std::string model;
  const Weights &weights;
  std::map<std::string, Shape> shapes;
};

/// A stage whose body reads parameters through a ParamReader of `model`.
/// The parameters of `shapes` starting with one of `prefixes` are the
/// stage's, and its reader knows no other: a body that read an unlisted
/// parameter (and so would break the reuse of activations) fails loudly.
using StageBody = std::function<std::vector<Tensor>(
    const ParamReader &, const std::vector<Tensor> &)>;

ModelStage makeStage(const std::string &model,
                     const std::map<std::string, Shape> &shapes,
                     const std::vector<std::string> &prefixes, StageBody body) {
  ModelStage stage;
  std::map<std::string, Shape> own;
  for (const auto &[name, shape] : shapes)
    for (const std::string &prefix : prefixes)
      if (name.rfind(prefix, 0) == 0) {
        stage.params.push_back(name);
        own[name] = shape;
      }
  stage.run = [model, own, body](const Weights &weights,
                                 const std::vector<Tensor> &in) {
    return body(ParamReader(model, weights, own), in);
  };
  return stage;
}

/// embed.tokens lookup plus learned positions (the models' %x0).
Tensor embedTokens(const std::string &model, const ParamReader &param,
                   const Tensor &tokens, const TinyModelConfig &c) {
  expectShape(tokens, {1, c.seq}, model + ": tokens");
  return add(embedding(tokens, param("embed.tokens")),
             param("embed.positions"));
}

/// layer norm "<pre>ff_norm" then the feed-forward "<pre>ff".
Tensor normFeedForward(const ParamReader &param, const std::string &pre,
                       const Tensor &a, Activation activation) {
  Tensor n =
      layerNorm(a, param(pre + "ff_norm.gamma"), param(pre + "ff_norm.beta"));
  return feedForward(n, param(pre + "ff.w1"), param(pre + "ff.b1"),
                     param(pre + "ff.w2"), param(pre + "ff.b2"), activation);
}

/// final_norm then lm_head.
Tensor head(const ParamReader &param, const Tensor &x) {
  Tensor n = layerNorm(x, param("final_norm.gamma"), param("final_norm.beta"));
  return linear(n, param("lm_head.weight"), &param("lm_head.bias"));
}

const std::vector<std::string> kEmbedParams = {"embed."};
const std::vector<std::string> kHeadParams = {"final_norm.", "lm_head."};

std::vector<std::string> attentionParams(const std::string &pre) {
  return {pre + "attn_norm.", pre + "attn."};
}

std::vector<std::string> feedForwardParams(const std::string &pre) {
  return {pre + "ff_norm.", pre + "ff."};
}

} // namespace

std::map<std::string, Shape> transformerTinyParams(const TinyModelConfig &c) {
  return commonParams(c, /*withKey=*/true);
}

std::map<std::string, Shape> reformerTinyParams(const TinyModelConfig &c) {
  return commonParams(c, /*withKey=*/false);
}

std::vector<Tensor> runStages(const std::vector<ModelStage> &stages,
                              const Weights &weights,
                              std::vector<Tensor> input) {
  for (const ModelStage &stage : stages)
    input = stage.run(weights, input);
  return input;
}

std::vector<ModelStage> transformerTinyStages(const TinyModelConfig &c) {
  const std::string model = "transformer-tiny";
  std::map<std::string, Shape> shapes = transformerTinyParams(c);
  std::vector<ModelStage> stages;
  stages.push_back(makeStage(
      model, shapes, kEmbedParams,
      [=](const ParamReader &param, const std::vector<Tensor> &in) {
        return std::vector<Tensor>{embedTokens(model, param, in[0], c)};
      }));
  for (int64_t l = 0; l < c.layers; ++l) {
    std::string pre = layerPrefix(l);
    // Pre-norm residual: x + MHA(LN(x)), dense causal attention.
    stages.push_back(makeStage(
        model, shapes, attentionParams(pre),
        [=](const ParamReader &param, const std::vector<Tensor> &in) {
          return std::vector<Tensor>{residual(in[0], [&](const Tensor &a) {
            Tensor n = layerNorm(a, param(pre + "attn_norm.gamma"),
                                 param(pre + "attn_norm.beta"));
            return multiHeadAttention(
                n, param(pre + "attn.wq"), &param(pre + "attn.wk"),
                param(pre + "attn.wv"), param(pre + "attn.wo"), c.heads,
                [](const std::vector<Tensor> &qkv) {
                  return attention(qkv[0], qkv[1], qkv[2], /*causal=*/true);
                });
          })};
        }));
    // Pre-norm residual: x + FF(LN(x)), GELU.
    stages.push_back(makeStage(
        model, shapes, feedForwardParams(pre),
        [=](const ParamReader &param, const std::vector<Tensor> &in) {
          return std::vector<Tensor>{residual(in[0], [&](const Tensor &a) {
            return normFeedForward(param, pre, a, Activation::Gelu);
          })};
        }));
  }
  stages.push_back(
      makeStage(model, shapes, kHeadParams,
                [](const ParamReader &param, const std::vector<Tensor> &in) {
                  return std::vector<Tensor>{head(param, in[0])};
                }));
  return stages;
}

std::vector<ModelStage> reformerTinyStages(const TinyModelConfig &c) {
  const std::string model = "reformer-tiny";
  std::map<std::string, Shape> shapes = reformerTinyParams(c);
  std::vector<ModelStage> stages;
  // Both reversible streams start as the embedding.
  stages.push_back(
      makeStage(model, shapes, kEmbedParams,
                [=](const ParamReader &param, const std::vector<Tensor> &in) {
                  Tensor x0 = embedTokens(model, param, in[0], c);
                  return std::vector<Tensor>{x0, x0};
                }));
  for (int64_t l = 0; l < c.layers; ++l) {
    std::string pre = layerPrefix(l);
    // attn.reversible in its two halves, so that G's parameters do not
    // rerun F. F: layer norm + shared-QK causal multi-head attention (no key
    // weight); y1 = x1 + F(x2).
    stages.push_back(makeStage(
        model, shapes, attentionParams(pre),
        [=](const ParamReader &param, const std::vector<Tensor> &in) {
          Tensor n = layerNorm(in[1], param(pre + "attn_norm.gamma"),
                               param(pre + "attn_norm.beta"));
          Tensor f = multiHeadAttention(
              n, param(pre + "attn.wq"), /*keyWeight=*/nullptr,
              param(pre + "attn.wv"), param(pre + "attn.wo"), c.heads,
              [](const std::vector<Tensor> &qkAndV) {
                const Tensor &qk = qkAndV[0], &v = qkAndV[1];
                return attention(qk, qk, v, /*causal=*/true, std::nullopt,
                                 /*sharedQK=*/true);
              });
          expectShape(f, in[0].shape, "reversible: F result");
          return std::vector<Tensor>{add(in[0], f), in[1]};
        }));
    // G: layer norm + ReLU feed-forward; y2 = x2 + G(y1).
    stages.push_back(makeStage(
        model, shapes, feedForwardParams(pre),
        [=](const ParamReader &param, const std::vector<Tensor> &in) {
          Tensor g = normFeedForward(param, pre, in[0], Activation::Relu);
          expectShape(g, in[1].shape, "reversible: G result");
          return std::vector<Tensor>{in[0], add(in[1], g)};
        }));
  }
  // The two streams are summed (arith.addf) before the final norm.
  stages.push_back(
      makeStage(model, shapes, kHeadParams,
                [](const ParamReader &param, const std::vector<Tensor> &in) {
                  return std::vector<Tensor>{head(param, add(in[0], in[1]))};
                }));
  return stages;
}

Tensor transformerTiny(const Weights &weights, const Tensor &tokens,
                       const TinyModelConfig &c) {
  return runStages(transformerTinyStages(c), weights, {tokens}).at(0);
}

Tensor reformerTiny(const Weights &weights, const Tensor &tokens,
                    const TinyModelConfig &c) {
  return runStages(reformerTinyStages(c), weights, {tokens}).at(0);
}

} // namespace lcc::reference
