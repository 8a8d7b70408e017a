//===- Generation.h - prefill, then a cached step per token -----*- C++ -*-===//
//
// The generation loop of a module compiled with `lcc --decode`, over the
// runtime's C API: the prompts padded to the model's length through
// `prefill`, then one `decode_step` per new token (or, recomputing, the
// whole sequence through `prefill` again), each next token chosen by a
// TokenSampler. lcc-generate and the Python package's Module.generate run
// this one loop.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_TOOLS_LCC_GENERATE_GENERATION_H
#define LCC_TOOLS_LCC_GENERATE_GENERATION_H

#include "TokenSampler.h"

#include "lcc/runtime.h"

#include <cstdint>
#include <string>
#include <vector>

namespace lcc::tools {

/// A session's generation functions and their shapes: prefill takes
/// `length` tokens, the caches hold `capacity` positions (the valid range
/// of decode_step's position; more than `length` when compiled with a
/// longer --max-cache).
struct Generator {
  LccFunction prefill = nullptr, step = nullptr;
  int64_t batch = 0, length = 0, capacity = 0, vocab = 0;

  /// The functions of `session`, a session of `module`, or an error
  /// message.
  static std::string find(LccModule module, LccSession session,
                          Generator &generator);
};

struct GenerationOptions {
  SamplingOptions sampling;
  uint64_t maxNewTokens = 0;
  bool endTokenGiven = false;
  int64_t endToken = 0;
  /// Every token through prefill on the whole sequence, no caches.
  bool recompute = false;
};

struct Generated {
  /// Prompt and new tokens, [batch, promptLength + newTokens].
  std::vector<int32_t> tokens;
  int64_t promptLength = 0, newTokens = 0;
  double prefillMs = 0, decodeMs = 0;
  /// Whether generation stopped because the caches were full.
  bool cachesFull = false;
};

/// Generates after `prompts` ([batch, promptLength] tokens of the
/// vocabulary, promptLength in [1, length]); an error message or "".
std::string generate(const Generator &generator,
                     const std::vector<int32_t> &prompts, int64_t promptLength,
                     const GenerationOptions &options, Generated &out);

/// Why `prompts` cannot be generated from, or "".
std::string checkPrompts(const Generator &generator,
                         const std::vector<int32_t> &prompts,
                         int64_t promptLength);

} // namespace lcc::tools

#endif // LCC_TOOLS_LCC_GENERATE_GENERATION_H
