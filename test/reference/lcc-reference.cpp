//===- lcc-reference.cpp - Run the double-precision reference -------------===//
//
// Model mode:
//   lcc-reference --model=transformer-tiny|reformer-tiny
//       --params=W.safetensors --input=tokens.npy --output=OUT.npy
// Op mode (inputs in the op's operand order):
//   lcc-reference --op=NAME [op flags] --input=A.npy ... --output=OUT.npy
//
// Graph mode (the differential model fuzzer's models, see Graph.h):
//   lcc-reference --graph=SPEC.json [--params=W.safetensors] --input=A.npy ...
//       --output-dir=DIR            (writes DIR/result<i>.npy)
// Gradient mode (compiled training's gradients against finite differences of
// the loss, GradientCheck.h):
//   lcc-reference --graph=SPEC.json | --model=NAME  --params=W.safetensors
//       --input=... --check-gradients=G.safetensors [--grad-output=DIR]
//
// The output is always written as f32 .npy. Exit status: 0, or 1 when a
// gradient check fails; 2 on any error ("lcc-reference: error: ...").
//
//===----------------------------------------------------------------------===//

#include "GradientCheck.h"
#include "Graph.h"
#include "Json.h"
#include "Masks.h"
#include "Reference.h"
#include "TensorIO.h"
#include "ToolSupport.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <malloc.h>
#include <set>

using namespace lcc::reference;

namespace {

const char *const kUsage = R"usage(usage:
  lcc-reference --model=transformer-tiny|reformer-tiny --params=W.safetensors
                --input=tokens.npy --output=OUT.npy
  lcc-reference --op=OP [flags] --input=A.npy [--input=B.npy ...]
                --output=OUT.npy
  lcc-reference --graph=SPEC.json [--params=W.safetensors]
                --input=A.npy ... --output-dir=DIR   (DIR/result<i>.npy)
                [--round-to-f32]  (every node's results rounded to f32, as
                compiled code stores them: a measure of conditioning)
                [--perturb-ulps=N]  (rounded to f32, then each element moved
                by a pseudo-random -N..N ulps, as a compiled op may be off)
  lcc-reference --graph=SPEC.json --params=W.safetensors --input=A.npy ...
                --check-gradients=G.safetensors
  lcc-reference --model=NAME --params=W.safetensors --input=tokens.npy
                --input=labels.npy [--input=weights.npy]
                --check-gradients=G.safetensors
gradient checks (exit 0 pass, 1 fail, 2 error):
  The loss is the graph's first output (0-d), or for --model the mean
  softmax cross-entropy of its logits against i32 labels [1, seq] (weighted
  by f32 weights [1, seq] when given). G holds the compiled gradient of some
  parameters, named as in W, and may hold the compiled loss as 'loss' (as
  lcc --emit-gradients returns it), which is compared with the reference
  loss at the same bound. Each is compared with central differences
  (L(p+h) - L(p-h)) / 2h, h = S * max(1, |p|), on every entry or on K
  distinct entries drawn from the Random.h stream (GradientCheck.h), and
  prints "NAME: N of M entries, relative error E; farthest: entry I,
  compiled G, difference D", E = max|g - fd| / max|fd| (max|g - fd| if fd
  is 0) and I the flat index where |g - fd| is largest, then
  "max relative error E (bound R)".
  --fd-step=S             1e-4
  --fd-entries=K          entries per tensor: 48 for --graph, 4 for --model
                          (every entry reruns most of a bundled model)
  --seed=N                1; printed as "seed: N"
  --rtol=R                1e-3
  --skip-kinks            checks that the loss is smooth around each entry
                          (the differences at S and S/2 agree, and the loss
                          is one parabola across them, each to R/4 of the
                          tensor's largest difference) and replaces those
                          where it is not (a ReLU changes side within the
                          step, or routing or hashing changes) by the same
                          checks at S/8 and S/64 (a kink near the entry lies
                          past a smaller step), then by other entries;
                          prints how many it replaced
  --grad-output=DIR       also writes every entry's finite difference as
                          DIR/<name>.npy (f32): of the checked parameters, or
                          without --check-gradients of every parameter (two
                          evaluations per entry: small graphs only)
ops and their inputs (in operand order) and flags:
  attention              q k v (or qk v with --shared-qk)
                         [--causal] [--shared-qk] [--scale=S]
                         [--mask=NAME:PARAMS] [--score=NAME[:PARAMS]]
                         (the mask and score regions of the examples:
                         sliding:W, longformer:W,G, bigbird:B,G,R,S,
                         documents:L1,L2,..., lag:L; alibi, softcap:C;
                         see Masks.h)
  sparse_attention       q k v  --pattern=fixed|strided --stride=N
                         [--summary=N (fixed)] [--causal] [--scale=S]
  lsh_attention          qk v  --n-hashes=N --bucket-size=B --seed=S
                         [--n-buckets=K] [--causal] [--scale=F]
                         [--factorized-hash]
                         (Reformer LSH as lcc compiles it:
                         attn.lsh_attention's rotations drawn from S, its
                         buckets (K, by default padded seq / B), sort,
                         chunks and rounds; factorized: n_buckets as a
                         pair n1 x n2)
  lsh_buckets            qk  --n-hashes=N --bucket-size=B --seed=S
                         [--n-buckets=K] [--factorized-hash]
                         (the bucket of every token in every round,
                         [batch, heads, n_hashes, padded seq]: what
                         lsh_attention sorts by)
  relative_attention     q k v pos u w  [--clamp-len=N] [--same-length=N]
                         [--scale=F]  (Transformer-XL: the first k_seq -
                         q_seq keys are the memory)
  adaptive_span_attention q k v z  --max-span=N [--ramp=R (32)] [--causal]
                         [--scale=F]  (the first k_seq - q_seq keys are
                         the memory)
  compress               x weight bias  --rate=R  (the Compressive
                         Transformer's convolution, kernel = stride = R)
  routed_attention       q k v centroids  --window=W [--causal] [--scale=F]
                         (attn.routed_attention with given centroids)
  routed_centroid_update centroids q k  --decay=F  (the train step's
                         moving average of routed attention's centroids)
  layer_norm             x gamma beta  [--epsilon=E]
  linear                 x weight [bias]
  feed_forward           x w1 b1 w2 b2  --activation=relu|gelu
  embedding              tokens table
  softmax_cross_entropy  logits labels [weights]
)usage";

/// The op flags each op accepts; any other op flag is an error, so a typo'd
/// harness cannot silently compute something else.
const std::map<std::string, std::set<std::string>> kOpFlags = {
    {"attention", {"causal", "shared-qk", "scale", "mask", "score"}},
    {"sparse_attention", {"causal", "scale", "pattern", "stride", "summary"}},
    {"lsh_attention",
     {"causal", "scale", "n-hashes", "bucket-size", "n-buckets",
      "factorized-hash"}},
    {"lsh_buckets",
     {"n-hashes", "bucket-size", "n-buckets", "factorized-hash"}},
    {"routed_attention", {"causal", "scale", "window"}},
    {"relative_attention", {"scale", "clamp-len", "same-length"}},
    {"adaptive_span_attention", {"causal", "scale", "max-span", "ramp"}},
    {"compress", {"rate"}},
    {"routed_centroid_update", {"decay"}},
    {"layer_norm", {"epsilon"}},
    {"linear", {}},
    {"feed_forward", {"activation"}},
    {"embedding", {}},
    {"softmax_cross_entropy", {}},
};

// --seed is not among them: gradient checks take it too (see run()).
const std::set<std::string> kAllOpFlags = {
    "causal",    "shared-qk",   "scale",      "pattern", "stride",
    "summary",   "epsilon",     "activation", "mask",    "score",
    "n-hashes",  "bucket-size", "window",     "decay",   "factorized-hash",
    "clamp-len", "same-length", "max-span",   "ramp",    "rate",
    "n-buckets"};

void expectInputCount(const std::string &op, const std::vector<Tensor> &inputs,
                      size_t low, size_t high) {
  if (inputs.size() < low || inputs.size() > high)
    throw ReferenceError(
        "--op=" + op + " takes " + std::to_string(low) +
        (high != low ? " to " + std::to_string(high) : std::string()) +
        " --input files, got " + std::to_string(inputs.size()));
}

std::optional<double> optionalScale(const Arguments &args) {
  if (!args.has("scale"))
    return std::nullopt;
  return parseDouble(args.value("scale"), "--scale");
}

Tensor runOp(const std::string &op, const Arguments &args,
             const std::vector<Tensor> &in) {
  auto opIt = kOpFlags.find(op);
  if (opIt == kOpFlags.end())
    throw ReferenceError("unknown --op=" + op);
  for (const std::string &flag : kAllOpFlags)
    if (args.has(flag) && !opIt->second.count(flag))
      throw ReferenceError("--" + flag + " does not apply to --op=" + op);

  bool causal = args.has("causal");
  if (op == "attention") {
    bool sharedQK = args.has("shared-qk");
    if (sharedQK) {
      // Shared-QK takes (qk, v), or (q, k, v) with k == q.
      expectInputCount(op, in, 2, 3);
      const Tensor &qk = in[0];
      const Tensor &v = in.back();
      if (in.size() == 3 && (in[1].shape != qk.shape || in[1].data != qk.data))
        throw ReferenceError("--shared-qk: the key input differs from the "
                             "query input");
      if (args.has("mask") || args.has("score"))
        throw ReferenceError("--mask and --score take q k v inputs, not "
                             "--shared-qk");
      return attention(qk, qk, v, causal, optionalScale(args), true);
    }
    expectInputCount(op, in, 3, 3);
    if (args.has("mask") || args.has("score")) {
      PositionMask mask =
          args.has("mask") ? namedMask(args.value("mask")) : PositionMask();
      ScoreModifier score = args.has("score")
                                ? namedScore(args.value("score"), in[0].dim(1))
                                : ScoreModifier();
      return modifiedAttention(in[0], in[1], in[2], causal, optionalScale(args),
                               mask, score);
    }
    return attention(in[0], in[1], in[2], causal, optionalScale(args));
  }
  if (op == "sparse_attention") {
    expectInputCount(op, in, 3, 3);
    std::string patternName = args.value("pattern");
    SparsePattern pattern;
    if (patternName == "fixed")
      pattern = SparsePattern::Fixed;
    else if (patternName == "strided")
      pattern = SparsePattern::Strided;
    else
      throw ReferenceError("--pattern must be fixed or strided, got '" +
                           patternName + "'");
    int64_t stride = parseInt64(args.value("stride"), "--stride");
    int64_t summary = 0;
    if (pattern == SparsePattern::Fixed)
      summary = parseInt64(args.value("summary"), "--summary");
    return sparseAttention(in[0], in[1], in[2], pattern, stride, summary,
                           causal, optionalScale(args));
  }
  if (op == "lsh_attention" || op == "lsh_buckets") {
    bool buckets = op == "lsh_buckets";
    expectInputCount(op, in, buckets ? 1 : 2, buckets ? 1 : 2);
    LSHAttentionOptions options;
    options.nHashes = parseInt64(args.value("n-hashes"), "--n-hashes");
    options.bucketSize = parseInt64(args.value("bucket-size"), "--bucket-size");
    if (args.has("n-buckets"))
      options.nBuckets = parseInt64(args.value("n-buckets"), "--n-buckets");
    options.causal = causal;
    options.seed = parseUInt64(args.value("seed"), "--seed");
    options.scale = optionalScale(args);
    options.factorized = args.has("factorized-hash");
    if (buckets) {
      int64_t seq = in[0].dim(2);
      return lshBuckets(in[0],
                        lshRotations(in[0].dim(3), options.nHashes,
                                     options.rotationColumns(seq),
                                     options.seed),
                        options);
    }
    return lshAttention(in[0], in[1], options);
  }
  if (op == "relative_attention") {
    expectInputCount(op, in, 6, 6);
    RelativeAttentionOptions options;
    options.scale = optionalScale(args);
    if (args.has("clamp-len"))
      options.clampLen = parseInt64(args.value("clamp-len"), "--clamp-len");
    if (args.has("same-length"))
      options.sameLength =
          parseInt64(args.value("same-length"), "--same-length");
    return relativeAttention(in[0], in[1], in[2], in[3], in[4], in[5],
                             options);
  }
  if (op == "compress") {
    expectInputCount(op, in, 3, 3);
    return compress(in[0], in[1], in[2],
                    parseInt64(args.value("rate"), "--rate"));
  }
  if (op == "adaptive_span_attention") {
    expectInputCount(op, in, 4, 4);
    AdaptiveSpanOptions options;
    options.maxSpan = parseInt64(args.value("max-span"), "--max-span");
    if (args.has("ramp"))
      options.ramp = parseInt64(args.value("ramp"), "--ramp");
    options.causal = causal;
    options.scale = optionalScale(args);
    return adaptiveSpanAttention(in[0], in[1], in[2], in[3], options);
  }
  if (op == "routed_attention") {
    expectInputCount(op, in, 4, 4);
    return routedAttention(in[0], in[1], in[2], in[3],
                           parseInt64(args.value("window"), "--window"), causal,
                           optionalScale(args));
  }
  if (op == "routed_centroid_update") {
    expectInputCount(op, in, 3, 3);
    return routedCentroidUpdate(in[0], in[1], in[2],
                                parseDouble(args.value("decay"), "--decay"));
  }
  if (op == "layer_norm") {
    expectInputCount(op, in, 3, 3);
    double epsilon = args.has("epsilon")
                         ? parseDouble(args.value("epsilon"), "--epsilon")
                         : kDefaultLayerNormEpsilon;
    return layerNorm(in[0], in[1], in[2], epsilon);
  }
  if (op == "linear") {
    expectInputCount(op, in, 2, 3);
    return linear(in[0], in[1], in.size() == 3 ? &in[2] : nullptr);
  }
  if (op == "feed_forward") {
    expectInputCount(op, in, 5, 5);
    std::string name = args.value("activation");
    Activation activation;
    if (name == "relu")
      activation = Activation::Relu;
    else if (name == "gelu")
      activation = Activation::Gelu;
    else
      throw ReferenceError("--activation must be relu or gelu, got '" + name +
                           "'");
    return feedForward(in[0], in[1], in[2], in[3], in[4], activation);
  }
  if (op == "embedding") {
    expectInputCount(op, in, 2, 2);
    return embedding(in[0], in[1]);
  }
  // softmax_cross_entropy
  expectInputCount(op, in, 2, 3);
  return softmaxCrossEntropy(in[0], in[1], in.size() == 3 ? &in[2] : nullptr);
}

Tensor runModel(const std::string &model, const Arguments &args,
                const std::vector<Tensor> &in) {
  if (in.size() != 1)
    throw ReferenceError("--model takes exactly one --input (the tokens), "
                         "got " +
                         std::to_string(in.size()));
  for (const std::string &flag : kAllOpFlags)
    if (args.has(flag))
      throw ReferenceError("--" + flag + " does not apply to --model");
  Weights weights = readSafetensors(args.value("params"));
  if (model == "transformer-tiny")
    return transformerTiny(weights, in[0]);
  if (model == "reformer-tiny")
    return reformerTiny(weights, in[0]);
  throw ReferenceError("unknown --model=" + model +
                       " (transformer-tiny or reformer-tiny)");
}

int runGraphMode(const Arguments &args, const std::vector<Tensor> &inputs) {
  for (const std::string &flag : kAllOpFlags)
    if (args.has(flag))
      throw ReferenceError("--" + flag + " does not apply to --graph");
  if (args.has("output"))
    throw ReferenceError("--graph writes every result: give --output-dir");
  JsonValue spec = parseJson(readFile(args.value("graph")));
  Weights weights;
  if (args.has("params"))
    weights = readSafetensors(args.value("params"));
  F32Storage storage;
  storage.roundToF32 = args.has("round-to-f32") || args.has("perturb-ulps");
  if (args.has("perturb-ulps")) {
    int64_t ulps = parseInt64(args.value("perturb-ulps"), "--perturb-ulps");
    if (ulps < 1 || ulps > 1024)
      throw ReferenceError("--perturb-ulps must be in [1, 1024], got " +
                           args.value("perturb-ulps"));
    storage.perturbUlps = unsigned(ulps);
  }
  std::vector<Tensor> results = runGraph(spec, inputs, weights, storage);
  std::string directory = args.value("output-dir");
  for (size_t i = 0; i < results.size(); ++i)
    writeNpy(directory + "/result" + std::to_string(i) + ".npy", results[i],
             DType::F32);
  return 0;
}

//===----------------------------------------------------------------------===//
// Gradient mode
//===----------------------------------------------------------------------===//

/// Entries per tensor: each costs two evaluations of the loss, and one of a
/// bundled model at its full seq is a second or so even from a later stage.
constexpr int64_t kGraphFdEntries = 48;
constexpr int64_t kModelFdEntries = 4;
constexpr double kDefaultGradientRtol = 1e-3;

std::string scientific(double x) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3e", x);
  return text;
}

/// The loss and the names of its parameters, from --graph or --model.
struct GradientProblem {
  LossFunction loss;
  std::vector<std::string> params;
};

GradientProblem gradientProblem(const Arguments &args,
                                const std::vector<Tensor> &inputs,
                                const Weights &weights) {
  if (args.has("graph")) {
    GradientProblem problem{
        graphLoss(parseJson(readFile(args.value("graph"))), inputs, weights),
        {}};
    // A name the graph does not define is a parameter: every weight may be.
    for (const auto &entry : weights)
      problem.params.push_back(entry.first);
    return problem;
  }
  std::string model = args.value("model");
  std::vector<ModelStage> stages;
  if (model == "transformer-tiny")
    stages = transformerTinyStages();
  else if (model == "reformer-tiny")
    stages = reformerTinyStages();
  else
    throw ReferenceError("unknown --model=" + model +
                         " (transformer-tiny or reformer-tiny)");
  if (inputs.size() < 2 || inputs.size() > 3)
    throw ReferenceError("a gradient check of --model takes the tokens, the "
                         "labels and optionally the loss weights as --input, "
                         "got " +
                         std::to_string(inputs.size()) + " files");
  GradientProblem problem;
  for (const ModelStage &stage : stages)
    problem.params.insert(problem.params.end(), stage.params.begin(),
                          stage.params.end());
  std::optional<Tensor> positionWeights;
  if (inputs.size() == 3)
    positionWeights = inputs[2];
  problem.loss = modelLoss(std::move(stages), weights, inputs[0], inputs[1],
                           positionWeights);
  return problem;
}

/// Entries drawn per checked entry with --skip-kinks, the spares replacing
/// entries that are not smooth.
constexpr int64_t kKinkDrawFactor = 4;

/// Where lcc --emit-gradients puts the loss among the gradients: compared
/// with the reference loss when the file holds it.
constexpr const char *kCompiledLossName = "loss";

int runGradientMode(const Arguments &args, const std::vector<Tensor> &inputs) {
  for (const std::string &flag : kAllOpFlags)
    if (args.has(flag))
      throw ReferenceError("--" + flag + " does not apply to gradient checks");
  for (const char *flag : {"output", "output-dir", "round-to-f32",
                           "perturb-ulps"})
    if (args.has(flag))
      throw ReferenceError(std::string("--") + flag +
                           " does not apply to gradient checks");
  bool checking = args.has("check-gradients");
  double step = kDefaultFiniteDifferenceStep;
  if (args.has("fd-step"))
    step = parseDouble(args.value("fd-step"), "--fd-step");
  if (!(step > 0) || !std::isfinite(step))
    throw ReferenceError("--fd-step must be a positive number");
  double rtol = kDefaultGradientRtol;
  if (args.has("rtol"))
    rtol = parseDouble(args.value("rtol"), "--rtol");
  if (!(rtol >= 0))
    throw ReferenceError("--rtol must be >= 0");
  uint64_t seed =
      args.has("seed") ? parseUInt64(args.value("seed"), "--seed") : 1;
  int64_t entries = args.has("model") ? kModelFdEntries : kGraphFdEntries;
  if (args.has("fd-entries"))
    entries = parseInt64(args.value("fd-entries"), "--fd-entries");
  if (entries < 1)
    throw ReferenceError("--fd-entries must be >= 1");

  // Every gradient is validated before the first (slow) evaluation.
  Weights weights = readSafetensors(args.value("params"));
  Weights compiled;
  if (checking) {
    std::string path = args.value("check-gradients");
    compiled = readSafetensors(path);
    if (compiled.empty())
      throw ReferenceError(path + ": holds no gradients");
    for (const auto &[name, gradient] : compiled) {
      auto param = weights.find(name);
      // lcc --emit-gradients returns the loss beside the gradients.
      if (name == kCompiledLossName && param == weights.end() &&
          gradient.size() == 1)
        continue;
      if (param == weights.end())
        throw ReferenceError(path + ": '" + name + "' is not a parameter of " +
                             args.value("params"));
      expectShape(gradient, param->second.shape,
                  path + ": gradient of '" + name + "'");
    }
  }
  GradientProblem problem = gradientProblem(args, inputs, weights);
  std::string outputDir =
      args.has("grad-output") ? args.value("grad-output") : "";

  if (!checking) {
    for (const std::string &name : problem.params)
      writeNpy(outputDir + "/" + name + ".npy",
               finiteDifferenceGradient(problem.loss, weights, name, step),
               DType::F32);
    return 0;
  }

  // Printed first, so that even a failure below can be reproduced.
  std::cout << "seed: " << seed << std::endl;
  SplitMix64 rng(seed);
  double worst = 0;
  bool pass = true;
  if (auto loss = compiled.find(kCompiledLossName);
      loss != compiled.end() && !weights.count(kCompiledLossName)) {
    double reference = problem.loss(weights, "");
    double error = gradientError({loss->second.data[0]}, {reference});
    std::cout << "loss: compiled " << loss->second.data[0] << ", reference "
              << reference << ", relative error " << scientific(error)
              << std::endl;
    pass = error <= rtol;
    worst = std::isnan(error) ? std::nan("") : error;
  }
  bool skipKinks = args.has("skip-kinks");
  if (skipKinks && !outputDir.empty())
    throw ReferenceError("--skip-kinks checks entries one by one; it does not "
                         "combine with --grad-output");
  for (const auto &[name, gradient] : compiled) {
    if (name == kCompiledLossName && !weights.count(name))
      continue;
    // With --skip-kinks, spare entries replace those that are not smooth.
    int64_t drawn = skipKinks ? std::min<int64_t>(gradient.size(),
                                                  kKinkDrawFactor * entries)
                              : entries;
    std::vector<int64_t> candidates =
        sampleEntries(gradient.size(), drawn, rng);
    std::vector<double> got, fd;
    std::vector<int64_t> checked;
    Tensor full;
    if (!outputDir.empty()) {
      full = finiteDifferenceGradient(problem.loss, weights, name, step);
      writeNpy(outputDir + "/" + name + ".npy", full, DType::F32);
    }
    // The unmoved loss is the same for every parameter.
    double center = skipKinks ? problem.loss(weights, "") : 0.0;
    // An entry is judged against the largest difference accepted so far
    // (the check's scale, which only grows); those held back are judged
    // again against the final one, and fill what is left of the count.
    double scale = 0;
    std::vector<std::pair<int64_t, std::vector<LocalDifferences>>> heldBack;
    const Tensor &compiledGradient = gradient; // a binding is not captured
    auto accept = [&](int64_t entry, double difference) {
      got.push_back(compiledGradient.data[entry]);
      fd.push_back(difference);
      checked.push_back(entry);
      scale = std::max(scale, std::fabs(difference));
    };
    for (int64_t entry : candidates) {
      if (static_cast<int64_t>(got.size()) == entries)
        break;
      if (!skipKinks) {
        accept(entry,
               outputDir.empty()
                   ? finiteDifference(problem.loss, weights, name, entry, step)
                   : full.data[entry]);
        continue;
      }
      std::vector<LocalDifferences> tries = differencesAroundKinks(
          problem.loss, weights, name, entry, center, step, rtol, scale);
      if (const LocalDifferences *smooth = firstSmooth(tries, rtol, scale))
        accept(entry, smooth->full);
      else
        heldBack.emplace_back(entry, std::move(tries));
    }
    int64_t skipped = 0;
    for (const auto &[entry, tries] : heldBack) {
      const LocalDifferences *smooth = firstSmooth(tries, rtol, scale);
      if (!smooth)
        ++skipped;
      else if (static_cast<int64_t>(got.size()) < entries)
        accept(entry, smooth->full);
    }
    if (got.empty())
      throw ReferenceError("every entry of '" + name +
                           "' checked is at a "
                           "kink: no finite difference there can be trusted");
    double error = gradientError(got, fd);
    std::cout << name << ": " << got.size() << " of " << gradient.size()
              << " entries";
    if (skipKinks)
      std::cout << " (" << skipped << " at kinks skipped)";
    std::cout << ", relative error " << scientific(error);
    // The entry farthest from its difference, so that a failure can be
    // looked at entry by entry.
    size_t worstEntry = 0;
    for (size_t i = 1; i < got.size(); ++i)
      if (!(std::fabs(got[i] - fd[i]) <=
            std::fabs(got[worstEntry] - fd[worstEntry])))
        worstEntry = i;
    std::cout << "; farthest: entry " << checked[worstEntry] << ", compiled "
              << scientific(got[worstEntry]) << ", difference "
              << scientific(fd[worstEntry]) << std::endl;
    pass = pass && error <= rtol; // false for NaN
    worst = std::isnan(error) || std::isnan(worst) ? std::nan("")
                                                   : std::max(worst, error);
  }
  std::cout << "max relative error " << scientific(worst) << " (bound "
            << scientific(rtol) << ")" << std::endl;
  return pass ? 0 : 1;
}

int run(int argc, char **argv) {
  std::map<std::string, bool> known = {{"help", false},
                                       {"graph", true},
                                       {"round-to-f32", false},
                                       {"perturb-ulps", true},
                                       {"output-dir", true},
                                       {"model", true},
                                       {"params", true},
                                       {"op", true},
                                       {"input", true},
                                       {"output", true},
                                       {"causal", false},
                                       {"shared-qk", false},
                                       {"scale", true},
                                       {"mask", true},
                                       {"score", true},
                                       {"pattern", true},
                                       {"stride", true},
                                       {"summary", true},
                                       {"activation", true},
                                       {"epsilon", true},
                                       {"n-hashes", true},
                                       {"bucket-size", true},
                                       {"window", true},
                                       {"decay", true},
                                       {"factorized-hash", false},
                                       {"clamp-len", true},
                                       {"same-length", true},
                                       {"max-span", true},
                                       {"ramp", true},
                                       {"rate", true},
                                       {"n-buckets", true}};
  for (const char *flag : {"check-gradients", "grad-output", "fd-step",
                           "fd-entries", "seed", "rtol"})
    known[flag] = true;
  known["skip-kinks"] = false;
  Arguments args = parseArguments(argc, argv, known);
  if (args.has("help")) {
    std::cout << kUsage;
    return 0;
  }
  if (!args.positionals.empty())
    throw ReferenceError("unexpected argument '" + args.positionals[0] +
                         "' (inputs are given with --input=FILE)");
  if (int(args.has("model")) + int(args.has("op")) + int(args.has("graph")) !=
      1)
    throw ReferenceError("give exactly one of --model=NAME, --op=NAME or "
                         "--graph=SPEC.json");
  bool gradients = args.has("check-gradients") || args.has("grad-output");
  if (!gradients)
    for (const char *flag : {"fd-step", "fd-entries", "rtol", "skip-kinks"})
      if (args.has(flag))
        throw ReferenceError(std::string("--") + flag +
                             " applies to --check-gradients and "
                             "--grad-output only");
  // --seed: the entries a gradient check samples, or LSH's rotations.
  bool lsh = args.has("op") && (args.value("op") == "lsh_attention" ||
                                args.value("op") == "lsh_buckets");
  if (!gradients && !lsh && args.has("seed"))
    throw ReferenceError("--seed applies to --op=lsh_attention, "
                         "--check-gradients and --grad-output only");
  if (gradients && args.has("op"))
    throw ReferenceError("gradient checks take --graph or --model, not --op");
  if (args.has("output-dir") && !args.has("graph"))
    throw ReferenceError("--output-dir applies to --graph only");
  for (const char *flag : {"round-to-f32", "perturb-ulps"})
    if (args.has(flag) && !args.has("graph"))
      throw ReferenceError(std::string("--") + flag +
                           " applies to --graph only");
  if (args.has("op") && args.has("params"))
    throw ReferenceError("--params applies to --model only");
  std::vector<Tensor> inputs;
  for (const std::string &path : args.values("input"))
    inputs.push_back(readNpy(path));
  if (gradients)
    return runGradientMode(args, inputs);
  if (args.has("graph"))
    return runGraphMode(args, inputs);
  std::string output = args.value("output");

  Tensor result = args.has("model")
                      ? runModel(args.value("model"), args, inputs)
                      : runOp(args.value("op"), args, inputs);
  writeNpy(output, result, DType::F32);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  // A gradient check evaluates the model hundreds of times, each op making
  // tensors of megabytes: kept in the heap once freed, instead of mapped
  // and unmapped (and faulted in page by page) every time.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  try {
    return run(argc, argv);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "lcc-reference: error: %s\n", e.what());
    return 2;
  }
}
