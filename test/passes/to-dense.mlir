// RUN: lcc-opt %s --split-input-file --attn-to-dense --verify-diagnostics | FileCheck %s

// LSH attention becomes the shared-QK attention it approximates.
// CHECK-LABEL: func @lsh
// CHECK: attn.attention %[[QK:.+]], %[[QK]], %{{.+}} {causal = true, scale = 5.000000e-01 : f32, shared_qk}
func.func @lsh(%qk: tensor<1x2x128x16xf32>, %v: tensor<1x2x128x16xf32>) -> tensor<1x2x128x16xf32> {
  // expected-remark@+1 {{'attn.lsh_attention' rewritten to the shared-QK dense attention it approximates}}
  %0 = attn.lsh_attention %qk, %v {n_hashes = 2 : i64, bucket_size = 16 : i64, causal = true, scale = 0.5 : f32}
      : (tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>) -> tensor<1x2x128x16xf32>
  return %0 : tensor<1x2x128x16xf32>
}

// -----

// Sparse attention becomes the masked attention it equals: the strided
// pattern as a mask region.
// CHECK-LABEL: func @sparse_strided
// CHECK: attn.attention %{{.+}}, %{{.+}}, %{{.+}} {causal = true}
// CHECK-SAME: mask {
// CHECK-NEXT: ^bb0(%{{.+}}: index, %{{.+}}: index, %[[I:.+]]: index, %[[J:.+]]: index):
// CHECK: %[[D:.+]] = arith.subi %[[I]], %[[J]] : index
// CHECK: arith.cmpi slt, %[[D]]
// CHECK: arith.cmpi sgt, %[[D]]
// CHECK: arith.remsi %[[D]]
// CHECK: attn.yield
// CHECK-NOT: score
func.func @sparse_strided(%q: tensor<1x2x128x16xf32>) -> tensor<1x2x128x16xf32> {
  // expected-remark@+1 {{'attn.sparse_attention' rewritten to dense attention with its pattern as mask region (the same result)}}
  %0 = attn.sparse_attention strided %q, %q, %q {block = 32 : i64, stride = 16 : i64, causal = true}
      : (tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>) -> tensor<1x2x128x16xf32>
  return %0 : tensor<1x2x128x16xf32>
}

// -----

// The fixed pattern: same window, or a summary position.
// CHECK-LABEL: func @sparse_fixed
// CHECK: mask {
// CHECK: arith.divsi
// CHECK: arith.divsi
// CHECK: arith.remsi
// CHECK: %[[C:.+]] = arith.constant 12 : index
// CHECK: arith.cmpi sge, %{{.+}}, %[[C]]
func.func @sparse_fixed(%q: tensor<1x2x128x16xf32>) -> tensor<1x2x128x16xf32> {
  // expected-remark@+1 {{rewritten to dense attention with its pattern as mask region}}
  %0 = attn.sparse_attention fixed %q, %q, %q {block = 32 : i64, stride = 16 : i64, summary = 4 : i64}
      : (tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>) -> tensor<1x2x128x16xf32>
  return %0 : tensor<1x2x128x16xf32>
}

// -----

// Routed attention becomes the attention of its queries, keys and values.
// CHECK-LABEL: func @routed
// CHECK: attn.attention %{{.+}}, %{{.+}}, %{{.+}} : (
func.func @routed(%q: tensor<1x2x64x16xf32>, %k: tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32> {
  // expected-remark@+1 {{'attn.routed_attention' rewritten to the dense attention it approximates}}
  %0 = attn.routed_attention %q, %k, %k {clusters = 4 : i64, window = 16 : i64}
      : (tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32>
  return %0 : tensor<1x2x64x16xf32>
}

// -----

// Dense attention is left as it is, without a remark.
// CHECK-LABEL: func @dense
// CHECK: attn.attention
func.func @dense(%q: tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32> {
  %0 = attn.attention %q, %q, %q : (tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32>
  return %0 : tensor<1x2x64x16xf32>
}
