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
//
// The output is always written as f32 .npy.
//
//===----------------------------------------------------------------------===//

#include "Graph.h"
#include "Json.h"
#include "Masks.h"
#include "Reference.h"
#include "TensorIO.h"
#include "ToolSupport.h"

#include <cstdio>
#include <iostream>
#include <set>

using namespace lcc::reference;

namespace {

const char *const kUsage = R"(usage:
  lcc-reference --model=transformer-tiny|reformer-tiny --params=W.safetensors
                --input=tokens.npy --output=OUT.npy
  lcc-reference --op=OP [flags] --input=A.npy [--input=B.npy ...]
                --output=OUT.npy
  lcc-reference --graph=SPEC.json [--params=W.safetensors]
                --input=A.npy ... --output-dir=DIR   (DIR/result<i>.npy)
                [--round-to-f32]  (every node's results rounded to f32, as
                compiled code stores them: a measure of conditioning)
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
  layer_norm             x gamma beta  [--epsilon=E]
  linear                 x weight [bias]
  feed_forward           x w1 b1 w2 b2  --activation=relu|gelu
  embedding              tokens table
  softmax_cross_entropy  logits labels
)";

/// The op flags each op accepts; any other op flag is an error, so a typo'd
/// harness cannot silently compute something else.
const std::map<std::string, std::set<std::string>> kOpFlags = {
    {"attention", {"causal", "shared-qk", "scale", "mask", "score"}},
    {"sparse_attention", {"causal", "scale", "pattern", "stride", "summary"}},
    {"layer_norm", {"epsilon"}},
    {"linear", {}},
    {"feed_forward", {"activation"}},
    {"embedding", {}},
    {"softmax_cross_entropy", {}},
};

const std::set<std::string> kAllOpFlags = {
    "causal",  "shared-qk", "scale",      "pattern", "stride",
    "summary", "epsilon",   "activation", "mask",    "score"};

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
  expectInputCount(op, in, 2, 2);
  return softmaxCrossEntropy(in[0], in[1]);
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
  std::vector<Tensor> results =
      runGraph(spec, inputs, weights, args.has("round-to-f32"));
  std::string directory = args.value("output-dir");
  for (size_t i = 0; i < results.size(); ++i)
    writeNpy(directory + "/result" + std::to_string(i) + ".npy", results[i],
             DType::F32);
  return 0;
}

int run(int argc, char **argv) {
  Arguments args = parseArguments(argc, argv,
                                  {{"help", false},
                                   {"graph", true},
                                   {"round-to-f32", false},
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
                                   {"epsilon", true}});
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
  if (args.has("output-dir") && !args.has("graph"))
    throw ReferenceError("--output-dir applies to --graph only");
  if (args.has("round-to-f32") && !args.has("graph"))
    throw ReferenceError("--round-to-f32 applies to --graph only");
  if (args.has("op") && args.has("params"))
    throw ReferenceError("--params applies to --model only");
  std::vector<Tensor> inputs;
  for (const std::string &path : args.values("input"))
    inputs.push_back(readNpy(path));
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
  try {
    return run(argc, argv);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "lcc-reference: error: %s\n", e.what());
    return 1;
  }
}
