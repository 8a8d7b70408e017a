// RUN: lcc-opt %s --split-input-file --attn-dense-to-lsh="n-hashes=2 bucket-size=16 seed=5" --verify-diagnostics | FileCheck %s

// Shared-QK attention becomes LSH attention; each op gets the next seed.
// CHECK-LABEL: func @two_layers
// CHECK: attn.lsh_attention %{{.+}}, %{{.+}} {bucket_size = 16 : i64, causal = true, n_hashes = 2 : i64, seed = 5 : i64}
// CHECK: attn.lsh_attention %{{.+}}, %{{.+}} {bucket_size = 16 : i64, n_hashes = 2 : i64, scale = 2.500000e-01 : f32, seed = 6 : i64}
func.func @two_layers(%qk: tensor<1x2x64x16xf32>, %v: tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32> {
  // expected-remark@+1 {{'attn.attention' rewritten to LSH attention (2 hashes, bucket 16, seed 5)}}
  %0 = attn.attention %qk, %qk, %v {causal = true, shared_qk}
      : (tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32>
  // expected-remark@+1 {{'attn.attention' rewritten to LSH attention (2 hashes, bucket 16, seed 6)}}
  %1 = attn.attention %0, %0, %v {shared_qk, scale = 0.25 : f32}
      : (tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32>
  return %1 : tensor<1x2x64x16xf32>
}

// -----

// Attention with distinct queries and keys is kept, with the reason.
// CHECK-LABEL: func @distinct_keys
// CHECK: attn.attention
func.func @distinct_keys(%q: tensor<1x2x64x16xf32>, %k: tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32> {
  // expected-remark@+1 {{'attn.attention' kept dense: LSH attention needs shared queries and keys (shared_qk)}}
  %0 = attn.attention %q, %k, %k
      : (tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32>
  return %0 : tensor<1x2x64x16xf32>
}

// -----

// An attention with its own mask keeps it: no other form honours it.
// CHECK-LABEL: func @keeps_masked_attention
// CHECK: attn.attention
// CHECK: mask {
func.func @keeps_masked_attention(%q: tensor<1x2x64x16xf32>, %v: tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32> {
  // expected-remark@+1 {{'attn.attention' kept dense: LSH attention cannot honour its mask or score region}}
  %0 = attn.attention %q, %q, %v {causal = true, shared_qk} : (tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c8 = arith.constant 8 : index
        %d = arith.subi %i, %j : index
        %near = arith.cmpi ult, %d, %c8 : index
        attn.yield %near : i1
      }
  return %0 : tensor<1x2x64x16xf32>
}
