// RUN: lcc-opt %s --split-input-file --attn-context-parallel=ranks=2 | FileCheck %s

// Each rank takes its share of the positions of the tokens and labels:
// rank r chunks r and 3 - r of 4 (zigzag), also of the learned positions,
// laid out in share order (chunks 0, 3, 1, 2) and cut. Dense attention
// runs as ring attention (expand-ring-attention.mlir has its steps). The
// loss over a share is averaged over the ranks.
// CHECK-LABEL: func.func @loss(
// CHECK-SAME: %{{.+}}: tensor<1x4xi32> {attn.split_dim = 1 : i64}, %{{.+}}: tensor<1x4xi32> {attn.split_dim = 1 : i64}) -> tensor<f32>
// CHECK: %[[POS:.+]] = attn.param "pos" : tensor<1x8x4xf32>
// CHECK: %[[C0:.+]] = tensor.extract_slice %[[POS]][0, 0, 0] [1, 2, 4]
// CHECK: %[[C3:.+]] = tensor.extract_slice %[[POS]][0, 6, 0] [1, 2, 4]
// CHECK: %[[C1:.+]] = tensor.extract_slice %[[POS]][0, 2, 0] [1, 2, 4]
// CHECK: %[[C2:.+]] = tensor.extract_slice %[[POS]][0, 4, 0] [1, 2, 4]
// CHECK: %[[ZIGZAG:.+]] = tensor.concat dim(1) %[[C0]], %[[C3]], %[[C1]], %[[C2]]
// CHECK: %[[BLOCKS:.+]] = tensor.expand_shape %[[ZIGZAG]] {{\[\[}}0], [1, 2], [3]] output_shape [1, 2, 4, 4]
// CHECK: %[[BYRANK:.+]] = linalg.transpose ins(%[[BLOCKS]] : tensor<1x2x4x4xf32>) {{.+}} permutation = [1, 0, 2, 3]
// CHECK: %[[MINE:.+]] = attn.rank_slice %[[BYRANK]] : tensor<2x1x4x4xf32> -> tensor<1x1x4x4xf32>
// CHECK: tensor.collapse_shape %[[MINE]] {{\[\[}}0, 1], [2], [3]] : tensor<1x1x4x4xf32> into tensor<1x4x4xf32>
// CHECK: %[[Q:.+]] = attn.split_heads {{.+}} -> tensor<1x2x4x2xf32>
// CHECK: %[[K:.+]] = attn.split_heads {{.+}} -> tensor<1x2x4x2xf32>
// CHECK: %[[V:.+]] = attn.split_heads {{.+}} -> tensor<1x2x4x2xf32>
// CHECK: %[[O:.+]] = attn.ring_attention %[[Q]], %[[K]], %[[V]] {causal = true, ranks = 2 : i64} : (tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>) -> tensor<1x2x4x2xf32>
// CHECK: attn.merge_heads %[[O]] {{.+}} -> tensor<1x4x4xf32>
// CHECK: %[[L:.+]] = attn.softmax_cross_entropy {{.+}} : (tensor<1x4x6xf32>, tensor<1x4xi32>) -> tensor<f32>
// CHECK: %[[MEAN:.+]] = attn.all_reduce mean %[[L]] : tensor<f32>
// CHECK: return %[[MEAN]]
func.func @loss(%tokens: tensor<1x8xi32>, %labels: tensor<1x8xi32>) -> tensor<f32> {
  %table = attn.param "embed" : tensor<6x4xf32>
  %x = attn.embedding %tokens, %table : (tensor<1x8xi32>, tensor<6x4xf32>) -> tensor<1x8x4xf32>
  %pos = attn.param "pos" : tensor<1x8x4xf32>
  %x0 = arith.addf %x, %pos : tensor<1x8x4xf32>
  %wq = attn.param "wq" : tensor<4x4xf32>
  %wk = attn.param "wk" : tensor<4x4xf32>
  %wv = attn.param "wv" : tensor<4x4xf32>
  %wo = attn.param "wo" : tensor<4x4xf32>
  %h = attn.multi_head_attention %x0, query %wq, key %wk, value %wv, output %wo {heads = 2 : i64}
      : (tensor<1x8x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<1x8x4xf32> {
  ^bb0(%q: tensor<1x2x8x2xf32>, %k: tensor<1x2x8x2xf32>, %v: tensor<1x2x8x2xf32>):
    %o = attn.attention %q, %k, %v {causal = true}
        : (tensor<1x2x8x2xf32>, tensor<1x2x8x2xf32>, tensor<1x2x8x2xf32>) -> tensor<1x2x8x2xf32>
    attn.yield %o : tensor<1x2x8x2xf32>
  }
  %head = attn.param "head" : tensor<4x6xf32>
  %logits = attn.linear %h, %head : (tensor<1x8x4xf32>, tensor<4x6xf32>) -> tensor<1x8x6xf32>
  %l = attn.softmax_cross_entropy %logits, %labels : (tensor<1x8x6xf32>, tensor<1x8xi32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Shared-QK attention (its keys the normalised queries) runs on the whole
// sequence of half of the heads: all-to-all there and back (Ulysses), the
// ranks' shares put back in position order (chunks 0, 2, 3, 1 of the
// received 0, 3, 1, 2) before it and in share order after.
// CHECK-LABEL: func.func @shared_qk(
// CHECK: attn.all_to_all %{{.+}} : tensor<2x1x2x4x2xf32>
// CHECK: %[[R:.+]] = tensor.collapse_shape {{.+}} into tensor<1x2x8x2xf32>
// CHECK: %[[P0:.+]] = tensor.extract_slice %[[R]][0, 0, 0, 0] [1, 2, 2, 2]
// CHECK: %[[P1:.+]] = tensor.extract_slice %[[R]][0, 0, 4, 0] [1, 2, 2, 2]
// CHECK: %[[P2:.+]] = tensor.extract_slice %[[R]][0, 0, 6, 0] [1, 2, 2, 2]
// CHECK: %[[P3:.+]] = tensor.extract_slice %[[R]][0, 0, 2, 0] [1, 2, 2, 2]
// CHECK: %[[NATURAL:.+]] = tensor.concat dim(2) %[[P0]], %[[P1]], %[[P2]], %[[P3]]
// CHECK: %[[O:.+]] = attn.attention %[[NATURAL]], %[[NATURAL]], %{{.+}} {causal = true, shared_qk} : (tensor<1x2x8x2xf32>, tensor<1x2x8x2xf32>, tensor<1x2x8x2xf32>) -> tensor<1x2x8x2xf32>
// CHECK: tensor.concat dim(2)
// CHECK: attn.all_to_all %{{.+}} : tensor<2x1x2x4x2xf32>
// CHECK: return %{{.+}} : tensor<1x4x8xf32>
func.func @shared_qk(%x: tensor<1x8x8xf32>) -> tensor<1x8x8xf32> {
  %q = attn.split_heads %x {heads = 4 : i64} : (tensor<1x8x8xf32>) -> tensor<1x4x8x2xf32>
  %o = attn.attention %q, %q, %q {causal = true, shared_qk}
      : (tensor<1x4x8x2xf32>, tensor<1x4x8x2xf32>, tensor<1x4x8x2xf32>) -> tensor<1x4x8x2xf32>
  %y = attn.merge_heads %o : (tensor<1x4x8x2xf32>) -> tensor<1x8x8xf32>
  return %y : tensor<1x8x8xf32>
}

// -----

// Ring attention needs no head count that the ranks divide.
// CHECK-LABEL: func.func @odd_heads(
// CHECK: attn.ring_attention %{{.+}}, %{{.+}}, %{{.+}} {ranks = 2 : i64} : {{.+}} -> tensor<1x3x4x2xf32>
func.func @odd_heads(%x: tensor<1x8x6xf32>) -> tensor<1x8x6xf32> {
  %q = attn.split_heads %x {heads = 3 : i64} : (tensor<1x8x6xf32>) -> tensor<1x3x8x2xf32>
  %o = attn.attention %q, %q, %q : (tensor<1x3x8x2xf32>, tensor<1x3x8x2xf32>, tensor<1x3x8x2xf32>) -> tensor<1x3x8x2xf32>
  %y = attn.merge_heads %o : (tensor<1x3x8x2xf32>) -> tensor<1x8x6xf32>
  return %y : tensor<1x8x6xf32>
}

// -----

// Adaptive span and Transformer-XL's attention (over the segment alone)
// run around the ring: each keeps its per-head operands whole (every rank
// holds every head), the form and its attributes recorded for the steps
// (context-parallel-over-heads.mlir: the same over the heads).
// CHECK-LABEL: func.func @per_head(
// CHECK: %[[Z:.+]] = attn.param "z" : tensor<4xf32>
// CHECK: attn.ring_attention %{{.+}}, %{{.+}}, %{{.+}} form_operands(%[[Z]]) {causal = true, form = "attn.adaptive_span_attention", form_attributes = {causal = true, max_span = 8 : i64, ramp = 2 : i64}, ranks = 2 : i64} : {{.+}} -> tensor<1x4x4x3xf32>
func.func @per_head(%x: tensor<1x8x12xf32>) -> tensor<1x8x12xf32> {
  %q = attn.split_heads %x {heads = 4 : i64} : (tensor<1x8x12xf32>) -> tensor<1x4x8x3xf32>
  %z = attn.param "z" : tensor<4xf32>
  %o = attn.adaptive_span_attention %q, %q, %q, %z {max_span = 8 : i64, ramp = 2 : i64, causal = true}
      : (tensor<1x4x8x3xf32>, tensor<1x4x8x3xf32>, tensor<1x4x8x3xf32>, tensor<4xf32>) -> tensor<1x4x8x3xf32>
  %y = attn.merge_heads %o : (tensor<1x4x8x3xf32>) -> tensor<1x8x12xf32>
  return %y : tensor<1x8x12xf32>
}

// -----

// CHECK-LABEL: func.func @relative(
// CHECK: attn.ring_attention {{.+}} form_operands({{.+}}) {causal = true, form = "attn.relative_attention", form_attributes = {}, ranks = 2 : i64} : {{.+}}, tensor<4x8x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<1x4x4x3xf32>
func.func @relative(%x: tensor<1x8x12xf32>) -> tensor<1x8x12xf32> {
  %q = attn.split_heads %x {heads = 4 : i64} : (tensor<1x8x12xf32>) -> tensor<1x4x8x3xf32>
  %pos = attn.param "pos" : tensor<4x8x3xf32>
  %u = attn.param "u" : tensor<4x3xf32>
  %w = attn.param "w" : tensor<4x3xf32>
  %o = attn.relative_attention %q, %q, %q, %pos, %u, %w
      : (tensor<1x4x8x3xf32>, tensor<1x4x8x3xf32>, tensor<1x4x8x3xf32>, tensor<4x8x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<1x4x8x3xf32>
  %y = attn.merge_heads %o : (tensor<1x4x8x3xf32>) -> tensor<1x8x12xf32>
  return %y : tensor<1x8x12xf32>
}
