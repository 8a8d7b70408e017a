// The plugin's rewrite, by name and through lcc's forms pipeline, with a
// remark per op rewritten or kept.
// RUN: lcc-opt --load-plugin=%local_plugin %s --local-dense-to-local="window=32 look-forward=1" --verify-diagnostics | FileCheck %s
// RUN: lcc-opt --load-plugin=%local_plugin %s --lcc-attention-forms="attention=local attention-options={window=32 look-forward=1}" 2>/dev/null | FileCheck %s
// RUN: not lcc-opt --load-plugin=%local_plugin %s --local-dense-to-local="window=0" 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: local-dense-to-local: expected window >= 1

// CHECK-LABEL: func @plain
// CHECK: local.attention %{{.*}}, %{{.*}}, %{{.*}} {look_forward = 1 : i64, window = 32 : i64}
func.func @plain(%q: tensor<1x2x128x16xf32>) -> tensor<1x2x128x16xf32> {
  // expected-remark@+1 {{'attn.attention' rewritten to local attention (window 32, 1 back, 1 ahead)}}
  %0 = attn.attention %q, %q, %q : (tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>) -> tensor<1x2x128x16xf32>
  return %0 : tensor<1x2x128x16xf32>
}

// Causal attention sees no window ahead.
// CHECK-LABEL: func @causal
// CHECK: local.attention {{.*}} {causal = true, window = 32 : i64}
func.func @causal(%q: tensor<1x2x128x16xf32>) -> tensor<1x2x128x16xf32> {
  // expected-remark@+1 {{'attn.attention' rewritten to local attention (window 32, 1 back, 0 ahead)}}
  %0 = attn.attention %q, %q, %q {causal = true} : (tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>) -> tensor<1x2x128x16xf32>
  return %0 : tensor<1x2x128x16xf32>
}

// CHECK-LABEL: func @shared_qk
// CHECK: attn.attention
func.func @shared_qk(%q: tensor<1x2x128x16xf32>) -> tensor<1x2x128x16xf32> {
  // expected-remark@+1 {{'attn.attention' kept dense: shared-QK (Reformer) attention has no local form}}
  %0 = attn.attention %q, %q, %q {shared_qk} : (tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>) -> tensor<1x2x128x16xf32>
  return %0 : tensor<1x2x128x16xf32>
}

// CHECK-LABEL: func @cross
// CHECK: attn.attention
func.func @cross(%q: tensor<1x2x128x16xf32>, %k: tensor<1x2x64x16xf32>) -> tensor<1x2x128x16xf32> {
  // expected-remark@+1 {{'attn.attention' kept dense: windows relate positions of one sequence}}
  %0 = attn.attention %q, %k, %k : (tensor<1x2x128x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>) -> tensor<1x2x128x16xf32>
  return %0 : tensor<1x2x128x16xf32>
}
