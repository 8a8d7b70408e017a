//===- Generation.cpp - prefill, then a cached step per token -------------===//

#include "Generation.h"

#include "common/RuntimeTool.h"

#include <algorithm>
#include <chrono>

using namespace lcc::tools;

double
lcc::tools::millisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

namespace {

/// Whether `forward` carries memories: tokens [B, S] i32 and memories in,
/// logits [B, S, V] f32 and each memory's next value (result i for input
/// i) out. Their count, or 0.
size_t carriedMemories(LccFunction forward) {
  size_t inputs = lccFunctionGetInputCount(forward);
  if (inputs < 2 || lccFunctionGetOutputCount(forward) < inputs)
    return 0;
  LccTensorView tokens, logits;
  lccFunctionGetInput(forward, 0, &tokens);
  lccFunctionGetOutput(forward, 0, &logits);
  if (tokens.dtype != LCC_DTYPE_I32 || tokens.rank != 2 ||
      logits.dtype != LCC_DTYPE_F32 || logits.rank != 3 ||
      logits.shape[0] != tokens.shape[0] || logits.shape[1] != tokens.shape[1])
    return 0;
  for (size_t i = 1; i < inputs; ++i) {
    LccTensorView in, out;
    lccFunctionGetInput(forward, i, &in);
    lccFunctionGetOutput(forward, i, &out);
    if (in.dtype != LCC_DTYPE_F32 || out.dtype != LCC_DTYPE_F32 ||
        !std::equal(in.shape, in.shape + in.rank, out.shape,
                    out.shape + out.rank))
      return 0;
  }
  return inputs - 1;
}

/// `name` of `session`, or null (the runtime's message dropped).
LccFunction lookup(LccSession session, const char *name) {
  LccFunction function = nullptr;
  if (LccStatus status = lccSessionLookupFunction(session, name, &function)) {
    takeMessage(status);
    return nullptr;
  }
  return function;
}

/// The batch, length and vocabulary of `g` from `function`'s tokens
/// [B, L] and logits [B, L, V].
void readShapes(Generator &g, LccFunction function) {
  LccTensorView tokens, logits;
  lccFunctionGetInput(function, 0, &tokens);
  lccFunctionGetOutput(function, 0, &logits);
  g.batch = tokens.shape[0];
  g.length = tokens.shape[1];
  g.vocab = logits.shape[2];
}

/// A model with memories compiled with --decode: prefill runs its
/// segments; the step's results after the logits are memory rows, each
/// named "<memory's input name>.row".
std::string findMemorySteps(Generator &g) {
  g.forward = g.prefill;
  readShapes(g, g.prefill);
  g.capacity = g.length;
  g.memoryRowResults.assign(g.memories, 0);
  for (size_t j = 1; j < lccFunctionGetOutputCount(g.step); ++j) {
    LccTensorView row;
    lccFunctionGetOutput(g.step, j, &row);
    bool found = false;
    for (size_t i = 0; i < g.memories; ++i) {
      LccTensorView memory;
      lccFunctionGetInput(g.prefill, i + 1, &memory);
      if (std::string(memory.name) + ".row" != row.name)
        continue;
      if (memory.rank != 3 || row.rank != 3 || memory.shape[1] != g.length ||
          row.shape[0] != g.batch || row.shape[1] != 1 ||
          row.shape[2] != memory.shape[2])
        return std::string("decode_step's result '") + row.name +
               "' is not one row of memory '" + memory.name + "'";
      g.memoryRowResults[i] = j;
      found = true;
    }
    if (!found)
      return std::string("decode_step's result '") + row.name +
             "' is the row of no memory prefill takes";
  }
  return "";
}

} // namespace

std::string Generator::find(LccModule module, LccSession session,
                            Generator &g) {
  g.prefill = lookup(session, "prefill");
  g.step = lookup(session, "decode_step");
  if (g.prefill && g.step && (g.memories = carriedMemories(g.prefill)))
    return findMemorySteps(g);
  if (!g.prefill || !g.step) {
    LccFunction forward = lookup(session, "forward");
    if (!forward || !(g.memories = carriedMemories(forward)))
      return "the module has no 'prefill' and 'decode_step' (compile the "
             "model with lcc --decode), and no 'forward' that carries "
             "memories (a Transformer-XL-like model generates without "
             "--decode)";
    g.prefill = g.step = nullptr;
    g.forward = forward;
    readShapes(g, forward);
    g.capacity = INT64_MAX;
    return "";
  }
  readShapes(g, g.prefill);
  g.capacity = g.length;
  for (size_t f = 0; f < lccModuleGetFunctionCount(module); ++f) {
    int64_t low, high;
    if (std::string(lccModuleGetFunctionName(module, f)) == "decode_step" &&
        lccModuleGetFunctionInputRange(module, f, 1, &low, &high))
      g.capacity = high + 1;
  }
  return "";
}

std::string lcc::tools::checkPrompts(const Generator &g,
                                     const std::vector<int32_t> &prompts,
                                     int64_t promptLength) {
  if (promptLength < 1 || (!g.bySegments() && promptLength > g.length))
    return "the prompt has " + std::to_string(promptLength) +
           " tokens; the model takes 1 to " + std::to_string(g.length);
  if (int64_t(prompts.size()) != g.batch * promptLength)
    return "expected " + std::to_string(g.batch) +
           " prompts (the model's batch)";
  for (int32_t token : prompts)
    if (token < 0 || token >= g.vocab)
      return "token " + std::to_string(token) +
             " is outside the vocabulary [0, " + std::to_string(g.vocab) + ")";
  return "";
}

std::string lcc::tools::generate(const Generator &g,
                                 const std::vector<int32_t> &prompts,
                                 int64_t promptLength,
                                 const GenerationOptions &options,
                                 Generated &out) {
  if (std::string error = checkPrompts(g, prompts, promptLength);
      !error.empty())
    return error;
  if (options.endTokenGiven &&
      (options.endToken < 0 || options.endToken >= g.vocab))
    return "the end token " + std::to_string(options.endToken) +
           " is outside the vocabulary [0, " + std::to_string(g.vocab) + ")";
  if (g.bySegments())
    return generateBySegments(g, prompts, promptLength, options, out);
  // The sequences as they grow, and prefill's input: their first
  // `length` positions, the prompts padded.
  int64_t limit = options.recompute ? g.length : g.capacity;
  std::vector<int32_t> sequences(g.batch * limit, 0),
      window(g.batch * g.length);
  for (int64_t b = 0; b < g.batch; ++b)
    std::copy_n(&prompts[b * promptLength], promptLength,
                &sequences[b * limit]);
  auto fillWindow = [&] {
    for (int64_t b = 0; b < g.batch; ++b)
      std::copy_n(&sequences[b * limit], g.length, &window[b * g.length]);
  };
  fillWindow();
  int64_t shape[2] = {g.batch, g.length};
  LccTensorView padded = {nullptr, LCC_DTYPE_I32, 2,
                          shape,   window.data(), uint64_t(window.size() * 4)};
  // A decode step at `position` on each sequence's token there.
  std::vector<int32_t> next(g.batch);
  auto step = [&](int64_t position) { return callStep(g, next, position); };
  // Prefill fills the caches; the prompt's last token goes through a step,
  // so that every new token comes from a step's logits: the attention of
  // the tokens so far (prefill's are those of the padded sequence, the
  // same for exact attention but not for LSH, whose sort sees the
  // padding).
  auto start = std::chrono::steady_clock::now();
  LccStatus prefilled = lccFunctionCall(g.prefill, &padded, 1);
  if (!prefilled && !options.recompute) {
    for (int64_t b = 0; b < g.batch; ++b)
      next[b] = sequences[b * limit + promptLength - 1];
    prefilled = step(promptLength - 1);
  }
  if (prefilled)
    return takeMessage(prefilled);
  out.prefillMs = millisecondsSince(start);

  TokenSampler sampler(options.sampling);
  std::vector<bool> ended(g.batch, false);
  out.newTokens = 0;
  auto decodeStart = std::chrono::steady_clock::now();
  for (int64_t position = promptLength;
       out.newTokens < int64_t(options.maxNewTokens); ++position) {
    if (position >= limit) {
      out.cachesFull = true;
      break;
    }
    // The logits that choose the token at `position`: the last step's one
    // row, or recomputing, prefill's at the position before it.
    bool fromPrefill = options.recompute;
    LccTensorView logits;
    lccFunctionGetResult(fromPrefill ? g.prefill : g.step, 0, &logits);
    int64_t row = fromPrefill ? position - 1 : 0;
    bool allEnded =
        chooseTokens(g, sampler, options,
                     static_cast<const float *>(logits.data) + row * g.vocab,
                     logits.shape[1] * g.vocab, ended, next);
    for (int64_t b = 0; b < g.batch; ++b)
      sequences[b * limit + position] = next[b];
    ++out.newTokens;
    if (allEnded || out.newTokens == int64_t(options.maxNewTokens))
      break;
    if (position + 1 >= limit) {
      out.cachesFull = true;
      break;
    }
    LccStatus status;
    if (options.recompute) {
      fillWindow();
      status = lccFunctionCall(g.prefill, &padded, 1);
    } else {
      status = step(position);
    }
    if (status)
      return takeMessage(status);
  }
  out.decodeMs = millisecondsSince(decodeStart);
  out.promptLength = promptLength;
  int64_t total = promptLength + out.newTokens;
  out.tokens.clear();
  for (int64_t b = 0; b < g.batch; ++b)
    out.tokens.insert(out.tokens.end(), &sequences[b * limit],
                      &sequences[b * limit] + total);
  return "";
}

LccStatus lcc::tools::callStep(const Generator &g,
                               const std::vector<int32_t> &tokens,
                               int64_t position) {
  int64_t tokenShape[2] = {g.batch, 1}, positionShape[2] = {1, 1};
  int32_t at = int32_t(position);
  LccTensorView inputs[2] = {
      {nullptr, LCC_DTYPE_I32, 2, tokenShape, tokens.data(),
       uint64_t(g.batch * 4)},
      {nullptr, LCC_DTYPE_I32, 2, positionShape, &at, 4}};
  return lccFunctionCall(g.step, inputs, 2);
}

bool lcc::tools::chooseTokens(const Generator &g, TokenSampler &sampler,
                              const GenerationOptions &options,
                              const float *rows, int64_t stride,
                              std::vector<bool> &ended,
                              std::vector<int32_t> &next) {
  bool allEnded = true;
  for (int64_t b = 0; b < g.batch; ++b) {
    next[b] = ended[b] ? int32_t(options.endToken)
                       : sampler.next(rows + b * stride, g.vocab);
    ended[b] =
        ended[b] || (options.endTokenGiven && next[b] == options.endToken);
    allEnded = allEnded && ended[b];
  }
  return allEnded;
}
