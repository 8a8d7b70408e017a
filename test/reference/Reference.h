//===- Reference.h - Independent double-precision reference of lcc ops ----===//
//
// A direct transcription of the op semantics of docs/design.md §3 and
// docs/attn-dialect.md, in plain C++17 with `double` everywhere. Tests check
// compiled code against it, so it is written to be obviously right, not fast,
// and it shares no code with the compiler or the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_TEST_REFERENCE_REFERENCE_H
#define LCC_TEST_REFERENCE_REFERENCE_H

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace lcc::reference {

/// Every failure of the reference (bad shape, missing parameter, bad file)
/// is reported with this exception and a message naming what was wrong.
class ReferenceError : public std::runtime_error {
public:
  explicit ReferenceError(const std::string &message)
      : std::runtime_error(message) {}
};

using Shape = std::vector<int64_t>;

/// "[1, 8, 1024, 64]"; "[]" for a 0-d tensor.
std::string shapeToString(const Shape &shape);

/// Number of elements of a shape (1 for a 0-d shape).
int64_t numElements(const Shape &shape);

/// A dense row-major tensor of doubles. Integer tensors (token ids, labels)
/// are held as doubles too: every int32/int64 id of interest is exact.
struct Tensor {
  Shape shape;
  std::vector<double> data;

  /// A 0-d tensor holding 0.
  Tensor() : data(1, 0.0) {}
  /// Zeros.
  explicit Tensor(Shape shape);
  /// Row-major `data`; its size must match the shape.
  Tensor(Shape shape, std::vector<double> data);
  /// Every element `value`. (Not a constructor, so that Tensor({1}, {x})
  /// can only mean the data {x}.)
  static Tensor filled(Shape shape, double value);

  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t size() const { return static_cast<int64_t>(data.size()); }
  /// Size of dimension `i`; negative `i` counts from the back.
  int64_t dim(int64_t i) const;

  /// Element access by a full multi-index, bounds-checked.
  double &at(const std::vector<int64_t> &index);
  double at(const std::vector<int64_t> &index) const;
  /// Flat (row-major) offset of a full multi-index, bounds-checked.
  int64_t offset(const std::vector<int64_t> &index) const;
};

/// Throws ReferenceError "<what>: expected shape X, got Y" on a mismatch.
void expectShape(const Tensor &t, const Shape &expected,
                 const std::string &what);

/// Checks the operands of an attention over a memory (relative, adaptive
/// span): q [batch, heads, q_seq, d], k [batch, heads, k_seq, d] and v
/// [batch, heads, k_seq, d_v] with k_seq >= q_seq; throws ReferenceError
/// naming `op` otherwise.
void expectMemoryAttentionOperands(const Tensor &q, const Tensor &k,
                                   const Tensor &v, const std::string &op);

/// Elementwise sum of two tensors of the same shape (arith.addf).
Tensor add(const Tensor &a, const Tensor &b);

//===----------------------------------------------------------------------===//
// Attention ops on [batch, heads, seq, head_dim]
//===----------------------------------------------------------------------===//

/// Score assigned to a token's key for itself under shared-QK attention.
constexpr double kSharedQKSelfScore = -1e5;

/// attn.attention: softmax(q k^T * scale) v per (batch, head).
/// `scale` defaults to 1/sqrt(head_dim of q). Causal: key j is visible to
/// query i iff j <= i. With `sharedQK` (Reformer), `k` must equal `q`; keys
/// are q_j / ||q_j||_2 and the score of a token with itself is replaced by
/// kSharedQKSelfScore.
Tensor attention(const Tensor &q, const Tensor &k, const Tensor &v, bool causal,
                 std::optional<double> scale = std::nullopt,
                 bool sharedQK = false);

/// What attn.attention's mask region says: whether key j is visible to
/// query i of head h of batch b.
using PositionMask =
    std::function<bool(int64_t b, int64_t h, int64_t i, int64_t j)>;
/// What its score region says: the score to use for the scaled score s.
using ScoreModifier =
    std::function<double(double s, int64_t b, int64_t h, int64_t i, int64_t j)>;

/// attn.attention with mask and score regions: key j is visible to query i
/// iff mask(b, h, i, j) (and j <= i if causal); a visible key's score is
/// modify(q_i k_j * scale, b, h, i, j); a query that sees no key gets
/// zeros. An empty mask or modifier is none.
Tensor modifiedAttention(const Tensor &q, const Tensor &k, const Tensor &v,
                         bool causal, std::optional<double> scale,
                         const PositionMask &mask, const ScoreModifier &modify,
                         bool sharedQK = false);

enum class SparsePattern { Strided, Fixed };

/// Whether key j is in A(i) for attn.sparse_attention with stride l and
/// summary c (c is ignored by the strided pattern):
///   strided: |i-j| < l or (i-j) mod l == 0;
///   fixed:   floor(j/l) == floor(i/l) or (j mod l) >= l-c;
///   causal additionally needs j <= i.
bool sparseMaskAllows(SparsePattern pattern, int64_t i, int64_t j,
                      int64_t stride, int64_t summary, bool causal);

/// attn.sparse_attention: dense attention restricted to sparseMaskAllows.
/// `block` is a compute tile only and does not appear here.
Tensor sparseAttention(const Tensor &q, const Tensor &k, const Tensor &v,
                       SparsePattern pattern, int64_t stride, int64_t summary,
                       bool causal, std::optional<double> scale = std::nullopt);

/// attn.sinusoidal_encoding: [positions, dim], dim even; for i < dim/2,
/// result[t, i] = sin(a), result[t, dim/2 + i] = cos(a), with the angle
/// a = f32(t * f32(10000^(-2i/dim))) as the op defines it (its sine in
/// double).
Tensor sinusoidalEncoding(int64_t positions, int64_t dim);

/// The attributes of attn.relative_attention.
struct RelativeAttentionOptions {
  std::optional<double> scale;
  std::optional<int64_t> clampLen, sameLength;
};

/// attn.relative_attention (Transformer-XL): q [batch, heads, q_seq, d];
/// k, v [batch, heads, k_seq, d], k_seq >= q_seq, the first M = k_seq -
/// q_seq keys the memory; pos [heads, k_seq, d], pos[h, t] the encoding of
/// distance t; u, w [heads, d]. Query i is position M + i and sees key j
/// iff j <= M + i (and, with sameLength N, M + i - j < N); its score is
/// ((q_i + u_h)·k_j + (q_i + w_h)·pos[h, min(t, clampLen)]) * scale for
/// t = M + i - j. `scale` defaults to 1/sqrt(d).
Tensor relativeAttention(const Tensor &q, const Tensor &k, const Tensor &v,
                         const Tensor &pos, const Tensor &u, const Tensor &w,
                         const RelativeAttentionOptions &options);

/// attn.compress: x [batch, length, d], weight [rate, d, d_out], bias
/// [d_out]; out[b, t] = bias + sum_{r < rate} x[b, t*rate + r] · weight[r].
Tensor compress(const Tensor &x, const Tensor &weight, const Tensor &bias,
                int64_t rate);

/// The attributes of attn.adaptive_span_attention.
struct AdaptiveSpanOptions {
  int64_t maxSpan = 1, ramp = 32;
  bool causal = false;
  std::optional<double> scale;
};

/// attn.adaptive_span_attention (Adaptive Span): q [batch, heads, q_seq,
/// d]; k, v [batch, heads, k_seq, d], k_seq >= q_seq; z [heads]. With x =
/// k_seq - q_seq + i - j, span = z_h * maxSpan and m(x) = clamp((ramp +
/// span - x) / ramp, 0, 1), key j is visible to query i iff m(x) > 0 (and
/// x >= 0 if causal); a = softmax of q_i·k_j*scale over the visible keys,
/// out_i = sum_j a_ij m(x) v_j / (sum_j a_ij m(x) + 1e-8). A query that
/// sees no key gets zeros.
Tensor adaptiveSpanAttention(const Tensor &q, const Tensor &k, const Tensor &v,
                             const Tensor &z,
                             const AdaptiveSpanOptions &options);

/// attn.routed_attention with the given `centroids` [heads, clusters,
/// head_dim]: each query attends, with the dense scores, to the `window`
/// keys nearest (by cosine, ties to the earlier key) to its nearest unit
/// centroid; `causal` also hides later keys; a query that sees no key
/// gets zeros.
Tensor routedAttention(const Tensor &q, const Tensor &k, const Tensor &v,
                       const Tensor &centroids, int64_t window, bool causal,
                       std::optional<double> scale = std::nullopt);

/// attn.routed_centroid_update: per head, every unit query and key of the
/// batch joins its nearest unit centroid; a centroid moves to decay *
/// centroid + (1 - decay) * its members' normalised sum (itself when it has
/// no members or they cancel).
Tensor routedCentroidUpdate(const Tensor &centroids, const Tensor &q,
                            const Tensor &k, double decay);

/// attn.lsh_attention pads seq to a multiple of 2 * bucket_size, in
/// chunks of bucket_size (to a multiple of bucket_size with n_buckets
/// given).
int64_t lshPaddedSeq(int64_t seq, int64_t bucketSize);

/// attn.lsh_attention's attributes.
struct LSHAttentionOptions {
  int64_t nHashes = 1, bucketSize = 1;
  /// n_buckets; by default one per chunk (padded seq / bucket_size).
  std::optional<int64_t> nBuckets;
  bool causal = false;
  uint64_t seed = 0;
  std::optional<double> scale;
  bool factorized = false;

  /// `seq` padded to whole chunks: a multiple of 2 * bucketSize
  /// (lshPaddedSeq), of bucketSize with nBuckets given.
  int64_t paddedSeq(int64_t seq) const;
  /// The buckets tokens hash into over `seq` tokens.
  int64_t bucketCount(int64_t seq) const;
  /// Rotation columns per round: n_buckets / 2, or (n1 + n2) / 2 when
  /// factorized.
  int64_t rotationColumns(int64_t seq) const;
};

/// The rotations of attn.lsh_attention, [head_dim, n_hashes, columns]
/// (columns = n_buckets / 2), drawn row-major as the compiler draws
/// them: Random.h's splitmix64 (nextU64) from `seed`, but its own
/// distributions (so not SplitMix64::normal):
///   u = ((nextU64() >> 11) + 0.5) * 2^-53, in (0, 1);
///   value = sqrt(-2 ln u1) * cos(2 pi u2), u1 drawn first;
/// each value then rounded to f32, as the compiled constant holds it.
Tensor lshRotations(int64_t headDim, int64_t nHashes, int64_t columns,
                    uint64_t seed);

/// The bucket of every token in every round, [batch, heads, n_hashes,
/// padded] (whole numbers): argmax over [xR; -xR] of the token x (index j
/// for +xR_j, half + j for -xR_j; of equal maxima the first in the order
/// +xR_0, -xR_0, +xR_1, ...); padded positions get bucket n_buckets.
/// `rotations` is [head_dim, n_hashes, options.rotationColumns(seq)].
///
/// `factorized` hashes as attn.lsh_attention's factorized_hash: n_buckets =
/// n1 * n2 (lshHashFactors), rotations [head_dim, n_hashes, (n1 + n2) /
/// 2], the bucket b1 + n1 * b2 of the argmaxes b1 over the first n1 / 2
/// columns and b2 over the other n2 / 2, each as above. Only
/// options.bucketSize, nBuckets and factorized are read.
Tensor lshBuckets(const Tensor &qk, const Tensor &rotations,
                  const LSHAttentionOptions &options);

/// The bucket pair (n1, n2) of factorized hashing: n1 the largest even
/// divisor of nBuckets with n1^2 <= nBuckets whose cofactor n2 is even.
/// Throws when nBuckets is not a multiple of 4.
std::pair<int64_t, int64_t> lshHashFactors(int64_t nBuckets);

/// attn.lsh_attention with the given rotations (options.nHashes and seed
/// unread). Each round's tokens are stably sorted by bucket; the rounds'
/// sorted orders, one after another, are cut into chunks of bucketSize,
/// and each chunk attends to itself and the chunk before it in that
/// sequence: a round's first chunk to the previous round's last, the very
/// first to the last round's last (trax, reformer-pytorch and Hugging
/// Face alike). Scores are shared-QK: q_i . k_j * scale, k_j = q_j /
/// max(||q_j||, 1e-12), the self score kSharedQKSelfScore (for every copy
/// of the query among the keys), padded keys hidden, and if causal keys at
/// positions after the query's hidden. A query's round output and
/// logsumexp are its chunk's; the rounds' outputs are combined with
/// weights softmax over the rounds of each token's logsumexp.
Tensor lshAttentionWithRotations(const Tensor &qk, const Tensor &v,
                                 const Tensor &rotations,
                                 const LSHAttentionOptions &options);

/// attn.lsh_attention on qk [batch, heads, seq, head_dim] and v [batch,
/// heads, seq, v_dim], with the rotations lshRotations(head_dim, nHashes,
/// options.rotationColumns(seq), seed). `scale` defaults to
/// 1/sqrt(head_dim).
Tensor lshAttention(const Tensor &qk, const Tensor &v,
                    const LSHAttentionOptions &options);

//===----------------------------------------------------------------------===//
// Model-level ops on [batch, seq, d_model]
//===----------------------------------------------------------------------===//

/// result[b, s, :] = table[tokens[b, s], :]; tokens of any rank.
Tensor embedding(const Tensor &tokens, const Tensor &table);

constexpr double kDefaultLayerNormEpsilon = 1e-5;

/// (x - mean) / sqrt(var + epsilon) * gamma + beta over the last dimension,
/// with the biased variance (divide by n).
Tensor layerNorm(const Tensor &x, const Tensor &gamma, const Tensor &beta,
                 double epsilon = kDefaultLayerNormEpsilon);

/// x [..., in] . weight [in, out] (+ bias [out]).
Tensor linear(const Tensor &x, const Tensor &weight,
              const Tensor *bias = nullptr);

enum class Activation { Relu, Gelu };

double relu(double x);
/// Exact GELU: 0.5 * x * (1 + erf(x / sqrt(2))).
double gelu(double x);

/// act(x . up + upBias) . down + downBias. The op's `chunks` attribute only
/// changes the schedule, never the math, so it has no parameter here.
Tensor feedForward(const Tensor &x, const Tensor &up, const Tensor &upBias,
                   const Tensor &down, const Tensor &downBias,
                   Activation activation);

/// [batch, seq, heads*head_dim] -> [batch, heads, seq, head_dim]: columns
/// h*head_dim .. (h+1)*head_dim-1 are head h.
Tensor splitHeads(const Tensor &x, int64_t heads);
/// The inverse of splitHeads.
Tensor mergeHeads(const Tensor &x);

/// The region of attn.multi_head_attention. It receives the block arguments
/// in order: {q, k, v}, or {qk, v} for a shared-QK block; each is
/// [batch, heads, seq, head_dim]. It returns the per-head result.
using AttentionBody = std::function<Tensor(const std::vector<Tensor> &)>;

/// attn.multi_head_attention: project x with each weight, split heads, run
/// `body`, merge heads, project with `outputWeight`. A null `keyWeight` makes
/// the block shared-QK: the body gets (x . queryWeight split, v).
Tensor multiHeadAttention(const Tensor &x, const Tensor &queryWeight,
                          const Tensor *keyWeight, const Tensor &valueWeight,
                          const Tensor &outputWeight, int64_t heads,
                          const AttentionBody &body);

using Block = std::function<Tensor(const Tensor &)>;

/// attn.residual: x + F(x).
Tensor residual(const Tensor &x, const Block &f);

/// attn.reversible: y1 = x1 + F(x2), y2 = x2 + G(y1). Returns {y1, y2}.
std::pair<Tensor, Tensor> reversible(const Tensor &x1, const Tensor &x2,
                                     const Block &f, const Block &g);

/// attn.softmax_cross_entropy: the mean over positions p of
/// ce_p = logsumexp(logits[p, :]) - logits[p, labels[p]]; a 0-d tensor.
/// With `weights` (the shape of `labels`), the weighted mean
/// sum_p(w_p ce_p) / sum_p(w_p) (padding masks, per-token weights); weights
/// that sum to 0 are an error.
Tensor softmaxCrossEntropy(const Tensor &logits, const Tensor &labels,
                           const Tensor *weights = nullptr);

//===----------------------------------------------------------------------===//
// The bundled models (models/*.mlir)
//===----------------------------------------------------------------------===//

/// Sizes of the bundled models. The defaults below are exactly those of the
/// .mlir files; tests may shrink them.
struct TinyModelConfig {
  int64_t layers = 2;
  int64_t dModel = 128;
  int64_t heads = 4;
  int64_t dFF = 512;
  int64_t vocab = 256;
  int64_t seq = 512;
};

/// models/transformer-tiny.mlir: seq 512.
TinyModelConfig transformerTinyConfig();
/// models/reformer-tiny.mlir: seq 1024.
TinyModelConfig reformerTinyConfig();

using Weights = std::map<std::string, Tensor>;

/// Name -> shape of every parameter the model reads (`attn.param`).
std::map<std::string, Shape> transformerTinyParams(const TinyModelConfig &c);
std::map<std::string, Shape> reformerTinyParams(const TinyModelConfig &c);

/// The models end to end: tokens [1, seq] -> logits [1, seq, vocab]. Throws
/// ReferenceError on a missing parameter or a parameter of the wrong shape.
/// Weights the model does not read are ignored.
Tensor transformerTiny(const Weights &weights, const Tensor &tokens,
                       const TinyModelConfig &config = transformerTinyConfig());
Tensor reformerTiny(const Weights &weights, const Tensor &tokens,
                    const TinyModelConfig &config = reformerTinyConfig());

/// One step of a bundled model: activations in, activations out. The first
/// stage takes {tokens}, the last returns {logits}; in between flow the
/// residual stream (transformer) or the two reversible streams (reformer).
/// A stage reads only the parameters it lists, so a caller that changes one
/// parameter may reuse every activation before the first stage listing it
/// (the gradient check's finite differences do, GradientCheck.h).
struct ModelStage {
  std::vector<std::string> params;
  std::function<std::vector<Tensor>(const Weights &,
                                    const std::vector<Tensor> &)>
      run;
};

/// The stages of each model; transformerTiny and reformerTiny run them in
/// order. The transformer has embed, per layer the attention and the
/// feed-forward residual blocks, and the head; the reformer has embed, per
/// layer the two halves of the reversible block (y1 = x1 + F(x2), then
/// y2 = x2 + G(y1)), and the head.
std::vector<ModelStage>
transformerTinyStages(const TinyModelConfig &config = transformerTinyConfig());
std::vector<ModelStage>
reformerTinyStages(const TinyModelConfig &config = reformerTinyConfig());

/// Runs `stages` in order from `input`.
std::vector<Tensor> runStages(const std::vector<ModelStage> &stages,
                              const Weights &weights,
                              std::vector<Tensor> input);

} // namespace lcc::reference

#endif // LCC_TEST_REFERENCE_REFERENCE_H
