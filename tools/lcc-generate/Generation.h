//===- Generation.h - prefill, then a cached step per token -----*- C++ -*-===//
//
// The generation loops over the runtime's C API, each next token chosen by
// a TokenSampler. A module compiled with `lcc --decode`: the prompts padded
// to the model's length through `prefill`, then one `decode_step` per new
// token (or, recomputing, the whole sequence through `prefill` again). A
// model with memories (Transformer-XL, adaptive span, compressive:
// `forward(tokens, memories...) -> (logits, memories..., ...)`), segment by
// segment (SegmentGeneration.cpp): compiled with --decode, a step per
// token within a segment; without, its segment's forward per token.
// lcc-generate and the Python package's Module.generate run these loops.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_TOOLS_LCC_GENERATE_GENERATION_H
#define LCC_TOOLS_LCC_GENERATE_GENERATION_H

#include "TokenSampler.h"

#include "lcc/runtime.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace lcc::tools {

/// A session's generation functions and their shapes: prefill takes
/// `length` tokens, the caches hold `capacity` positions (the valid range
/// of decode_step's position; more than `length` when compiled with a
/// longer --max-cache). A model with memories runs segments of `length`
/// tokens through `forward` (its forward, or prefill when compiled with
/// --decode), which takes `memories` carried inputs, result i the next
/// segment's input i; its step returns, after the logits, the row at its
/// position of each memory that is per position.
struct Generator {
  LccFunction prefill = nullptr, step = nullptr;
  LccFunction forward = nullptr;
  size_t memories = 0;
  /// Per memory (input i + 1), the step's result with its row, or 0 when
  /// the segment's prefill gives it whole (computed from memories alone).
  std::vector<size_t> memoryRowResults;
  int64_t batch = 0, length = 0, capacity = 0, vocab = 0;

  bool bySegments() const { return memories != 0; }

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

/// generate for a model with memories: each new token from a decode step
/// at its place in its segment (or, without one, from its segment's
/// forward on the tokens so far in it, padded) with the memories the
/// segments before it left (SegmentGeneration.cpp).
std::string generateBySegments(const Generator &generator,
                               const std::vector<int32_t> &prompts,
                               int64_t promptLength,
                               const GenerationOptions &options,
                               Generated &out);

/// The decode step on `tokens` ([batch, 1]) at `position`.
LccStatus callStep(const Generator &g, const std::vector<int32_t> &tokens,
                   int64_t position);

/// The next token of each sequence from its row of logits (`rows` + b *
/// `stride` floats, vocab of them), or the end token for one that ended;
/// marks those that end now. Whether every sequence has ended.
bool chooseTokens(const Generator &generator, TokenSampler &sampler,
                  const GenerationOptions &options, const float *rows,
                  int64_t stride, std::vector<bool> &ended,
                  std::vector<int32_t> &next);

/// Milliseconds since `start`.
double millisecondsSince(std::chrono::steady_clock::time_point start);

/// Why `prompts` cannot be generated from, or "".
std::string checkPrompts(const Generator &generator,
                         const std::vector<int32_t> &prompts,
                         int64_t promptLength);

} // namespace lcc::tools

#endif // LCC_TOOLS_LCC_GENERATE_GENERATION_H
