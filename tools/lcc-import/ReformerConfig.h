//===- ReformerConfig.h - a Hugging Face Reformer config.json ---*- C++ -*-===//
//
// What lcc-import reads of a Hugging Face ReformerConfig (config.json), and
// what it derives from it for one sequence length: per layer, the form its
// attention takes at that length (Hugging Face's chunked LSH or local
// attention, or the full attention it falls back to for a short sequence),
// LSH's bucket count, the local window. A field lcc cannot honour is an
// error naming it; a field that only training would see (dropout) is a
// warning.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_TOOLS_LCC_IMPORT_REFORMERCONFIG_H
#define LCC_TOOLS_LCC_IMPORT_REFORMERCONFIG_H

#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace lcc::import {

/// One layer's attention at the imported sequence length.
enum class ReformerAttention {
  /// LSHSelfAttention, hashed and chunked.
  LSH,
  /// LSHSelfAttention over a sequence no longer than its chunk: full
  /// shared-QK attention.
  LSHFull,
  /// LocalSelfAttention, chunked with look-back and look-ahead.
  Local,
  /// LocalSelfAttention over a sequence no longer than its chunk: full
  /// attention.
  LocalFull,
};

struct ReformerConfig {
  int64_t vocabSize = 320, hiddenSize = 256, heads = 12, headSize = 64;
  int64_t feedForwardSize = 512;
  std::string hiddenAct = "relu"; // relu or gelu (erf)
  double layerNormEps = 1e-12;
  bool isDecoder = false;
  /// attn_layers: "lsh" or "local" per layer.
  std::vector<std::string> attnLayers;

  int64_t numHashes = 1, lshChunkLength = 64, localChunkLength = 64;
  int64_t lshChunksBefore = 1, lshChunksAfter = 0;
  int64_t localChunksBefore = 1, localChunksAfter = 0;
  /// num_buckets as config.json gives it: absent (null), one number or a
  /// pair.
  std::vector<int64_t> numBuckets;
  std::optional<uint64_t> hashSeed;

  bool axialPosEmbds = true;
  std::vector<int64_t> axialPosShape = {64, 64};
  std::vector<int64_t> axialPosEmbdsDim = {64, 192};
  int64_t maxPositionEmbeddings = 4096;

  double initializerRange = 0.02, axialNormStd = 1.0;

  /// Derived for the imported sequence length (deriveForLength).
  int64_t seqLen = 0;
  std::vector<ReformerAttention> forms;
  /// LSH's bucket count at seqLen, and whether it hashes factorized.
  int64_t lshBuckets = 0;
  bool lshFactorized = false;
  /// Local attention's chunks at seqLen.
  int64_t localChunks = 0;

  int64_t allHeadSize() const { return heads * headSize; }
  int64_t layers() const { return static_cast<int64_t>(attnLayers.size()); }
};

/// Reads `path` (a config.json) and derives what a model over `seqLen`
/// tokens needs; the error names the field. `warnings` gets one line per
/// field that changes only training.
llvm::Expected<ReformerConfig>
readReformerConfig(const std::string &path, int64_t seqLen,
                   std::vector<std::string> &warnings);

} // namespace lcc::import

#endif // LCC_TOOLS_LCC_IMPORT_REFORMERCONFIG_H
