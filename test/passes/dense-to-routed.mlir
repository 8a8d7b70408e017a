// RUN: lcc-opt %s --split-input-file --attn-dense-to-routed="clusters=4 window=24 seed=3" --verify-diagnostics | FileCheck %s
// RUN: lcc-opt %s --split-input-file --attn-dense-to-routed 2>/dev/null | FileCheck %s --check-prefix=DEFAULTS

// CHECK-LABEL: func @causal
// CHECK: attn.routed_attention %{{.+}}, %{{.+}}, %{{.+}} {causal = true, clusters = 4 : i64, seed = 3 : i64, window = 24 : i64}
// Defaults: clusters = power of two nearest sqrt(64) = 8, window = 64 / 8.
// DEFAULTS-LABEL: func @causal
// DEFAULTS: attn.routed_attention %{{.+}}, %{{.+}}, %{{.+}} {causal = true, clusters = 8 : i64, window = 8 : i64}
func.func @causal(%q: tensor<1x2x64x16xf32>, %k: tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32> {
  // expected-remark@+1 {{'attn.attention' rewritten to routed attention (4 clusters, window 24, seed 3)}}
  %0 = attn.attention %q, %k, %k {causal = true}
      : (tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32>
  return %0 : tensor<1x2x64x16xf32>
}

// -----

// Shared-QK attention is kept, with the reason.
// CHECK-LABEL: func @shared_qk
// CHECK: attn.attention
func.func @shared_qk(%qk: tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32> {
  // expected-remark@+1 {{'attn.attention' kept dense: shared-QK (Reformer) attention has no routed form; its long-context form is LSH}}
  %0 = attn.attention %qk, %qk, %qk {shared_qk}
      : (tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32>
  return %0 : tensor<1x2x64x16xf32>
}

// -----

// A window longer than the keys is an error naming the op.
func.func @window_too_long(%q: tensor<1x1x16x8xf32>) -> tensor<1x1x16x8xf32> {
  // expected-error@+1 {{'attn.attention' cannot take a routed window of 24 keys: it has 16}}
  %0 = attn.attention %q, %q, %q
      : (tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>) -> tensor<1x1x16x8xf32>
  return %0 : tensor<1x1x16x8xf32>
}

// -----

// An attention with its own mask keeps it: no other form honours it.
// CHECK-LABEL: func @keeps_masked_attention
// CHECK: attn.attention
// CHECK: mask {
func.func @keeps_masked_attention(%q: tensor<1x2x64x16xf32>, %v: tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32> {
  // expected-remark@+1 {{'attn.attention' kept dense: routed attention cannot honour its mask or score region}}
  %0 = attn.attention %q, %q, %v {causal = true} : (tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c8 = arith.constant 8 : index
        %d = arith.subi %i, %j : index
        %near = arith.cmpi ult, %d, %c8 : index
        attn.yield %near : i1
      }
  return %0 : tensor<1x2x64x16xf32>
}
