//===- lcc-testdata.cpp - Reproducible random test inputs -----------------===//
//
//   lcc-testdata --output=F.npy --shape=1,8,1024,64 [--dtype=f32|i32|bf16|f16]
//       [--normal | --uniform=LO,HI | --clustered=K [--noise=S] [--radius=R]]
//       [--seed=N]
//   lcc-testdata --model-params=transformer-tiny|reformer-tiny
//       --output=W.safetensors [--seed=N]
//   lcc-testdata --pack=NAME=F.npy ... --output=W.safetensors
//
// Prints "seed: N" (a seed from the clock when --seed is absent) whenever it
// draws, so any failing case can be regenerated. The stream is Random.h's
// splitmix64; elements are drawn in row-major order.
//
//===----------------------------------------------------------------------===//

#include "Random.h"
#include "Reference.h"
#include "TensorIO.h"
#include "ToolSupport.h"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>

using namespace lcc::reference;

namespace {

const char *const kUsage = R"(usage:
  lcc-testdata --output=F.npy --shape=D0,D1,... [--dtype=f32|i32|bf16|f16] [--seed=N]
               [--normal | --uniform=LO,HI | --clustered=K [--noise=S]
               [--radius=R] | --fill=V] [--zero-rows=R,...]
  lcc-testdata --model-params=transformer-tiny|reformer-tiny
               --output=W.safetensors [--seed=N]
  lcc-testdata --pack=NAME=F.npy [--pack=...] --output=W.safetensors
               (.npy files as one .safetensors keyed by NAME: the parameters
               of an lcc-reference --graph, or the gradients for its
               --check-gradients; i32 files stay i32, others become f32;
               draws nothing and prints no seed)
  --dtype=bf16|f16 draws as f32 and rounds to nearest even; bf16 is saved as
  '<V2', as ml_dtypes saves its bfloat16 (np.load(f).view(ml_dtypes.bfloat16))
distributions:
  --normal          f32 N(0, 1) (the default for f32)
  --uniform=LO,HI   f32: reals in [LO, HI); i32: integers in [LO, HI)
                    (required for i32)
  --clustered=K     f32 [batch, heads, seq, head_dim]: per (batch, head), K
                    random unit directions; each token picks one uniformly and
                    is R * (direction + S * N(0, I) / sqrt(head_dim));
                    S (--noise) defaults to 0.1, R (--radius) to 1
  --fill=V          f32: every element V (0, nan, inf, -inf allowed): the
                    degenerate inputs of the hostile-input tests
  --zero-rows=R,... after drawing, rows R (of the second-last dimension,
                    e.g. tokens of [batch, heads, seq, head_dim]) are zero
  --like=F.npy --redraw-from=K
                    a copy of F whose rows K.. (of the second-last dimension)
                    are drawn anew from --seed: a sequence that differs from
                    F only after its first K tokens
model parameters (sorted by name, row-major; matrices [in, out]):
  weights N(0, 1/in); layer-norm gamma 1 + 0.1 N(0, 1); beta and biases
  0.1 N(0, 1); embeddings N(0, 1)
)";

Shape parseShape(const std::string &text) {
  Shape shape;
  for (const std::string &part : splitCommas(text)) {
    int64_t d = parseInt64(part, "--shape");
    if (d < 1)
      throw ReferenceError("--shape: dimensions must be >= 1, got " + part);
    shape.push_back(d);
  }
  return shape;
}

Tensor clustered(const Shape &shape, int64_t clusters, double noise,
                 double radius, SplitMix64 &rng) {
  if (shape.size() != 4)
    throw ReferenceError("--clustered needs a [batch, heads, seq, head_dim] "
                         "shape, got " +
                         shapeToString(shape));
  if (clusters < 1)
    throw ReferenceError("--clustered: K must be >= 1");
  int64_t batch = shape[0], heads = shape[1], seq = shape[2],
          headDim = shape[3];
  // Draw order, per (batch, head): K * head_dim normals for the directions;
  // then per token one uniform (its cluster) and head_dim normals (noise).
  Tensor t(shape);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h) {
      // K unit directions: normalised Gaussian vectors (uniform on the
      // sphere).
      std::vector<std::vector<double>> directions(clusters);
      for (auto &direction : directions) {
        double norm2 = 0;
        for (int64_t d = 0; d < headDim; ++d) {
          direction.push_back(rng.normal());
          norm2 += direction.back() * direction.back();
        }
        for (double &x : direction)
          x /= std::sqrt(norm2);
      }
      for (int64_t s = 0; s < seq; ++s) {
        const auto &direction = directions[rng.integer(0, clusters)];
        for (int64_t d = 0; d < headDim; ++d)
          t.at({b, h, s, d}) =
              radius * (direction[d] +
                        noise * rng.normal() / std::sqrt(double(headDim)));
      }
    }
  return t;
}

/// Random weights for a bundled model, scaled so activations stay O(1) and
/// attention is neither uniform nor one-hot.
Weights modelParams(const std::string &model, SplitMix64 &rng) {
  std::map<std::string, Shape> shapes;
  if (model == "transformer-tiny")
    shapes = transformerTinyParams(transformerTinyConfig());
  else if (model == "reformer-tiny")
    shapes = reformerTinyParams(reformerTinyConfig());
  else
    throw ReferenceError("unknown --model-params=" + model +
                         " (transformer-tiny or reformer-tiny)");
  Weights weights;
  for (const auto &[name, shape] : shapes) {
    const std::string suffix = ".gamma";
    bool isGamma =
        name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
    Tensor t(shape);
    bool isEmbedding = name.rfind("embed.", 0) == 0;
    for (double &x : t.data) {
      double n = rng.normal();
      if (isEmbedding)
        x = n;
      else if (shape.size() == 2)
        x = n / std::sqrt(double(shape[0]));
      else if (isGamma)
        x = 1.0 + 0.1 * n;
      else
        x = 0.1 * n;
    }
    weights[name] = t;
  }
  return weights;
}

/// Writes NAME=F.npy pairs as one .safetensors file.
void writePacked(const std::string &output,
                 const std::vector<std::string> &pairs) {
  Weights tensors;
  std::map<std::string, DType> dtypes;
  for (const std::string &pair : pairs) {
    size_t eq = pair.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == pair.size())
      throw ReferenceError("--pack needs NAME=FILE.npy, got '" + pair + "'");
    std::string name = pair.substr(0, eq);
    if (tensors.count(name))
      throw ReferenceError("--pack: '" + name + "' given more than once");
    DType dtype;
    tensors[name] = readNpy(pair.substr(eq + 1), &dtype);
    bool isInt = dtype == DType::I32 || dtype == DType::I64;
    dtypes[name] = isInt ? DType::I32 : DType::F32;
  }
  writeSafetensors(output, tensors, dtypes);
}

int run(int argc, char **argv) {
  Arguments args = parseArguments(argc, argv,
                                  {{"help", false},
                                   {"output", true},
                                   {"shape", true},
                                   {"dtype", true},
                                   {"normal", false},
                                   {"uniform", true},
                                   {"clustered", true},
                                   {"fill", true},
                                   {"zero-rows", true},
                                   {"like", true},
                                   {"redraw-from", true},
                                   {"noise", true},
                                   {"radius", true},
                                   {"seed", true},
                                   {"model-params", true},
                                   {"pack", true}});
  if (args.has("help")) {
    std::cout << kUsage;
    return 0;
  }
  if (!args.positionals.empty())
    throw ReferenceError("unexpected argument '" + args.positionals[0] + "'");
  std::string output = args.value("output");
  if (args.has("pack")) {
    if (args.flags.size() != 2)
      throw ReferenceError("--pack takes only --output");
    writePacked(output, args.values("pack"));
    return 0;
  }

  uint64_t seed;
  if (args.has("seed"))
    seed = parseUInt64(args.value("seed"), "--seed");
  else
    seed = static_cast<uint64_t>(
        std::chrono::system_clock::now().time_since_epoch().count());
  // Printed first, so even a failure below can be reproduced.
  std::cout << "seed: " << seed << std::endl;
  SplitMix64 rng(seed);

  if (args.has("model-params")) {
    for (const char *flag : {"shape", "dtype", "normal", "uniform", "clustered",
                             "fill", "zero-rows", "noise", "radius"})
      if (args.has(flag))
        throw ReferenceError(std::string("--") + flag +
                             " does not apply to --model-params");
    writeSafetensors(output, modelParams(args.value("model-params"), rng));
    return 0;
  }

  if (args.has("like") != args.has("redraw-from"))
    throw ReferenceError("--like and --redraw-from go together");
  if (args.has("like")) {
    for (const char *flag : {"shape", "dtype", "normal", "uniform", "clustered",
                             "fill", "zero-rows"})
      if (args.has(flag))
        throw ReferenceError(std::string("--") + flag +
                             " does not apply to --like");
    Tensor t = readNpy(args.value("like"));
    int64_t from = parseInt64(args.value("redraw-from"), "--redraw-from");
    if (t.rank() < 2 || from < 0 || from >= t.dim(-2))
      throw ReferenceError("--redraw-from=" + std::to_string(from) +
                           " is not a row of the --like tensor");
    int64_t rows = t.dim(-2), width = t.dim(-1);
    for (int64_t outer = 0; outer < t.size() / (rows * width); ++outer)
      for (int64_t r = from; r < rows; ++r)
        for (int64_t c = 0; c < width; ++c)
          t.data[(outer * rows + r) * width + c] = rng.normal();
    writeNpy(output, t, DType::F32);
    return 0;
  }
  Shape shape = parseShape(args.value("shape"));
  std::string dtypeName = args.has("dtype") ? args.value("dtype") : "f32";
  if (dtypeName != "f32" && dtypeName != "i32" && dtypeName != "bf16" &&
      dtypeName != "f16")
    throw ReferenceError("--dtype must be f32, i32, bf16 or f16, got '" +
                         dtypeName + "'");
  bool isInt = dtypeName == "i32";
  DType fileType = isInt                 ? DType::I32
                   : dtypeName == "bf16" ? DType::BF16
                   : dtypeName == "f16"  ? DType::F16
                                         : DType::F32;
  int distributions = args.has("normal") + args.has("uniform") +
                      args.has("clustered") + args.has("fill");
  if (distributions > 1)
    throw ReferenceError("give at most one of --normal, --uniform, "
                         "--clustered, --fill");
  if ((args.has("noise") || args.has("radius")) && !args.has("clustered"))
    throw ReferenceError("--noise and --radius apply to --clustered only");

  Tensor t(shape);
  if (args.has("fill")) {
    // Deliberately degenerate data (zeros, NaN, infinities) for the
    // hostile-input tests: no all-zeros check below.
    if (isInt)
      throw ReferenceError("--fill needs a float --dtype (f32, bf16 or f16)");
    double value = parseDouble(args.value("fill"), "--fill");
    for (double &x : t.data)
      x = value;
    writeNpy(output, t, fileType);
    return 0;
  }
  if (args.has("clustered")) {
    if (isInt)
      throw ReferenceError(
          "--clustered needs a float --dtype (f32, bf16 or f16)");
    double noise =
        args.has("noise") ? parseDouble(args.value("noise"), "--noise") : 0.1;
    double radius = args.has("radius")
                        ? parseDouble(args.value("radius"), "--radius")
                        : 1.0;
    t = clustered(shape, parseInt64(args.value("clustered"), "--clustered"),
                  noise, radius, rng);
  } else if (args.has("uniform")) {
    std::vector<std::string> bounds = splitCommas(args.value("uniform"));
    if (bounds.size() != 2)
      throw ReferenceError("--uniform needs LO,HI");
    if (isInt) {
      int64_t lo = parseInt64(bounds[0], "--uniform LO");
      int64_t hi = parseInt64(bounds[1], "--uniform HI");
      if (lo >= hi)
        throw ReferenceError("--uniform: need LO < HI");
      if (lo == 0 && hi == 1)
        throw ReferenceError("--uniform=0,1 for i32 gives only zeros");
      if (lo < INT32_MIN || hi - 1 > INT32_MAX)
        throw ReferenceError("--uniform: range does not fit in i32");
      for (double &x : t.data)
        x = static_cast<double>(rng.integer(lo, hi));
    } else {
      double lo = parseDouble(bounds[0], "--uniform LO");
      double hi = parseDouble(bounds[1], "--uniform HI");
      if (!(lo < hi))
        throw ReferenceError("--uniform: need LO < HI");
      for (double &x : t.data)
        x = rng.uniform(lo, hi);
    }
  } else {
    if (isInt)
      throw ReferenceError("--dtype=i32 needs --uniform=LO,HI (integers in "
                           "[LO, HI))");
    for (double &x : t.data)
      x = rng.normal();
  }

  if (args.has("zero-rows")) {
    if (shape.size() < 2)
      throw ReferenceError("--zero-rows needs a shape of rank >= 2");
    int64_t rows = shape[shape.size() - 2], width = shape.back();
    for (const std::string &text : splitCommas(args.value("zero-rows"))) {
      int64_t row = parseInt64(text, "--zero-rows");
      if (row < 0 || row >= rows)
        throw ReferenceError("--zero-rows: row " + text + " is outside [0, " +
                             std::to_string(rows) + ")");
      for (int64_t start = row * width; start < t.size(); start += rows * width)
        std::fill(t.data.begin() + start, t.data.begin() + start + width, 0.0);
    }
  }

  // Zeros would hide a kernel that never writes its output.
  bool anyNonZero = false;
  for (double x : t.data)
    anyNonZero = anyNonZero || static_cast<float>(x) != 0.0f;
  if (!anyNonZero)
    throw ReferenceError("seed " + std::to_string(seed) +
                         " gave all zeros; use another --seed or range");

  writeNpy(output, t, fileType);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "lcc-testdata: error: %s\n", e.what());
    return 1;
  }
}
