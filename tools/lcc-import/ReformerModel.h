//===- ReformerModel.h - a Reformer language model in attn IR ---*- C++ -*-===//
//
// Hugging Face's ReformerModelWithLMHead (its eval forward) written in the
// attn dialect: token and axial position embeddings; reversible layers
// whose F is layer norm + LSH or local self-attention + the output
// projection and whose G is layer norm + feed-forward; the two streams
// concatenated, normalised and projected to the vocabulary. `@forward`
// maps tokens to logits, `@loss` adds the cross-entropy `lcc --train`
// differentiates. The text is what a user reads, with comments saying
// where each piece comes from; lcc-import parses and verifies it.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_TOOLS_LCC_IMPORT_REFORMERMODEL_H
#define LCC_TOOLS_LCC_IMPORT_REFORMERMODEL_H

#include "ReformerConfig.h"
#include "ReformerWeights.h"

#include <string>
#include <vector>

namespace lcc::import {

struct ReformerModelOptions {
  int64_t batch = 1;
  /// LSH layer i hashes with rotations from seed + i, unless config.json
  /// gives hash_seed (then every LSH layer draws from it, as Hugging Face's
  /// layers then draw the same rotations).
  uint64_t seed = 0;
  /// Where the config came from, for the header comment.
  std::string source;
};

/// The model's attn IR text.
std::string writeReformerModel(const ReformerConfig &config,
                               const std::vector<ReformerParameter> &parameters,
                               const ReformerModelOptions &options);

} // namespace lcc::import

#endif // LCC_TOOLS_LCC_IMPORT_REFORMERMODEL_H
