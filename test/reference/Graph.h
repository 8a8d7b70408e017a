//===- Graph.h - The reference run of a model described as a graph --------===//
//
// The differential model fuzzer (test/fuzz/model-fuzz.py) writes each random
// model twice: as attn IR for lcc, and as a JSON graph of the math it
// means, which this interpreter evaluates with the reference ops. The graph
// states the math, not the implementation: an LSH or routed op that the
// generator made exact appears here as the dense attention it equals (a
// general LSH op can be stated as lsh_attention, hashes and all).
//
//   {"inputs":  [{"name": "x", "shape": [2, 10, 16]},
//                {"name": "tokens", "shape": [2, 10], "dtype": "i32"}],
//    "nodes":   [{"op": "layer_norm", "args": ["x", "ln.g", "ln.b"],
//                 "results": ["n"], "epsilon": 1e-5},
//                {"op": "residual", "args": ["n"], "results": ["r"],
//                 "regions": [{"args": ["a"], "nodes": [...],
//                              "yield": ["y"]}]}],
//    "outputs": ["r"]}
//
// A name that no input or node defines is a parameter, read from the
// weights file. Ops, their args (in order) and attributes:
//   layer_norm x gamma beta {epsilon}     linear x weight [bias]
//   feed_forward x w1 b1 w2 b2 {activation: relu|gelu}
//   embedding tokens table
//   softmax_cross_entropy logits labels [weights]   (a 0-d loss)
//   attention q k v {causal, shared_qk, scale, mask?, score?}
//     (mask and score name the examples' masks and scores, Masks.h)
//   sparse_attention q k v {pattern: fixed|strided, stride, summary, causal,
//                           scale}
//   lsh_attention qk v {n_hashes, bucket_size, n_buckets?, causal, seed,
//                       scale?, factorized_hash?}
//     (Reformer LSH exactly as lcc compiles it, rotations drawn from seed)
//   relative_attention q k v pos u w {clamp_len?, same_length?, scale?}
//   adaptive_span_attention q k v z {max_span, ramp?, causal, scale?}
//   multi_head_attention x wq [wk] wv wo {heads} region(q, k, v | qk, v)
//   residual x region(x)                  reversible x1 x2 regions f, g
//   add, sub, mul, maximum a b; tanh a    broadcast x {shape} (leading dims)
//   concat a b ... {dim}                   reshape x {shape} (same row-major
//   data) transpose x {permutation} (result dim d is x's dim permutation[d])
//   compress x weight bias {rate}         stop_gradient x (see runGraph)
//   slice x {offsets, sizes} (unit strides)
//
//===----------------------------------------------------------------------===//

#ifndef LCC_TEST_REFERENCE_GRAPH_H
#define LCC_TEST_REFERENCE_GRAPH_H

#include "Reference.h"

#include <map>
#include <string>
#include <vector>

namespace lcc::reference {

struct JsonValue;

/// How a conditioning run stores each node's results. With `roundToF32`
/// they are rounded to f32, as compiled code stores them; `perturbUlps` > 0
/// then moves each element by a pseudo-random whole number of f32 ulps in
/// [-perturbUlps, perturbUlps], the error a compiled tanh, exp or
/// reduction may have. The difference from the exact run is how much f32
/// alone moves the outputs (the differential fuzzer's measure of a model's
/// conditioning), never the reference's answer.
struct F32Storage {
  bool roundToF32 = false;
  unsigned perturbUlps = 0;
};

/// The results of a graph's stop_gradient nodes, by result name.
using FrozenValues = std::map<std::string, Tensor>;

/// Evaluates the graph `spec` (the whole JSON document) on `inputs`, given in
/// the order of its "inputs", with parameters from `weights`. Returns its
/// outputs in order. Throws ReferenceError naming the node on any problem.
/// With `frozen`, a stop_gradient node's result is the one stored there
/// under its name, stored by the first evaluation that computes it: a
/// finite difference then sees the constant that attn.stop_gradient makes
/// of it.
std::vector<Tensor> runGraph(const JsonValue &spec,
                             const std::vector<Tensor> &inputs,
                             const Weights &weights, F32Storage storage = {},
                             FrozenValues *frozen = nullptr);

} // namespace lcc::reference

#endif // LCC_TEST_REFERENCE_GRAPH_H
