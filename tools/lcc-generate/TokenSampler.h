//===- TokenSampler.h - the next token from a row of logits -----*- C++ -*-===//
//
// Greedy decoding, or sampling from softmax(logits / temperature) after
// top-k and top-p (nucleus) filtering, as Hugging Face's generate does
// them: top-k keeps the k largest logits, top-p the smallest set of the
// most likely tokens whose probabilities reach p. The random numbers are
// splitmix64 from the seed, so a seed gives the same tokens everywhere.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_TOOLS_LCC_GENERATE_TOKENSAMPLER_H
#define LCC_TOOLS_LCC_GENERATE_TOKENSAMPLER_H

#include <cstdint>

namespace lcc::tools {

struct SamplingOptions {
  /// False: the most likely token (ties to the lowest id).
  bool sample = false;
  double temperature = 1.0;
  uint64_t topK = 0; ///< 0: every token
  double topP = 1.0; ///< 1: every token
  uint64_t seed = 0;
};

class TokenSampler {
public:
  explicit TokenSampler(const SamplingOptions &options)
      : options(options), state(options.seed) {}

  /// The next token from `vocab` logits.
  int32_t next(const float *logits, int64_t vocab);

private:
  /// Uniform in [0, 1), 53 bits.
  double uniform();

  SamplingOptions options;
  uint64_t state;
};

} // namespace lcc::tools

#endif // LCC_TOOLS_LCC_GENERATE_TOKENSAMPLER_H
