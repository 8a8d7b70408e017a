//===- lcc-generate.cpp - text from a module compiled with lcc --decode ---===//
//
// lcc-generate MODEL.lcm --params=W.safetensors
//     (--prompt-tokens=FILE.npy | --prompt=TEXT) --max-new-tokens=N
//     [--temperature=T] [--top-k=K] [--top-p=P] [--seed=S] [--end-token=ID]
//     [--output=TOKENS.npy] [--recompute] [--report=json]
//     [--device=...] [--threads=N]
//
// Runs `prefill` on the prompt (padded to the model's length), then one
// `decode_step` per new token, the caches staying on the device (docs/
// generation.md). --recompute runs the whole sequence again for every
// token instead: the cost generation without caches has, and a check.
// Uses the runtime's C API only.
//
//===----------------------------------------------------------------------===//

#include "Generation.h"

#include "common/RuntimeTool.h"

#include "lcc/runtime.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

using namespace lcc::tools;

namespace {

const char kUsage[] =
    "usage: lcc-generate MODEL.lcm --params=W.safetensors\n"
    "         (--prompt-tokens=FILE.npy | --prompt=TEXT) --max-new-tokens=N\n"
    "         [options]\n"
    "\n"
    "Generates tokens with a module compiled with lcc --decode: 'prefill' on\n"
    "the prompt, then one 'decode_step' per new token, the key and value\n"
    "caches kept on the device. A model whose 'forward' carries memories\n"
    "(Transformer-XL, adaptive span, compressive: forward(tokens, memories)\n"
    "-> (logits, memories, ...)) runs segment by segment: compiled with\n"
    "--decode, a prefill per segment (the memories of the segments before)\n"
    "and a decode step per token; without, each token comes from its\n"
    "segment's forward. Under mpirun every rank generates the same tokens\n"
    "(the same prompts and seed) and rank 0 alone prints and writes.\n"
    "\n"
    "  --params=FILE.safetensors   the weights (a checkpoint of lcc-train's\n"
    "                              too)\n"
    "  --prompt-tokens=FILE.npy    prompts, i32 [batch, length]: the model's\n"
    "                              batch, 1 to its sequence length tokens\n"
    "                              (any length with memories)\n"
    "  --prompt=TEXT               a prompt of bytes, for a byte-level model\n"
    "                              (vocab 256, batch 1); the text is printed\n"
    "                              (bytes that are no UTF-8 as \\xNN)\n"
    "  --max-new-tokens=N          tokens to generate per sequence; fewer\n"
    "                              where the caches fill (the model's length)\n"
    "  --temperature=T             sample from softmax(logits / T); 0 greedy\n"
    "  --top-k=K                   sample among the K most likely tokens\n"
    "  --top-p=P                   sample among the most likely tokens whose\n"
    "                              probability reaches P (nucleus)\n"
    "  --seed=S                    seed of the sampling (default 0); greedy\n"
    "                              (the most likely token) unless one of\n"
    "                              the three above is given\n"
    "  --end-token=ID              a sequence ends at this token; generation\n"
    "                              stops when every sequence has ended\n"
    "  --output=TOKENS.npy         prompt and new tokens, i32 [batch, length]\n"
    "                              (the ended sequences padded with the end\n"
    "                              token)\n"
    "  --recompute                 no caches: every token runs the whole\n"
    "                              padded sequence through prefill again\n"
    "                              (with memories: every segment again)\n"
    "  --report=json               print one JSON object of the timings\n"
    "  --device=cpu|cuda           device to run on (default "
    "cpu)\n" LCC_EMULATOR_USAGE "  --threads=N                 threads of the "
    "cpu device (default: the CPUs\n"
    "                              the process may run on)\n"
    "  --help, --version\n";

constexpr Flag kFlags[] = {kDeviceFlag,
                           kThreadsFlag,
                           kCheckFlag,
                           kThreadOrderFlag,
                           kReportFlag,
                           {"--params", "FILE.safetensors", FlagValue::Text},
                           {"--prompt-tokens", "FILE.npy", FlagValue::Text},
                           {"--prompt", "TEXT", FlagValue::Text},
                           {"--max-new-tokens", "N", FlagValue::PositiveCount},
                           {"--temperature", "T", FlagValue::Real},
                           {"--top-k", "K", FlagValue::PositiveCount},
                           {"--top-p", "P", FlagValue::Real},
                           {"--seed", "S", FlagValue::Count},
                           {"--end-token", "ID", FlagValue::Count},
                           {"--output", "TOKENS.npy", FlagValue::Text}};

constexpr Tool kTool("lcc-generate", kUsage, kFlags);

struct Options {
  std::string model;
  DeviceOptions device;
  std::string params, promptTokens, promptText, output;
  bool textPrompt = false;
  uint64_t maxNewTokens = 0;
  SamplingOptions sampling;
  bool endTokenGiven = false;
  int64_t endToken = 0;
  bool recompute = false;
  bool jsonReport = false;
};

std::string parseArguments(int argc, char **argv, Options &options,
                           bool &exitNow) {
  for (int i = 1; i < argc; ++i) {
    std::string argument = argv[i];
    if (kTool.printsInfo(argument)) {
      exitNow = true;
      return "";
    }
    if (argument == "--recompute") {
      options.recompute = true;
      continue;
    }
    if (!isOption(argument)) {
      std::string error = readModel(argument, options.model);
      if (!error.empty())
        return error;
      continue;
    }
    FlagArgument read;
    if (std::string error = kTool.readFlag(argument, read); !error.empty())
      return error;
    if (options.device.read(read))
      continue;
    const std::string &flag = read.flag;
    if (flag == "--params") {
      options.params = read.value;
    } else if (flag == "--prompt-tokens") {
      options.promptTokens = read.value;
    } else if (flag == "--prompt") {
      options.promptText = read.value;
      options.textPrompt = true;
    } else if (flag == "--max-new-tokens") {
      options.maxNewTokens = read.count;
    } else if (flag == "--temperature") {
      if (read.real < 0)
        return "expected --temperature >= 0, got " + read.value;
      options.sampling.temperature = read.real;
      options.sampling.sample = true;
    } else if (flag == "--top-k") {
      options.sampling.topK = read.count;
      options.sampling.sample = true;
    } else if (flag == "--top-p") {
      if (!(read.real > 0 && read.real <= 1))
        return "expected --top-p in (0, 1], got " + read.value;
      options.sampling.topP = read.real;
      options.sampling.sample = true;
    } else if (flag == "--seed") {
      options.sampling.seed = read.count;
    } else if (flag == "--end-token") {
      options.endTokenGiven = true;
      options.endToken = int64_t(read.count);
    } else if (flag == "--output") {
      options.output = read.value;
    } else if (flag == "--report") {
      options.jsonReport = true;
    }
  }
  if (options.model.empty())
    return "no model given; usage: lcc-generate MODEL.lcm --params=W "
           "--prompt-tokens=FILE.npy --max-new-tokens=N (see --help)";
  if (options.params.empty())
    return "no --params: generation needs the model's weights (lcc-train "
           "writes them; lcc-run --init-params writes fresh ones)";
  if (options.promptTokens.empty() == !options.textPrompt)
    return "give the prompt once: --prompt-tokens=FILE.npy or --prompt=TEXT";
  if (options.textPrompt && options.promptText.empty())
    return "--prompt is empty: give at least one byte";
  if (options.maxNewTokens == 0)
    return "no --max-new-tokens=N: how many tokens to generate";
  return options.device.check();
}

/// The prompts, [batch, prompt length] tokens, from the options.
std::string readPrompts(const Options &options, const Generator &g,
                        std::vector<int32_t> &prompts, int64_t &promptLength) {
  if (options.textPrompt) {
    if (g.vocab != 256 || g.batch != 1)
      return "--prompt is for a byte-level model of batch 1 (vocab 256); "
             "this one has batch " +
             std::to_string(g.batch) + " and vocab " + std::to_string(g.vocab) +
             ": give --prompt-tokens";
    for (unsigned char c : options.promptText)
      prompts.push_back(c);
    promptLength = int64_t(prompts.size());
  } else {
    NpyFiles files;
    if (std::string error = files.read(options.promptTokens); !error.empty())
      return error;
    const LccTensorView &view = files.views[0];
    if (view.dtype != LCC_DTYPE_I32 || view.rank != 2 ||
        view.shape[0] != g.batch)
      return "--prompt-tokens '" + options.promptTokens + "': expected i32 [" +
             std::to_string(g.batch) + ", length] (the model's batch)";
    promptLength = view.shape[1];
    const auto *data = static_cast<const int32_t *>(view.data);
    prompts.assign(data, data + g.batch * promptLength);
  }
  if (std::string error = checkPrompts(g, prompts, promptLength);
      !error.empty())
    return options.textPrompt
               ? error
               : "--prompt-tokens '" + options.promptTokens + "': " + error;
  return "";
}

/// `bytes` as text for a terminal: valid UTF-8 as it is, a control
/// character other than a line break or tab and a byte that begins no
/// valid UTF-8 sequence as \xNN.
std::string printableText(const std::vector<int32_t> &bytes) {
  std::string text;
  char escaped[8];
  for (size_t i = 0; i < bytes.size();) {
    unsigned char c = static_cast<unsigned char>(bytes[i]);
    size_t length = c < 0x80           ? 1
                    : (c >> 5) == 0x6  ? 2
                    : (c >> 4) == 0xe  ? 3
                    : (c >> 3) == 0x1e ? 4
                                       : 0;
    bool valid = length > 0 && i + length <= bytes.size();
    for (size_t k = 1; valid && k < length; ++k)
      valid = (static_cast<unsigned char>(bytes[i + k]) >> 6) == 0x2;
    bool control =
        length == 1 && (c < 0x20 || c == 0x7f) && c != '\n' && c != '\t';
    if (!valid || control) {
      std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
      text += escaped;
      ++i;
      continue;
    }
    for (size_t k = 0; k < length; ++k)
      text += static_cast<char>(bytes[i + k]);
    i += length;
  }
  return text;
}

/// What a run prints: the JSON report, or the text (--prompt) or the new
/// tokens (without --output) on stdout and the timings on stderr.
void report(const Options &options, const Generator &g, const Generated &result,
            uint64_t peakBytes) {
  int64_t newTokens = result.newTokens, promptLength = result.promptLength;
  int64_t total = promptLength + newTokens;
  double perToken = newTokens ? result.decodeMs / double(newTokens) : 0.0;
  double tokensPerSecond =
      result.decodeMs > 0
          ? 1000.0 * double(newTokens * g.batch) / result.decodeMs
          : 0.0;
  if (options.jsonReport) {
    std::printf("{\"prompt_tokens\": %lld, \"new_tokens\": %lld, "
                "\"batch\": %lld, \"prefill_ms\": %.3f, \"decode_ms\": %.3f, "
                "\"ms_per_token\": %.4f, \"tokens_per_second\": %.2f, "
                "\"peak_bytes\": %llu}\n",
                (long long)promptLength, (long long)newTokens,
                (long long)g.batch, result.prefillMs, result.decodeMs, perToken,
                tokensPerSecond, (unsigned long long)peakBytes);
    return;
  }
  if (options.textPrompt) {
    std::string text = printableText(result.tokens);
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fputc('\n', stdout);
  } else if (options.output.empty()) {
    for (int64_t b = 0; b < g.batch; ++b) {
      for (int64_t i = promptLength; i < total; ++i)
        std::printf(i == promptLength ? "%d" : " %d",
                    result.tokens[b * total + i]);
      std::printf("\n");
    }
  }
  std::fprintf(stderr,
               "lcc-generate: prefill %lld tokens in %.1f ms; %lld new "
               "tokens in %.1f ms (%.1f tokens/s, %.2f ms per token%s)\n",
               (long long)promptLength, result.prefillMs, (long long)newTokens,
               result.decodeMs, tokensPerSecond, perToken,
               options.recompute ? ", recomputing the sequence" : "");
}

int run(const Options &options) {
  Handles handles;
  if (std::string error = handles.load(options.model); !error.empty())
    return kTool.fail(kExitError, error);
  if (std::string error = handles.open(options.device); !error.empty())
    return kTool.fail(kExitError, error);
  // Under mpirun every rank generates the same tokens (the same prompts and
  // seed); rank 0 alone prints and writes, and a rank that fails ends the
  // job.
  if (std::string error = handles.joinJob(); !error.empty())
    return kTool.fail(kExitError, error);
  bool leader = handles.getRank() == 0;
  Generator g;
  if (std::string error = Generator::find(handles.module, handles.session, g);
      !error.empty())
    return kTool.fail(kExitError, options.model + ": " + error);
  if (options.endTokenGiven && options.endToken >= g.vocab)
    return kTool.fail(kExitUsage,
                      "--end-token=" + std::to_string(options.endToken) +
                          " is outside the vocabulary [0, " +
                          std::to_string(g.vocab) + ")");
  if (LccStatus status =
          lccSessionBindParametersFile(handles.session, options.params.c_str()))
    return kTool.fail(kExitError, "--params: " + takeMessage(status));
  std::vector<int32_t> prompts;
  int64_t promptLength = 0;
  if (std::string error = readPrompts(options, g, prompts, promptLength);
      !error.empty())
    return kTool.fail(kExitError, error);
  GenerationOptions generation;
  generation.sampling = options.sampling;
  generation.maxNewTokens = options.maxNewTokens;
  generation.endTokenGiven = options.endTokenGiven;
  generation.endToken = options.endToken;
  generation.recompute = options.recompute;
  Generated result;
  if (std::string error =
          generate(g, prompts, promptLength, generation, result);
      !error.empty())
    return kTool.fail(kExitError, error);
  if (!leader)
    return 0;
  if (result.cachesFull)
    kTool.note(options.recompute
                   ? "the model runs " + std::to_string(g.length) +
                         " positions: stopped after " +
                         std::to_string(result.newTokens) + " new tokens"
                   : "the caches hold " + std::to_string(g.capacity) +
                         " positions: stopped after " +
                         std::to_string(result.newTokens) + " new tokens");
  if (!options.output.empty()) {
    int64_t shape[2] = {g.batch, result.promptLength + result.newTokens};
    LccTensorView out = {
        nullptr, LCC_DTYPE_I32,        2,
        shape,   result.tokens.data(), uint64_t(result.tokens.size() * 4)};
    if (LccStatus status = lccNpyWrite(options.output.c_str(), &out))
      return kTool.fail(kExitError, "--output: " + takeMessage(status));
  }
  report(options, g, result, lccDeviceGetPeakBytes(handles.device));
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  return kTool.run(argc, argv, parseArguments, run);
}
