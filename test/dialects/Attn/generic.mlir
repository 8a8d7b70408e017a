// The generic form of every attn op parses, with inherent attributes given
// either as properties or in the attribute dictionary, and prints back in
// the custom form.
// RUN: lcc-opt %s --split-input-file | FileCheck %s

// CHECK-LABEL: func @attention_generic
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} {causal = true, scale = 5.000000e-01 : f32, shared_qk}
func.func @attention_generic(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x4xf32>,
                             %v: tensor<1x2x8x4xf32>) {
  %0 = "attn.attention"(%q, %k, %v) {causal = false}
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  %1 = "attn.attention"(%q, %q, %v) <{causal = true, scale = 0.5 : f32, shared_qk}>
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  return
}

// -----

// CHECK-LABEL: func @forms_generic
// CHECK: attn.lsh_attention %{{.*}}, %{{.*}} {bucket_size = 4 : i64, n_hashes = 2 : i64}
// CHECK: attn.sparse_attention fixed %{{.*}}, %{{.*}}, %{{.*}} {block = 4 : i64, stride = 4 : i64, summary = 1 : i64}
// CHECK: attn.routed_attention %{{.*}}, %{{.*}}, %{{.*}} {clusters = 2 : i64, window = 4 : i64}
func.func @forms_generic(%q: tensor<1x2x8x4xf32>) {
  %0 = "attn.lsh_attention"(%q, %q) {n_hashes = 2 : i64, bucket_size = 4 : i64}
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  %1 = "attn.sparse_attention"(%q, %q, %q)
      {pattern = #attn<sparse_pattern fixed>, block = 4 : i64, stride = 4 : i64, summary = 1 : i64}
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  %2 = "attn.routed_attention"(%q, %q, %q) {clusters = 2 : i64, window = 4 : i64}
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  return
}

// -----

// CHECK-LABEL: func @blocks_generic
// CHECK: attn.multi_head_attention %{{.*}}, query %{{.*}}, value %{{.*}}, output %{{.*}} {heads = 2 : i64}
// CHECK: attn.residual
// CHECK: attn.feed_forward gelu
func.func @blocks_generic(%x: tensor<1x8x4xf32>, %w: tensor<4x4xf32>, %b: tensor<4xf32>) {
  %0 = "attn.multi_head_attention"(%x, %w, %w, %w) ({
  ^bb0(%qk: tensor<1x2x8x2xf32>, %v: tensor<1x2x8x2xf32>):
    "attn.yield"(%v) : (tensor<1x2x8x2xf32>) -> ()
  }) {heads = 2 : i64}
      : (tensor<1x8x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<1x8x4xf32>
  %1 = "attn.residual"(%0) ({
  ^bb0(%a: tensor<1x8x4xf32>):
    %f = "attn.feed_forward"(%a, %w, %b, %w, %b) {activation = #attn<activation gelu>}
        : (tensor<1x8x4xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<1x8x4xf32>
    "attn.yield"(%f) : (tensor<1x8x4xf32>) -> ()
  }) : (tensor<1x8x4xf32>) -> tensor<1x8x4xf32>
  return
}
