// RUN: lcc-opt %s --split-input-file --attn-half-precision-attention --verify-diagnostics | FileCheck %s
// RUN: not lcc-opt %s --split-input-file --attn-half-precision-attention=precision=f16 2>/dev/null | FileCheck %s --check-prefix=F16
// RUN: not lcc-opt %s --split-input-file --attn-half-precision-attention=precision=f16 2>&1 >/dev/null | FileCheck %s --check-prefix=F16-DIAG
// RUN: not lcc-opt %s --split-input-file --attn-half-precision-attention=precision=fp8 2>&1 | FileCheck %s --check-prefix=FP8
// FP8: error: attn-half-precision-attention: unknown precision 'fp8'; expected bf16 or f16

// The forward (with its logsumexp, as the train step saves it) and its
// backward compute in bf16: query, key and value, the result and its
// gradient are rounded; the output and the gradients are widened back; the
// logsumexp stays f32 on both sides. Mask and score regions are kept as
// they are (they work on f32 scores).
// CHECK-LABEL: func @forward_and_backward
// CHECK-SAME: (%[[Q:.+]]: tensor<1x2x64x16xf32>, %[[K:.+]]: tensor<1x2x64x16xf32>, %[[V:.+]]: tensor<1x2x64x16xf32>, %[[DO:.+]]: tensor<1x2x64x16xf32>)
// CHECK: %[[QH:.+]] = arith.truncf %[[Q]] : tensor<1x2x64x16xf32> to tensor<1x2x64x16xbf16>
// CHECK: %[[KH:.+]] = arith.truncf %[[K]] : tensor<1x2x64x16xf32> to tensor<1x2x64x16xbf16>
// CHECK: %[[VH:.+]] = arith.truncf %[[V]] : tensor<1x2x64x16xf32> to tensor<1x2x64x16xbf16>
// CHECK: %[[OH:.+]], %[[LSE:.+]] = attn.attention %[[QH]], %[[KH]], %[[VH]] {causal = true} : (tensor<1x2x64x16xbf16>, tensor<1x2x64x16xbf16>, tensor<1x2x64x16xbf16>) -> (tensor<1x2x64x16xbf16>, tensor<1x2x64xf32>)
// CHECK: score
// CHECK: ^bb0(%{{.+}}: f32,
// CHECK: %[[O:.+]] = arith.extf %[[OH]] : tensor<1x2x64x16xbf16> to tensor<1x2x64x16xf32>
// CHECK: %[[OT:.+]] = arith.truncf %[[O]]
// CHECK: %[[DOH:.+]] = arith.truncf %[[DO]]
// CHECK: %[[GQ:.+]], %[[GK:.+]], %[[GV:.+]] = attn.attention_backward %{{.+}}, %{{.+}}, %{{.+}}, %[[OT]], %[[LSE]], %[[DOH]] {causal = true} : (tensor<1x2x64x16xbf16>, tensor<1x2x64x16xbf16>, tensor<1x2x64x16xbf16>, tensor<1x2x64x16xbf16>, tensor<1x2x64xf32>, tensor<1x2x64x16xbf16>) -> (tensor<1x2x64x16xbf16>, tensor<1x2x64x16xbf16>, tensor<1x2x64x16xbf16>)
// CHECK-DAG: %[[DQ:.+]] = arith.extf %[[GQ]] : tensor<1x2x64x16xbf16> to tensor<1x2x64x16xf32>
// CHECK-DAG: %[[DK:.+]] = arith.extf %[[GK]]
// CHECK-DAG: %[[DV:.+]] = arith.extf %[[GV]]
// CHECK: return %[[O]], %[[DQ]], %[[DK]], %[[DV]]
// F16-LABEL: func @forward_and_backward
// F16: attn.attention {{.+}} -> (tensor<1x2x64x16xf16>, tensor<1x2x64xf32>)
// F16: attn.attention_backward {{.+}} -> (tensor<1x2x64x16xf16>, tensor<1x2x64x16xf16>, tensor<1x2x64x16xf16>)
// F16-DIAG: warning: 'attn.ring_attention' op stays f32 under attention-precision=f16 (f16 computes dense, masked, sparse, adaptive-span, relative, LSH and routed attention; its form computes in f32 only)
// F16-DIAG: error: 'attn.ring_attention' op cannot compute in f16
func.func @forward_and_backward(%q: tensor<1x2x64x16xf32>, %k: tensor<1x2x64x16xf32>, %v: tensor<1x2x64x16xf32>, %do: tensor<1x2x64x16xf32>)
    -> (tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>) {
  %o, %lse = attn.attention %q, %k, %v {causal = true}
      : (tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>) -> (tensor<1x2x64x16xf32>, tensor<1x2x64xf32>)
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %near = arith.cmpi ule, %j, %i : index
        attn.yield %near : i1
      } score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %half = arith.constant 0.5 : f32
        %t = arith.mulf %s, %half : f32
        attn.yield %t : f32
      }
  %dq, %dk, %dv = attn.attention_backward %q, %k, %v, %o, %lse, %do {causal = true}
      : (tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64xf32>, tensor<1x2x64x16xf32>)
      -> (tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>)
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %near = arith.cmpi ule, %j, %i : index
        attn.yield %near : i1
      } score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %half = arith.constant 0.5 : f32
        %t = arith.mulf %s, %half : f32
        attn.yield %t : f32
      }
  return %o, %dq, %dk, %dv : tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>
}

// -----

// Sparse, shared-QK, LSH and routed attention compute in bf16 (routed
// attention's centroids are rounded too); ring attention stays f32, said
// once for the first place with how many more places of the model do;
// attention already in a half type is left alone.
// CHECK-LABEL: func @mixed
// CHECK: attn.sparse_attention fixed {{.+}} -> tensor<1x2x64x16xbf16>
// CHECK: attn.attention %[[QH:[^,]+]], %[[QH]], %[[QH]] {shared_qk} : (tensor<1x2x64x16xbf16>,
// CHECK: attn.lsh_attention %[[QL:[^,]+]], %[[QL]] {{.+}} -> tensor<1x2x64x16xbf16>
// CHECK: attn.routed_attention {{.+}} -> tensor<1x2x64x16xbf16>
// CHECK: attn.routed_attention {{.+}} centroids %{{.+}} : (tensor<1x2x64x16xbf16>, tensor<1x2x64x16xbf16>, tensor<1x2x64x16xbf16>, tensor<2x2x16xbf16>) -> tensor<1x2x64x16xbf16>
// CHECK: attn.ring_attention {{.+}} -> tensor<1x2x64x16xf32>
// CHECK: attn.ring_attention {{.+}} -> tensor<1x2x64x16xf32>
// CHECK: attn.attention {{.+}} : (tensor<1x2x64x16xf16>, tensor<1x2x64x16xf16>, tensor<1x2x64x16xf16>) -> tensor<1x2x64x16xf16>
func.func @mixed(%q: tensor<1x2x64x16xf32>, %c: tensor<2x2x16xf32>, %h: tensor<1x2x64x16xf16>) -> (tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf16>) {
  %s = attn.sparse_attention fixed %q, %q, %q {block = 16 : i64, stride = 32 : i64, summary = 8 : i64}
      : (tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32>
  %r = attn.attention %q, %q, %q {shared_qk}
      : (tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32>
  %l = attn.lsh_attention %q, %q {n_hashes = 2 : i64, bucket_size = 16 : i64}
      : (tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32>
  %rt = attn.routed_attention %q, %q, %q {clusters = 4 : i64, window = 16 : i64}
      : (tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32>
  %rt2 = attn.routed_attention %q, %q, %q centroids %c {clusters = 2 : i64, window = 32 : i64}
      : (tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<2x2x16xf32>) -> tensor<1x2x64x16xf32>
  // expected-warning@+1 {{'attn.ring_attention' op stays f32 under attention-precision=bf16 (bf16 computes dense, masked, sparse, adaptive-span, relative, LSH and routed attention; its form computes in f32 only); so does the attention at 1 more place of the model}}
  %ring = attn.ring_attention %q, %q, %q {ranks = 2 : i64}
      : (tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32>
  %ring2 = attn.ring_attention %q, %q, %q {causal = true, ranks = 2 : i64}
      : (tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32>
  %a = attn.attention %h, %h, %h
      : (tensor<1x2x64x16xf16>, tensor<1x2x64x16xf16>, tensor<1x2x64x16xf16>) -> tensor<1x2x64x16xf16>
  return %s, %r, %l, %rt, %rt2, %ring, %ring2, %a : tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf16>
}

// -----

// LSH attention computes in bf16, forward and backward: query_key and
// value, the result and its gradient are rounded; the result and both
// gradients are widened back.
// CHECK-LABEL: func @lsh
// CHECK-COUNT-2: arith.truncf
// CHECK-NOT: arith.truncf
// CHECK: %[[O:.+]] = attn.lsh_attention {{.+}} : (tensor<1x2x64x16xbf16>, tensor<1x2x64x8xbf16>) -> tensor<1x2x64x8xbf16>
// CHECK: arith.extf
// CHECK-COUNT-2: arith.truncf
// CHECK: attn.lsh_attention_backward {{.+}} : (tensor<1x2x64x16xbf16>, tensor<1x2x64x8xbf16>, tensor<1x2x64x8xbf16>, tensor<1x2x64x8xbf16>) -> (tensor<1x2x64x16xbf16>, tensor<1x2x64x8xbf16>)
// CHECK-COUNT-2: arith.extf
// CHECK: return
func.func @lsh(%qk: tensor<1x2x64x16xf32>, %v: tensor<1x2x64x8xf32>, %do: tensor<1x2x64x8xf32>)
    -> (tensor<1x2x64x8xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x8xf32>) {
  %o = attn.lsh_attention %qk, %v {n_hashes = 2 : i64, bucket_size = 16 : i64, causal = true}
      : (tensor<1x2x64x16xf32>, tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32>
  %g:2 = attn.lsh_attention_backward %qk, %v, %o, %do {n_hashes = 2 : i64, bucket_size = 16 : i64, causal = true}
      : (tensor<1x2x64x16xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>) -> (tensor<1x2x64x16xf32>, tensor<1x2x64x8xf32>)
  return %o, %g#0, %g#1 : tensor<1x2x64x8xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x8xf32>
}

// -----

// Routed attention's backward computes in bf16: query, key, value, the
// centroids and the result's gradient are rounded (there is no saved
// result: the backward recomputes its probabilities); the three gradients
// are widened back.
// CHECK-LABEL: func @routed_backward
// CHECK-COUNT-5: arith.truncf
// CHECK-NOT: arith.truncf
// CHECK: attn.routed_attention_backward {{.+}} : (tensor<1x2x64x16xbf16>, tensor<1x2x64x16xbf16>, tensor<1x2x64x8xbf16>, tensor<2x4x16xbf16>, tensor<1x2x64x8xbf16>) -> (tensor<1x2x64x16xbf16>, tensor<1x2x64x16xbf16>, tensor<1x2x64x8xbf16>)
// CHECK-COUNT-3: arith.extf
// CHECK: return
func.func @routed_backward(%q: tensor<1x2x64x16xf32>, %k: tensor<1x2x64x16xf32>, %v: tensor<1x2x64x8xf32>, %c: tensor<2x4x16xf32>, %do: tensor<1x2x64x8xf32>)
    -> (tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x8xf32>) {
  %g:3 = attn.routed_attention_backward %q, %k, %v centroids %c, %do {clusters = 4 : i64, window = 16 : i64, causal = true}
      : (tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x8xf32>, tensor<2x4x16xf32>, tensor<1x2x64x8xf32>) -> (tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x8xf32>)
  return %g#0, %g#1, %g#2 : tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x8xf32>
}

// -----

// Adaptive span computes in bf16 too, forward and backward: its span z,
// its log normaliser and z's gradient stay f32.
// CHECK-LABEL: func @adaptive_span
// CHECK: %[[O:.+]], %[[N:.+]] = attn.adaptive_span_attention {{.+}} : (tensor<1x2x8x4xbf16>, tensor<1x2x16x4xbf16>, tensor<1x2x16x4xbf16>, tensor<2xf32>) -> (tensor<1x2x8x4xbf16>, tensor<1x2x8xf32>)
// CHECK: attn.adaptive_span_attention_backward {{.+}} : (tensor<1x2x8x4xbf16>, tensor<1x2x16x4xbf16>, tensor<1x2x16x4xbf16>, tensor<2xf32>, tensor<1x2x8x4xbf16>, tensor<1x2x8xf32>, tensor<1x2x8x4xbf16>) -> (tensor<1x2x8x4xbf16>, tensor<1x2x16x4xbf16>, tensor<1x2x16x4xbf16>, tensor<2xf32>)
// CHECK-COUNT-3: arith.extf
// CHECK: return
func.func @adaptive_span(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x16x4xf32>, %z: tensor<2xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x16x4xf32>, tensor<2xf32>) {
  %o, %n = attn.adaptive_span_attention %q, %k, %k, %z {max_span = 16 : i64, ramp = 4 : i64, causal = true}
      : (tensor<1x2x8x4xf32>, tensor<1x2x16x4xf32>, tensor<1x2x16x4xf32>, tensor<2xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
  %g:4 = attn.adaptive_span_attention_backward %q, %k, %k, %z, %o, %n, %o
      {max_span = 16 : i64, ramp = 4 : i64, causal = true}
      : (tensor<1x2x8x4xf32>, tensor<1x2x16x4xf32>, tensor<1x2x16x4xf32>, tensor<2xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32>)
      -> (tensor<1x2x8x4xf32>, tensor<1x2x16x4xf32>, tensor<1x2x16x4xf32>, tensor<2xf32>)
  return %o, %g#0, %g#1, %g#3 : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x16x4xf32>, tensor<2xf32>
}

// -----

// Transformer-XL attention computes in bf16, forward and backward: query,
// key, value, the encodings and both biases are rounded (once per value:
// here key and value are one, u and w are one), the logsumexp stays f32,
// and every gradient (pos, u and w too) is widened back.
// CHECK-LABEL: func @relative
// CHECK-COUNT-4: arith.truncf
// CHECK-NOT: arith.truncf
// CHECK: %[[O:.+]], %[[L:.+]] = attn.relative_attention {{.+}} : (tensor<1x2x8x4xbf16>, tensor<1x2x16x4xbf16>, tensor<1x2x16x4xbf16>, tensor<2x16x4xbf16>, tensor<2x4xbf16>, tensor<2x4xbf16>) -> (tensor<1x2x8x4xbf16>, tensor<1x2x8xf32>)
// CHECK: attn.relative_attention_backward {{.+}} : (tensor<1x2x8x4xbf16>, tensor<1x2x16x4xbf16>, tensor<1x2x16x4xbf16>, tensor<2x16x4xbf16>, tensor<2x4xbf16>, tensor<2x4xbf16>, tensor<1x2x8x4xbf16>, tensor<1x2x8xf32>, tensor<1x2x8x4xbf16>) -> (tensor<1x2x8x4xbf16>, tensor<1x2x16x4xbf16>, tensor<1x2x16x4xbf16>, tensor<2x16x4xbf16>, tensor<2x4xbf16>, tensor<2x4xbf16>)
// CHECK-COUNT-6: arith.extf
// CHECK: return
func.func @relative(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x16x4xf32>, %pos: tensor<2x16x4xf32>, %u: tensor<2x4xf32>)
    -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x16x4xf32>, tensor<2x16x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %o, %lse = attn.relative_attention %q, %k, %k, %pos, %u, %u {clamp_len = 10 : i64}
      : (tensor<1x2x8x4xf32>, tensor<1x2x16x4xf32>, tensor<1x2x16x4xf32>, tensor<2x16x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
  %g:6 = attn.relative_attention_backward %q, %k, %k, %pos, %u, %u, %o, %lse, %o {clamp_len = 10 : i64}
      : (tensor<1x2x8x4xf32>, tensor<1x2x16x4xf32>, tensor<1x2x16x4xf32>, tensor<2x16x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32>)
      -> (tensor<1x2x8x4xf32>, tensor<1x2x16x4xf32>, tensor<1x2x16x4xf32>, tensor<2x16x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return %o, %g#0, %g#1, %g#3, %g#4, %g#5 : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x16x4xf32>, tensor<2x16x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// Nothing the model attends with can compute in half: one error naming
// the first attention and why.
func.func @nothing_in_half(%q: tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32> {
  // expected-error@+1 {{'attn.ring_attention' op cannot compute in bf16: its form computes in f32 only, and no other attention of the model can (attention-precision=bf16 computes dense, masked, sparse, adaptive-span, relative, LSH and routed attention); compile in f32}}
  %r = attn.ring_attention %q, %q, %q {ranks = 2 : i64}
      : (tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32>
  return %r : tensor<1x2x64x16xf32>
}

// -----

// expected-error@+1 {{attention-precision=bf16: the model has no f32 attention to compute in bf16}}
module {
  func.func @no_attention(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}
