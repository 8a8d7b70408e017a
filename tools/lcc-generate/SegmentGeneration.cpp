//===- SegmentGeneration.cpp - generation through carried memories --------===//
//
// A model with memories (Transformer-XL, adaptive span, compressive memory)
// runs a long text segment by segment, each segment's forward taking the
// memories the one before it left (lcc-run --carry). Its memories are its
// cache: a new token at position p comes from the forward of p's segment
// on the tokens so far in it (padded: the attention is causal, so padding
// never reaches an earlier position) with the memories of the segments
// before, which a segment leaves once all its tokens are known. A token
// costs one segment's forward however long the text; recomputing (the
// baseline) runs every segment from the first again.
//
// Compiled with --decode, a segment starts with its prefill (the memories
// the segments before it left, the tokens known in it), which fills the
// attentions' caches with the memories' keys and values, and each token in
// it is a decode step at its place, whose rows of the per-position
// memories make up the next segment's (those computed from memories alone
// come whole from the prefill). A token then costs a step, and a segment
// one prefill more.
//
//===----------------------------------------------------------------------===//

#include "Generation.h"

#include "common/RuntimeTool.h"

#include <algorithm>
#include <cstdint>

using namespace lcc::tools;

namespace {

/// The memories one segment hands the next, and the calls of the forward.
class SegmentRunner {
public:
  SegmentRunner(const Generator &g, const std::vector<int32_t> &sequences,
                int64_t stride)
      : g(g), sequences(sequences), stride(stride),
        segment(g.batch * g.length) {
    for (size_t i = 1; i <= g.memories; ++i) {
      LccTensorView view;
      lccFunctionGetInput(g.forward, i, &view);
      shapes.emplace_back(view.shape, view.shape + view.rank);
      int64_t elements = 1;
      for (int64_t d : shapes.back())
        elements *= d;
      memories.emplace_back(elements, 0.0f);
    }
  }

  /// Every memory back to zeros, as before the first segment.
  void reset() {
    for (std::vector<float> &memory : memories)
      std::fill(memory.begin(), memory.end(), 0.0f);
  }

  /// The forward of segment `k` on its tokens before position `known`
  /// (the rest padding), with the current memories.
  LccStatus run(int64_t k, int64_t known) {
    for (int64_t b = 0; b < g.batch; ++b)
      for (int64_t j = 0; j < g.length; ++j) {
        int64_t position = k * g.length + j;
        segment[b * g.length + j] =
            position < known ? sequences[b * stride + position] : 0;
      }
    int64_t tokenShape[2] = {g.batch, g.length};
    std::vector<LccTensorView> inputs = {{nullptr, LCC_DTYPE_I32, 2, tokenShape,
                                          segment.data(),
                                          uint64_t(segment.size() * 4)}};
    for (size_t i = 0; i < memories.size(); ++i)
      inputs.push_back({nullptr, LCC_DTYPE_F32, shapes[i].size(),
                        shapes[i].data(), memories[i].data(),
                        uint64_t(memories[i].size() * sizeof(float))});
    return lccFunctionCall(g.forward, inputs.data(), inputs.size());
  }

  /// The last run's memories become the next segment's.
  void advance() {
    keepNext();
    memories.swap(next);
  }

  /// The last run's memories, kept as the next segment's while its steps
  /// replace the per-position rows.
  void keepNext() {
    next.resize(memories.size());
    for (size_t i = 0; i < memories.size(); ++i) {
      LccTensorView result;
      lccFunctionGetResult(g.forward, i + 1, &result);
      const float *data = static_cast<const float *>(result.data);
      next[i].assign(data, data + memories[i].size());
    }
  }

  /// The step at `row` of its segment on `tokens`; its memory rows into
  /// the next segment's memories.
  LccStatus step(int64_t row, const std::vector<int32_t> &tokens) {
    if (LccStatus status = callStep(g, tokens, row))
      return status;
    for (size_t i = 0; i < memories.size(); ++i) {
      if (!g.memoryRowResults[i])
        continue;
      LccTensorView result;
      lccFunctionGetResult(g.step, g.memoryRowResults[i], &result);
      const float *data = static_cast<const float *>(result.data);
      int64_t width = shapes[i][2];
      for (int64_t b = 0; b < g.batch; ++b)
        std::copy_n(data + b * width, width,
                    &next[i][(b * g.length + row) * width]);
    }
    return nullptr;
  }

  /// The memories the last segment's steps completed become the current.
  void beginNext() { memories.swap(next); }

  /// Runs segments 0 .. k - 1, each complete, from zero memories.
  LccStatus runBefore(int64_t k) {
    reset();
    for (int64_t s = 0; s < k; ++s) {
      if (LccStatus status = run(s, (s + 1) * g.length))
        return status;
      advance();
    }
    return nullptr;
  }

private:
  const Generator &g;
  const std::vector<int32_t> &sequences;
  int64_t stride;
  std::vector<int32_t> segment;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<std::vector<float>> memories, next;
};

/// generateBySegments with a decode step per token.
std::string generateBySteps(const Generator &g, std::vector<int32_t> &sequences,
                            int64_t total, int64_t promptLength,
                            const GenerationOptions &options, Generated &out) {
  SegmentRunner runner(g, sequences, total);
  // The prompt's whole segments, then the prefill of the segment of its
  // last token, which goes through a step.
  auto start = std::chrono::steady_clock::now();
  int64_t last = promptLength - 1, segment = last / g.length;
  std::vector<int32_t> next(g.batch);
  for (int64_t b = 0; b < g.batch; ++b)
    next[b] = sequences[b * total + last];
  LccStatus status = runner.runBefore(segment);
  if (!status)
    status = runner.run(segment, last);
  if (!status) {
    runner.keepNext();
    status = runner.step(last % g.length, next);
  }
  if (status)
    return takeMessage(status);
  out.prefillMs = millisecondsSince(start);

  TokenSampler sampler(options.sampling);
  std::vector<bool> ended(g.batch, false);
  out.newTokens = 0;
  auto decodeStart = std::chrono::steady_clock::now();
  for (int64_t position = promptLength;
       out.newTokens < int64_t(options.maxNewTokens); ++position) {
    LccTensorView logits;
    lccFunctionGetResult(g.step, 0, &logits);
    bool allEnded = chooseTokens(g, sampler, options,
                                 static_cast<const float *>(logits.data),
                                 g.vocab, ended, next);
    for (int64_t b = 0; b < g.batch; ++b)
      sequences[b * total + position] = next[b];
    ++out.newTokens;
    if (allEnded || out.newTokens == int64_t(options.maxNewTokens))
      break;
    // A new segment: its prefill with the memories the last one left.
    if (position % g.length == 0) {
      runner.beginNext();
      status = runner.run(position / g.length, position);
      if (!status)
        runner.keepNext();
    }
    if (!status)
      status = runner.step(position % g.length, next);
    if (status)
      return takeMessage(status);
  }
  out.decodeMs = millisecondsSince(decodeStart);
  return "";
}

} // namespace

std::string lcc::tools::generateBySegments(const Generator &g,
                                           const std::vector<int32_t> &prompts,
                                           int64_t promptLength,
                                           const GenerationOptions &options,
                                           Generated &out) {
  int64_t total = promptLength + int64_t(options.maxNewTokens);
  std::vector<int32_t> sequences(g.batch * total, 0);
  for (int64_t b = 0; b < g.batch; ++b)
    std::copy_n(&prompts[b * promptLength], promptLength,
                &sequences[b * total]);
  auto finish = [&] {
    out.promptLength = promptLength;
    out.tokens.clear();
    for (int64_t b = 0; b < g.batch; ++b)
      out.tokens.insert(out.tokens.end(), &sequences[b * total],
                        &sequences[b * total] + promptLength + out.newTokens);
    return "";
  };
  if (g.step && !options.recompute) {
    if (std::string error =
            generateBySteps(g, sequences, total, promptLength, options, out);
        !error.empty())
      return error;
    return finish();
  }
  SegmentRunner runner(g, sequences, total);
  // The prompt's whole segments before the one its last token is in.
  auto start = std::chrono::steady_clock::now();
  int64_t segment = (promptLength - 1) / g.length;
  if (!options.recompute)
    if (LccStatus status = runner.runBefore(segment))
      return takeMessage(status);
  out.prefillMs = millisecondsSince(start);

  TokenSampler sampler(options.sampling);
  std::vector<bool> ended(g.batch, false);
  std::vector<int32_t> next(g.batch);
  out.newTokens = 0;
  auto decodeStart = std::chrono::steady_clock::now();
  for (int64_t position = promptLength;
       out.newTokens < int64_t(options.maxNewTokens); ++position) {
    // The logits of the token before `position`, row `row` of its
    // segment's forward.
    segment = (position - 1) / g.length;
    int64_t row = (position - 1) % g.length;
    LccStatus status = options.recompute ? runner.runBefore(segment) : nullptr;
    if (!status)
      status = runner.run(segment, position);
    if (status)
      return takeMessage(status);
    LccTensorView logits;
    lccFunctionGetResult(g.forward, 0, &logits);
    bool allEnded =
        chooseTokens(g, sampler, options,
                     static_cast<const float *>(logits.data) + row * g.vocab,
                     g.length * g.vocab, ended, next);
    for (int64_t b = 0; b < g.batch; ++b)
      sequences[b * total + position] = next[b];
    ++out.newTokens;
    // The segment was whole: its memories are the next one's.
    if (row == g.length - 1 && !options.recompute)
      runner.advance();
    if (allEnded)
      break;
  }
  out.decodeMs = millisecondsSince(decodeStart);
  return finish();
}
