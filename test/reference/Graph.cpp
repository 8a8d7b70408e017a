//===- Graph.cpp - The reference run of a model described as a graph ------===//

#include "Graph.h"
#include "Masks.h"

#include "Json.h"
#include "Random.h"

#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>

namespace lcc::reference {
namespace {

using Environment = std::map<std::string, Tensor>;

const JsonValue &member(const JsonValue &object, const std::string &key,
                        const std::string &what) {
  const JsonValue *value = object.find(key);
  if (!value)
    throw ReferenceError(what + ": missing \"" + key + "\"");
  return *value;
}

std::vector<std::string> names(const JsonValue &list, const std::string &what) {
  if (list.kind != JsonValue::Kind::Array)
    throw ReferenceError(what + ": expected an array of names");
  std::vector<std::string> out;
  for (const JsonValue &name : list.elements) {
    if (name.kind != JsonValue::Kind::String)
      throw ReferenceError(what + ": expected an array of names");
    out.push_back(name.text);
  }
  return out;
}

double number(const JsonValue &value, const std::string &what) {
  if (value.kind != JsonValue::Kind::Number)
    throw ReferenceError(what + ": expected a number");
  return std::strtod(value.text.c_str(), nullptr);
}

/// The attributes and arguments of one node, with the checks every op does.
class Node {
public:
  Node(const JsonValue &json, const std::string &what)
      : json(json), what(what) {}

  const std::string &name() const { return what; }
  bool flag(const std::string &key) const {
    const JsonValue *value = json.find(key);
    if (!value)
      return false;
    if (value->kind != JsonValue::Kind::Bool)
      throw ReferenceError(what + ": \"" + key + "\" must be true or false");
    return value->boolean;
  }
  std::optional<double> optionalNumber(const std::string &key) const {
    const JsonValue *value = json.find(key);
    if (!value)
      return std::nullopt;
    return number(*value, what + " \"" + key + "\"");
  }
  double requiredNumber(const std::string &key) const {
    return number(member(json, key, what), what + " \"" + key + "\"");
  }
  int64_t integer(const std::string &key) const {
    double value = requiredNumber(key);
    if (value != std::floor(value))
      throw ReferenceError(what + ": \"" + key + "\" must be an integer");
    return int64_t(value);
  }
  bool has(const std::string &key) const { return json.find(key); }
  std::string text(const std::string &key) const {
    const JsonValue &value = member(json, key, what);
    if (value.kind != JsonValue::Kind::String)
      throw ReferenceError(what + ": \"" + key + "\" must be a string");
    return value.text;
  }
  const JsonValue &region(size_t index) const {
    const JsonValue &regions = member(json, "regions", what);
    if (regions.kind != JsonValue::Kind::Array ||
        regions.elements.size() <= index)
      throw ReferenceError(what + ": expected region " +
                           std::to_string(index));
    return regions.elements[index];
  }

  const JsonValue &json;
  std::string what;
};

class Interpreter {
public:
  Interpreter(const Weights &weights, F32Storage storage,
              FrozenValues *frozen)
      : weights(weights), storage(storage), frozen(frozen) {}

  /// Runs `nodes` in `env` and returns the values named by `results`.
  std::vector<Tensor> runBlock(const JsonValue &block, Environment env,
                               const std::vector<Tensor> &args,
                               const std::string &what) {
    std::vector<std::string> argNames =
        names(member(block, "args", what), what + " args");
    if (argNames.size() != args.size())
      throw ReferenceError(what + ": takes " +
                           std::to_string(argNames.size()) +
                           " arguments, got " + std::to_string(args.size()));
    for (size_t i = 0; i < args.size(); ++i)
      env[argNames[i]] = args[i];
    runNodes(member(block, "nodes", what), env, what);
    std::vector<Tensor> results;
    for (const std::string &name :
         names(member(block, "yield", what), what + " yield"))
      results.push_back(lookup(env, name, what));
    return results;
  }

  void runNodes(const JsonValue &nodes, Environment &env,
                const std::string &what) {
    if (nodes.kind != JsonValue::Kind::Array)
      throw ReferenceError(what + ": \"nodes\" must be an array");
    for (size_t i = 0; i < nodes.elements.size(); ++i) {
      const JsonValue &json = nodes.elements[i];
      Node node(json, what + " node " + std::to_string(i) + " (" +
                          (json.find("op") ? json.find("op")->text : "?") +
                          ")");
      std::vector<Tensor> args;
      for (const std::string &name :
           names(member(json, "args", node.name()), node.name() + " args"))
        args.push_back(lookup(env, name, node.name()));
      std::vector<Tensor> results = runOp(node, args, env);
      std::vector<std::string> resultNames =
          names(member(json, "results", node.name()), node.name() + " results");
      if (resultNames.size() != results.size())
        throw ReferenceError(node.name() + ": has " +
                             std::to_string(results.size()) +
                             " results, the graph names " +
                             std::to_string(resultNames.size()));
      bool stop = json.find("op") && json.find("op")->text == "stop_gradient";
      for (size_t r = 0; r < results.size(); ++r) {
        store(results[r]);
        if (stop && frozen) {
          // The value at the first evaluation, a constant after it.
          auto [it, first] = frozen->emplace(resultNames[r], results[r]);
          results[r] = it->second;
        }
        env[resultNames[r]] = results[r];
      }
    }
  }

private:
  Tensor lookup(const Environment &env, const std::string &name,
                const std::string &what) const {
    auto it = env.find(name);
    if (it != env.end())
      return it->second;
    auto weight = weights.find(name);
    if (weight != weights.end())
      return weight->second;
    throw ReferenceError(what + ": no value or parameter named '" + name +
                         "'");
  }

  static void expectArgs(const Node &node, const std::vector<Tensor> &args,
                         size_t low, size_t high) {
    if (args.size() < low || args.size() > high)
      throw ReferenceError(node.name() + ": takes " + std::to_string(low) +
                           (high != low ? " to " + std::to_string(high) : "") +
                           " arguments, got " + std::to_string(args.size()));
  }

  static Tensor elementwise(const Node &node, const std::vector<Tensor> &args,
                            const std::function<double(double, double)> &f) {
    expectArgs(node, args, 2, 2);
    expectShape(args[1], args[0].shape, node.name() + ": second operand");
    Tensor out(args[0].shape);
    for (int64_t i = 0; i < out.size(); ++i)
      out.data[i] = f(args[0].data[i], args[1].data[i]);
    return out;
  }

  /// `x` repeated over new leading dimensions up to `shape`.
  static Tensor broadcast(const Node &node, const Tensor &x) {
    std::vector<int64_t> shape;
    for (const JsonValue &dim : member(node.json, "shape", node.name()).elements)
      shape.push_back(int64_t(number(dim, node.name() + " shape")));
    if (shape.size() < x.shape.size() ||
        !std::equal(x.shape.begin(), x.shape.end(),
                    shape.end() - x.shape.size()))
      throw ReferenceError(node.name() + ": cannot broadcast " +
                           shapeToString(x.shape) + " to " +
                           shapeToString(shape));
    Tensor out(shape);
    for (int64_t i = 0; i < out.size(); ++i)
      out.data[i] = x.data[i % x.size()];
    return out;
  }

  /// The same elements in row-major order, in the node's "shape".
  static Tensor reshape(const Node &node, const Tensor &x) {
    Shape shape;
    for (const JsonValue &dim : member(node.json, "shape", node.name()).elements)
      shape.push_back(int64_t(number(dim, node.name() + " shape")));
    int64_t elements = 1;
    for (int64_t dim : shape)
      elements = dim < 0 || elements > x.size() ? -1 : elements * dim;
    if (elements != x.size())
      throw ReferenceError(node.name() + ": cannot reshape " +
                           shapeToString(x.shape) + " to " +
                           shapeToString(shape));
    Tensor out(shape);
    out.data = x.data;
    return out;
  }

  /// Dimension d of the result is dimension permutation[d] of `x`.
  /// x[offsets[0] : offsets[0] + sizes[0], ...] (unit strides).
  static Tensor slice(const Node &node, const Tensor &x) {
    auto list = [&](const std::string &key) {
      std::vector<int64_t> values;
      for (const JsonValue &v : member(node.json, key, node.name()).elements)
        values.push_back(int64_t(number(v, node.name() + " " + key)));
      return values;
    };
    std::vector<int64_t> offsets = list("offsets"), sizes = list("sizes");
    size_t rank = x.shape.size();
    bool valid = offsets.size() == rank && sizes.size() == rank;
    for (size_t d = 0; valid && d < rank; ++d)
      valid = offsets[d] >= 0 && sizes[d] >= 0 &&
              offsets[d] + sizes[d] <= x.shape[d];
    if (!valid)
      throw ReferenceError(node.name() +
                           ": \"offsets\" and \"sizes\" must lie within " +
                           shapeToString(x.shape));
    Tensor out(Shape(sizes.begin(), sizes.end()));
    std::vector<int64_t> index(rank, 0);
    for (int64_t i = 0; i < out.size(); ++i) {
      std::vector<int64_t> from(rank);
      for (size_t d = 0; d < rank; ++d)
        from[d] = offsets[d] + index[d];
      out.data[i] = x.at(from);
      for (size_t d = rank; d-- > 0;) {
        if (++index[d] < sizes[d])
          break;
        index[d] = 0;
      }
    }
    return out;
  }

  static Tensor transpose(const Node &node, const Tensor &x) {
    std::vector<int64_t> permutation;
    for (const JsonValue &dim :
         member(node.json, "permutation", node.name()).elements)
      permutation.push_back(int64_t(number(dim, node.name() + " permutation")));
    size_t rank = x.shape.size();
    std::vector<bool> seen(rank, false);
    bool valid = permutation.size() == rank;
    for (size_t d = 0; valid && d < rank; ++d) {
      int64_t p = permutation[d];
      valid = p >= 0 && p < int64_t(rank) && !seen[p];
      if (valid)
        seen[p] = true;
    }
    if (!valid)
      throw ReferenceError(node.name() +
                           ": \"permutation\" must order the dimensions of " +
                           shapeToString(x.shape));
    Shape shape(rank);
    for (size_t d = 0; d < rank; ++d)
      shape[d] = x.shape[permutation[d]];
    Tensor out(shape);
    std::vector<int64_t> strides(rank, 1);
    for (size_t d = rank; d-- > 1;)
      strides[d - 1] = strides[d] * x.shape[d];
    std::vector<int64_t> index(rank, 0);
    for (int64_t i = 0; i < out.size(); ++i) {
      int64_t from = 0;
      for (size_t d = 0; d < rank; ++d)
        from += index[d] * strides[permutation[d]];
      out.data[i] = x.data[from];
      for (size_t d = rank; d-- > 0;) {
        if (++index[d] < shape[d])
          break;
        index[d] = 0;
      }
    }
    return out;
  }

  static Tensor concat(const Node &node, const std::vector<Tensor> &args) {
    if (args.empty())
      throw ReferenceError(node.name() + ": needs operands");
    int64_t dim = node.integer("dim");
    Shape shape = args[0].shape;
    if (dim < 0 || dim >= int64_t(shape.size()))
      throw ReferenceError(node.name() + ": dim out of range");
    shape[dim] = 0;
    for (const Tensor &a : args)
      shape[dim] += a.shape[dim];
    Tensor out(shape);
    // Rows of the dimensions before `dim` are interleaved slabs.
    int64_t outer = 1;
    for (int64_t d = 0; d < dim; ++d)
      outer *= shape[d];
    int64_t at = 0;
    for (int64_t o = 0; o < outer; ++o)
      for (const Tensor &a : args) {
        int64_t slab = a.size() / outer;
        for (int64_t i = 0; i < slab; ++i)
          out.data[at++] = a.data[o * slab + i];
      }
    return out;
  }

  std::vector<Tensor> runOp(const Node &node, const std::vector<Tensor> &args,
                            const Environment &env) {
    std::string op = node.text("op");
    if (op == "layer_norm") {
      expectArgs(node, args, 3, 3);
      return {layerNorm(args[0], args[1], args[2],
                        node.optionalNumber("epsilon")
                            .value_or(kDefaultLayerNormEpsilon))};
    }
    if (op == "linear") {
      expectArgs(node, args, 2, 3);
      return {linear(args[0], args[1], args.size() == 3 ? &args[2] : nullptr)};
    }
    if (op == "feed_forward") {
      expectArgs(node, args, 5, 5);
      std::string activation = node.text("activation");
      if (activation != "relu" && activation != "gelu")
        throw ReferenceError(node.name() + ": unknown activation '" +
                             activation + "'");
      return {feedForward(args[0], args[1], args[2], args[3], args[4],
                          activation == "gelu" ? Activation::Gelu
                                               : Activation::Relu)};
    }
    if (op == "sinusoidal_encoding") {
      expectArgs(node, args, 0, 0);
      const JsonValue &shape = member(node.json, "shape", node.name());
      if (shape.elements.size() != 2)
        throw ReferenceError(node.name() + ": \"shape\" must be [positions, "
                                           "dim]");
      return {sinusoidalEncoding(
          int64_t(number(shape.elements[0], node.name() + " shape")),
          int64_t(number(shape.elements[1], node.name() + " shape")))};
    }
    if (op == "embedding") {
      expectArgs(node, args, 2, 2);
      return {embedding(args[0], args[1])};
    }
    if (op == "softmax_cross_entropy") {
      expectArgs(node, args, 2, 3);
      return {softmaxCrossEntropy(args[0], args[1],
                                  args.size() == 3 ? &args[2] : nullptr)};
    }
    if (op == "attention") {
      expectArgs(node, args, 3, 3);
      if (node.has("mask") || node.has("score"))
        return {modifiedAttention(
            args[0], args[1], args[2], node.flag("causal"),
            node.optionalNumber("scale"),
            node.has("mask") ? namedMask(node.text("mask")) : PositionMask(),
            node.has("score") ? namedScore(node.text("score"), args[0].dim(1))
                              : ScoreModifier(),
            node.flag("shared_qk"))};
      return {attention(args[0], args[1], args[2], node.flag("causal"),
                        node.optionalNumber("scale"), node.flag("shared_qk"))};
    }
    if (op == "sparse_attention") {
      expectArgs(node, args, 3, 3);
      std::string pattern = node.text("pattern");
      if (pattern != "fixed" && pattern != "strided")
        throw ReferenceError(node.name() + ": unknown pattern '" + pattern +
                             "'");
      bool fixed = pattern == "fixed";
      return {sparseAttention(
          args[0], args[1], args[2],
          fixed ? SparsePattern::Fixed : SparsePattern::Strided,
          node.integer("stride"), fixed ? node.integer("summary") : 0,
          node.flag("causal"), node.optionalNumber("scale"))};
    }
    if (op == "relative_attention") {
      expectArgs(node, args, 6, 6);
      RelativeAttentionOptions options;
      options.scale = node.optionalNumber("scale");
      if (node.has("clamp_len"))
        options.clampLen = node.integer("clamp_len");
      if (node.has("same_length"))
        options.sameLength = node.integer("same_length");
      return {relativeAttention(args[0], args[1], args[2], args[3], args[4],
                                args[5], options)};
    }
    if (op == "compress") {
      expectArgs(node, args, 3, 3);
      return {compress(args[0], args[1], args[2], node.integer("rate"))};
    }
    if (op == "stop_gradient") {
      expectArgs(node, args, 1, 1);
      return {args[0]};
    }
    if (op == "adaptive_span_attention") {
      expectArgs(node, args, 4, 4);
      AdaptiveSpanOptions options;
      options.maxSpan = node.integer("max_span");
      if (node.has("ramp"))
        options.ramp = node.integer("ramp");
      options.causal = node.flag("causal");
      options.scale = node.optionalNumber("scale");
      return {adaptiveSpanAttention(args[0], args[1], args[2], args[3],
                                    options)};
    }
    if (op == "lsh_attention") {
      expectArgs(node, args, 2, 2);
      LSHAttentionOptions options;
      options.nHashes = node.integer("n_hashes");
      options.bucketSize = node.integer("bucket_size");
      if (node.has("n_buckets"))
        options.nBuckets = node.integer("n_buckets");
      options.causal = node.flag("causal");
      // The seed's exact digits: a double holds only 53 bits.
      options.seed = member(node.json, "seed", node.name())
                         .asUInt64(node.name() + " \"seed\"");
      options.scale = node.optionalNumber("scale");
      options.factorized = node.flag("factorized_hash");
      return {lshAttention(args[0], args[1], options)};
    }
    if (op == "routed_attention") {
      expectArgs(node, args, 4, 4);
      return {routedAttention(args[0], args[1], args[2], args[3],
                              node.integer("window"), node.flag("causal"),
                              node.optionalNumber("scale"))};
    }
    if (op == "multi_head_attention") {
      expectArgs(node, args, 4, 5);
      bool sharedQK = args.size() == 4;
      const JsonValue &body = node.region(0);
      AttentionBody run = [&](const std::vector<Tensor> &heads) {
        return runBlock(body, env, heads, node.name() + " body").at(0);
      };
      return {multiHeadAttention(args[0], args[1],
                                 sharedQK ? nullptr : &args[2], args.end()[-2],
                                 args.back(), node.integer("heads"), run)};
    }
    if (op == "residual") {
      expectArgs(node, args, 1, 1);
      const JsonValue &body = node.region(0);
      return {residual(args[0], [&](const Tensor &x) {
        return runBlock(body, env, {x}, node.name() + " body").at(0);
      })};
    }
    if (op == "reversible") {
      expectArgs(node, args, 2, 2);
      const JsonValue &f = node.region(0), &g = node.region(1);
      auto [y1, y2] = reversible(
          args[0], args[1],
          [&](const Tensor &x) {
            return runBlock(f, env, {x}, node.name() + " f").at(0);
          },
          [&](const Tensor &x) {
            return runBlock(g, env, {x}, node.name() + " g").at(0);
          });
      return {y1, y2};
    }
    if (op == "add")
      return {elementwise(node, args, [](double a, double b) { return a + b; })};
    if (op == "sub")
      return {elementwise(node, args, [](double a, double b) { return a - b; })};
    if (op == "mul")
      return {elementwise(node, args, [](double a, double b) { return a * b; })};
    if (op == "maximum")
      return {elementwise(node, args,
                          [](double a, double b) { return std::max(a, b); })};
    if (op == "tanh") {
      expectArgs(node, args, 1, 1);
      Tensor out = args[0];
      for (double &x : out.data)
        x = std::tanh(x);
      return {out};
    }
    if (op == "broadcast") {
      expectArgs(node, args, 1, 1);
      return {broadcast(node, args[0])};
    }
    if (op == "concat")
      return {concat(node, args)};
    if (op == "transpose") {
      expectArgs(node, args, 1, 1);
      return {transpose(node, args[0])};
    }
    if (op == "reshape") {
      expectArgs(node, args, 1, 1);
      return {reshape(node, args[0])};
    }
    if (op == "slice") {
      expectArgs(node, args, 1, 1);
      return {slice(node, args[0])};
    }
    throw ReferenceError(node.name() + ": unknown op '" + op + "'");
  }

  /// A node's result as a conditioning run keeps it (see F32Storage).
  void store(Tensor &result) {
    if (!storage.roundToF32)
      return;
    int64_t spread = storage.perturbUlps;
    for (double &x : result.data) {
      float f = static_cast<float>(x);
      int64_t ulps = spread ? perturbation.integer(-spread, spread + 1) : 0;
      float toward = ulps < 0 ? -INFINITY : INFINITY;
      for (int64_t k = 0; k < std::abs(ulps) && std::isfinite(f); ++k)
        f = std::nextafter(f, toward);
      x = f;
    }
  }

  const Weights &weights;
  F32Storage storage;
  FrozenValues *frozen;
  SplitMix64 perturbation{0x5eedf32};
};

} // namespace

std::vector<Tensor> runGraph(const JsonValue &spec,
                             const std::vector<Tensor> &inputs,
                             const Weights &weights, F32Storage storage,
                             FrozenValues *frozen) {
  const JsonValue &declared = member(spec, "inputs", "graph");
  if (declared.elements.size() != inputs.size())
    throw ReferenceError("graph: takes " +
                         std::to_string(declared.elements.size()) +
                         " inputs, got " + std::to_string(inputs.size()));
  Environment env;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const JsonValue &input = declared.elements[i];
    std::string name = member(input, "name", "graph input").text;
    Shape shape;
    for (const JsonValue &dim : member(input, "shape", "graph input").elements)
      shape.push_back(int64_t(number(dim, "graph input shape")));
    expectShape(inputs[i], shape, "graph input '" + name + "'");
    env[name] = inputs[i];
  }
  Interpreter interpreter(weights, storage, frozen);
  interpreter.runNodes(member(spec, "nodes", "graph"), env, "graph");
  std::vector<Tensor> outputs;
  for (const std::string &name :
       names(member(spec, "outputs", "graph"), "graph outputs")) {
    auto it = env.find(name);
    if (it == env.end())
      throw ReferenceError("graph: output '" + name + "' is never defined");
    outputs.push_back(it->second);
  }
  return outputs;
}

} // namespace lcc::reference
