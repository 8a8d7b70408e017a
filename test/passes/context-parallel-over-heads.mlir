// RUN: lcc-opt %s --split-input-file --attn-context-parallel="ranks=2 over-heads" | FileCheck %s

// Split over the heads (DeepSpeed-Ulysses), forms with operands of one
// slice per head give each rank its heads' slices.

// Adaptive span's z, one per head: each rank takes its heads'.
// CHECK-LABEL: func.func @per_head(
// CHECK: %[[Z:.+]] = attn.param "z" : tensor<4xf32>
// CHECK: %[[ZB:.+]] = tensor.expand_shape %[[Z]] {{\[\[}}0, 1]] output_shape [2, 2]
// CHECK: %[[ZM:.+]] = attn.rank_slice %[[ZB]] : tensor<2x2xf32> -> tensor<1x2xf32>
// CHECK: %[[ZS:.+]] = tensor.collapse_shape %[[ZM]] {{\[\[}}0, 1]] : tensor<1x2xf32> into tensor<2xf32>
// CHECK: attn.adaptive_span_attention %{{.+}}, %{{.+}}, %{{.+}}, %[[ZS]] {{.+}} -> tensor<1x2x8x3xf32>
// CHECK: return %{{.+}} : tensor<1x4x12xf32>
func.func @per_head(%x: tensor<1x8x12xf32>) -> tensor<1x8x12xf32> {
  %q = attn.split_heads %x {heads = 4 : i64} : (tensor<1x8x12xf32>) -> tensor<1x4x8x3xf32>
  %z = attn.param "z" : tensor<4xf32>
  %o = attn.adaptive_span_attention %q, %q, %q, %z {max_span = 8 : i64, ramp = 2 : i64, causal = true}
      : (tensor<1x4x8x3xf32>, tensor<1x4x8x3xf32>, tensor<1x4x8x3xf32>, tensor<4xf32>) -> tensor<1x4x8x3xf32>
  %y = attn.merge_heads %o : (tensor<1x4x8x3xf32>) -> tensor<1x8x12xf32>
  return %y : tensor<1x8x12xf32>
}

// -----

// Transformer-XL's attention over the segment alone: its relative
// positions and biases, one slice per head, cut to the rank's heads.
// CHECK-LABEL: func.func @relative(
// CHECK-DAG: attn.rank_slice %{{.+}} : tensor<2x2x8x3xf32> -> tensor<1x2x8x3xf32>
// CHECK-DAG: attn.rank_slice %{{.+}} : tensor<2x2x3xf32> -> tensor<1x2x3xf32>
// CHECK: attn.relative_attention {{.+}} -> tensor<1x2x8x3xf32>
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
