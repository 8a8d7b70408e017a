// RUN: lcc-opt %s --split-input-file --attn-dense-to-sparse="pattern=fixed stride=32 summary=8 block=16" --verify-diagnostics | FileCheck %s
// RUN: lcc-opt %s --split-input-file --attn-dense-to-sparse 2>/dev/null | FileCheck %s --check-prefix=DEFAULTS

// CHECK-LABEL: func @causal
// CHECK: attn.sparse_attention fixed %{{.+}}, %{{.+}}, %{{.+}} {block = 16 : i64, causal = true, scale = 5.000000e-01 : f32, stride = 32 : i64, summary = 8 : i64}
// DEFAULTS-LABEL: func @causal
// The default stride is the power of two nearest sqrt(256) = 16.
// DEFAULTS: attn.sparse_attention strided %{{.+}}, %{{.+}}, %{{.+}} {block = 64 : i64, causal = true, scale = 5.000000e-01 : f32, stride = 16 : i64}
func.func @causal(%q: tensor<1x2x256x16xf32>) -> tensor<1x2x256x16xf32> {
  // expected-remark@+1 {{'attn.attention' rewritten to sparse attention (fixed, stride 32, summary 8, block 16)}}
  %0 = attn.attention %q, %q, %q {causal = true, scale = 0.5 : f32}
      : (tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32>)
      -> tensor<1x2x256x16xf32>
  return %0 : tensor<1x2x256x16xf32>
}

// -----

// Shared-QK attention keeps its form, and says why.
// CHECK-LABEL: func @shared_qk
// CHECK: attn.attention
func.func @shared_qk(%qk: tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32> {
  // expected-remark@+1 {{'attn.attention' kept dense: shared-QK (Reformer) attention has no Sparse Transformer form; its long-context form is LSH}}
  %0 = attn.attention %qk, %qk, %qk {shared_qk}
      : (tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>)
      -> tensor<1x2x64x16xf32>
  return %0 : tensor<1x2x64x16xf32>
}

// -----

// So does cross attention.
// CHECK-LABEL: func @cross
// CHECK: attn.attention
func.func @cross(%q: tensor<1x2x64x16xf32>, %k: tensor<1x2x96x16xf32>) -> tensor<1x2x64x16xf32> {
  // expected-remark@+1 {{'attn.attention' kept dense: the sparse patterns relate positions of one sequence, and queries and keys differ in length}}
  %0 = attn.attention %q, %k, %k
      : (tensor<1x2x64x16xf32>, tensor<1x2x96x16xf32>, tensor<1x2x96x16xf32>)
      -> tensor<1x2x64x16xf32>
  return %0 : tensor<1x2x64x16xf32>
}

// -----

// Inside a multi-head attention block the body's attention is rewritten.
// CHECK-LABEL: func @block
// CHECK: attn.multi_head_attention
// CHECK: attn.sparse_attention fixed
func.func @block(%x: tensor<1x64x32xf32>, %w: tensor<32x32xf32>) -> tensor<1x64x32xf32> {
  %0 = attn.multi_head_attention %x, query %w, key %w, value %w, output %w {heads = 2 : i64}
      : (tensor<1x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<1x64x32xf32> {
  ^bb0(%q: tensor<1x2x64x16xf32>, %k: tensor<1x2x64x16xf32>, %v: tensor<1x2x64x16xf32>):
    // expected-remark@+1 {{rewritten to sparse attention}}
    %o = attn.attention %q, %k, %v : (tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32>
    attn.yield %o : tensor<1x2x64x16xf32>
  }
  return %0 : tensor<1x64x32xf32>
}

// -----

// A stride longer than the sequence cannot describe a pattern.
func.func @stride_too_long(%q: tensor<1x1x16x8xf32>) -> tensor<1x1x16x8xf32> {
  // expected-error@+1 {{'attn.attention' cannot take sparse stride 32: it exceeds the sequence length 16}}
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
  // expected-remark@+1 {{'attn.attention' kept dense: it has its own mask or score region, which the Sparse Transformer patterns would replace}}
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
