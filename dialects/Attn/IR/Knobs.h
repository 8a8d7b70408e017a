//===- Knobs.h - lcc's integer settings, each declared once -----*- C++ -*-===//
//
// A knob is a setting a user gives lcc (`--lsh-bucket-size=64`) that ends
// up in an op attribute (`bucket_size`) through a pass option
// (`attn-dense-to-lsh{bucket-size=64}`) and, with `--attention=auto`, a
// pipeline option. Its names, default, range and help are written here
// once; lcc's flags, the lcc-attention-forms pipeline options, the passes'
// options (Passes.td takes the default from here) and the verifiers of the
// attributes all read this declaration, and checkKnob is the one range
// check they share.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_DIALECT_ATTN_IR_KNOBS_H
#define LCC_DIALECT_ATTN_IR_KNOBS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <limits>
#include <string>

namespace lcc {

/// One integer knob.
struct IntegerKnob {
  /// lcc's flag and the lcc-attention-forms option: "lsh-bucket-size".
  llvm::StringLiteral flag;
  /// The pass option and, with '-' as '_', the op attribute: "bucket-size".
  llvm::StringLiteral option;
  int64_t defaultValue;
  int64_t minimum;
  int64_t maximum;
  /// Whether 0 asks lcc to choose the value from the op's shapes: the
  /// attribute, always chosen, is then at least 1.
  bool zeroPicksDefault;
  /// One line for --help, with the default.
  llvm::StringLiteral help;

  /// The least value of the op attribute the knob sets.
  constexpr int64_t attributeMinimum() const {
    return zeroPicksDefault ? 1 : minimum;
  }
};

namespace attn {
/// Hash rounds an attn.lsh_attention may have. The Reformer uses up to 8;
/// every round multiplies the intermediate results.
constexpr int64_t kMaxHashRounds = 1024;
} // namespace attn

/// One real-valued knob (an optimizer setting of the train step).
struct RealKnob {
  /// lcc's flag, and the option of attn-generate-train-step.
  llvm::StringLiteral flag;
  double defaultValue;
  /// The range: minimum < value (minimumExcluded) or minimum <= value, and
  /// value <= maximum; every value is finite.
  double minimum;
  bool minimumExcluded;
  double maximum;
  /// What 0 means when it turns the setting off ("does not clip"); "".
  llvm::StringLiteral zeroMeans;
  /// One line for --help, with the default.
  llvm::StringLiteral help;
};

/// One knob whose value is one of a few names (`--lsh-hash=factorized`).
struct ChoiceKnob {
  /// lcc's flag and the lcc-attention-forms option: "lsh-hash".
  llvm::StringLiteral flag;
  /// The pass option: "hash".
  llvm::StringLiteral option;
  llvm::StringLiteral defaultValue;
  llvm::ArrayRef<llvm::StringLiteral> choices;
  /// One line for --help, with the default.
  llvm::StringLiteral help;
};

namespace knobs {

constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max();

inline constexpr IntegerKnob kLSHHashes = {
    "lsh-hashes", "n-hashes", 4, 1, attn::kMaxHashRounds, false,
    "Hash rounds of LSH attention (default 4)"};
inline constexpr IntegerKnob kLSHBucketSize = {
    "lsh-bucket-size", "bucket-size", 64, 1, kUnbounded, false,
    "Tokens per bucket of LSH attention (default 64)"};
inline constexpr llvm::StringLiteral kLSHHashChoices[] = {"plain", "factorized",
                                                        "auto"};
inline constexpr ChoiceKnob kLSHHash = {
    "lsh-hash", "hash", "auto", kLSHHashChoices,
    "Hashing of LSH attention: 'plain' (n_buckets / 2 rotation columns per "
    "round), 'factorized' (trax's n_buckets as a pair n1 x n2: (n1 + n2) / 2 "
    "columns, so hashing stays linear in the sequence; n_buckets a multiple "
    "of 4) or 'auto' (the default: factorized from 256 buckets, 16K tokens "
    "in buckets of 64)"};
inline constexpr IntegerKnob kSeed = {
    "seed", "seed", 0, 0, kUnbounded, false,
    "Seed of the LSH rotations and of the routed k-means initialisation (op "
    "i gets seed + i; default 0)"};
inline constexpr IntegerKnob kRoutedClusters = {
    "routed-clusters", "clusters", 0, 0, kUnbounded, true,
    "Clusters of routed attention (default: power of two nearest sqrt(seq))"};
inline constexpr IntegerKnob kRoutedWindow = {
    "routed-window", "window", 0, 0, kUnbounded, true,
    "Keys per cluster of routed attention (default: key seq / clusters)"};
inline constexpr llvm::StringLiteral kSparsePatternChoices[] = {"strided",
                                                              "fixed"};
inline constexpr ChoiceKnob kSparsePattern = {
    "sparse-pattern", "pattern", "strided", kSparsePatternChoices,
    "Sparse pattern: 'strided' (default) or 'fixed'"};
inline constexpr IntegerKnob kSparseBlock = {
    "sparse-block", "block", 64, 1, kUnbounded, false,
    "Block size of sparse attention (default 64)"};
inline constexpr IntegerKnob kSparseStride = {
    "sparse-stride", "stride", 0, 0, kUnbounded, true,
    "Stride of sparse attention (default: power of two nearest sqrt(seq))"};
inline constexpr IntegerKnob kSparseSummary = {
    "sparse-summary", "summary", 0, 0, kUnbounded, true,
    "Summary width of the fixed pattern (default: stride / 4)"};
inline constexpr IntegerKnob kLSHThreshold = {
    "lsh-threshold", "lsh-threshold", 4096, 1, kUnbounded, false,
    "With --attention=auto: the shortest sequence LSH is considered for "
    "(default 4096)"};
inline constexpr IntegerKnob kFeedForwardChunks = {
    "ff-chunks", "chunks", 0, 0, kUnbounded, true,
    "Run every feed-forward in N chunks of positions (attn-chunk-ff), "
    "forward and backward, so its d_ff-wide intermediate exists for one "
    "chunk at a time (default 0: as the model writes it)"};
inline constexpr IntegerKnob kAttentionChunks = {
    "attention-chunks", "attention-chunks", 0, 0, kUnbounded, true,
    "Run every LSH attention over its batch x heads rows in N groups, one "
    "after another, forward and backward (attn-chunk-ff), so its sorted "
    "copies and per-round outputs exist for one group at a time; the result "
    "is unchanged (default 0: as the model writes it)"};
/// The flash attention's tiles. Chosen for the target (0): for the CPU
/// 128 x 128 with AVX-512, 96 x 96 without, multiples of the register
/// blocks (StagePipelines.h); 64 x 64 with CUDA, and in attn-lower-to-linalg
/// alone (kPortableAttentionTile).
inline constexpr IntegerKnob kQueryTile = {
    "query-tile", "query-tile", 0, 0, kUnbounded, true,
    "Queries per tile of the flash attention (default 0: the target's; for "
    "the CPU 128 with AVX-512, 96 without, multiples of the register blocks; "
    "64 with --target=cuda)"};
inline constexpr IntegerKnob kKeyTile = {
    "key-tile", "key-tile", 0, 0, kUnbounded, true,
    "Keys per tile of the flash attention (default 0: the target's; for the "
    "CPU 128 with AVX-512, 96 without; 64 with --target=cuda)"};
constexpr int64_t kPortableAttentionTile = 64;
/// CUDA's limit of threads in a block is 1024.
inline constexpr IntegerKnob kCudaBlockSize = {
    "cuda-block-size", "block-size", 128, 1, 1024, false,
    "Threads per block of the CUDA kernels, 1 to 1024 (default 128)"};
/// How many workgroups lcc-tile-to-workgroups aims for per dispatch; no
/// flag of lcc sets it.
inline constexpr IntegerKnob kWorkgroups = {
    "workgroups", "workgroups", 64, 1, kUnbounded, false,
    "Workgroups to aim for per dispatch (default 64)"};
inline constexpr IntegerKnob kMemoryBudget = {
    "memory-budget", "memory-budget", 0, 0, kUnbounded, false,
    "With --attention=auto: bytes one attention may use (default: no "
    "limit)"};

constexpr double kRealUnbounded = std::numeric_limits<double>::infinity();

inline constexpr RealKnob kLearningRate = {
    "lr", 1e-3, 0.0, true, kRealUnbounded, "",
    "Learning rate (default 1e-3)"};
inline constexpr RealKnob kWeightDecay = {
    "weight-decay", 0.0, 0.0, false, kRealUnbounded, "",
    "Weight decay: decoupled (AdamW) for adam, L2 for sgd (default 0)"};
inline constexpr RealKnob kGradClip = {
    "grad-clip", 0.0, 0.0, false, kRealUnbounded, "does not clip",
    "Clip the gradients to this global L2 norm before the update (default "
    "0: no clipping)"};
inline constexpr RealKnob kCentroidDecay = {
    "centroid-decay", 0.999, 0.0, false, 1.0, "",
    "Decay of the moving average by which the train step moves routed "
    "attention's centroids (an attn.param) toward the unit queries and keys "
    "routed to them (default 0.999)"};

} // namespace knobs

/// Empty when `value` lies in `knob`'s range; otherwise the error's text
/// after its prefix: "expected <name> >= 1, got 0", with " (0 picks the
/// default)" after a minimum of 0 that does (`name` as the caller spells
/// it: "--lsh-bucket-size" or "bucket-size").
std::string checkKnob(const IntegerKnob &knob, llvm::StringRef name,
                      int64_t value);

/// checkKnob of a real-valued knob: "expected lr > 0, got 0", "expected
/// centroid-decay in [0, 1], got 2".
std::string checkKnob(const RealKnob &knob, llvm::StringRef name,
                      double value);

/// checkKnob of a choice: "unknown <name> value 'x'; expected one of
/// 'plain', 'factorized', 'auto'".
std::string checkKnob(const ChoiceKnob &knob, llvm::StringRef name,
                      llvm::StringRef value);

/// "'plain', 'factorized', 'auto'": the names `knob` accepts.
std::string choiceNames(const ChoiceKnob &knob);

} // namespace lcc

#endif // LCC_DIALECT_ATTN_IR_KNOBS_H
