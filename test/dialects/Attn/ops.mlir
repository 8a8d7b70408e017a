// Every attn op parses and prints in its custom form, and survives a trip
// through the generic form.
// RUN: lcc-opt %s --split-input-file | lcc-opt --split-input-file | FileCheck %s
// RUN: lcc-opt %s --split-input-file --mlir-print-op-generic | lcc-opt --split-input-file | FileCheck %s
// RUN: lcc-opt %s --split-input-file --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func @attention
// CHECK-SAME: (%[[Q:.+]]: tensor<2x4x128x32xf32>, %[[K:.+]]: tensor<2x4x96x32xf32>, %[[V:.+]]: tensor<2x4x96x16xf32>)
// CHECK: attn.attention %[[Q]], %[[K]], %[[V]] : (tensor<2x4x128x32xf32>, tensor<2x4x96x32xf32>, tensor<2x4x96x16xf32>) -> tensor<2x4x128x16xf32>
// CHECK: attn.attention %[[Q]], %[[K]], %[[V]] {causal = true, scale = 2.500000e-01 : f32}
// GENERIC: "attn.attention"(%{{.*}}, %{{.*}}, %{{.*}}) <{causal = false}>
func.func @attention(%q: tensor<2x4x128x32xf32>, %k: tensor<2x4x96x32xf32>,
                     %v: tensor<2x4x96x16xf32>)
    -> (tensor<2x4x128x16xf32>, tensor<2x4x128x16xf32>) {
  %0 = attn.attention %q, %k, %v
      : (tensor<2x4x128x32xf32>, tensor<2x4x96x32xf32>, tensor<2x4x96x16xf32>)
      -> tensor<2x4x128x16xf32>
  %1 = attn.attention %q, %k, %v {causal = true, scale = 0.25 : f32}
      : (tensor<2x4x128x32xf32>, tensor<2x4x96x32xf32>, tensor<2x4x96x16xf32>)
      -> tensor<2x4x128x16xf32>
  return %0, %1 : tensor<2x4x128x16xf32>, tensor<2x4x128x16xf32>
}

// -----

// Mask and score regions print after the type, each with its block header;
// in the generic form the op has both regions, an absent one empty.
// CHECK-LABEL: func @attention_mask_and_score
// CHECK: attn.attention %{{.+}}, %{{.+}}, %{{.+}} : ({{.*}}) -> tensor<1x2x64x16xf32> mask {
// CHECK-NEXT: ^bb0(%[[B:.+]]: index, %[[H:.+]]: index, %[[I:.+]]: index, %[[J:.+]]: index):
// CHECK: arith.cmpi ule, %[[J]], %[[I]] : index
// CHECK: attn.yield %{{.+}} : i1
// CHECK-NEXT: } score {
// CHECK-NEXT: ^bb0(%[[S:.+]]: f32, %{{.+}}: index, %{{.+}}: index, %{{.+}}: index, %{{.+}}: index):
// CHECK: math.tanh
// CHECK: attn.yield %{{.+}} : f32
// CHECK: attn.attention %{{.+}}, %{{.+}}, %{{.+}} {causal = true} : ({{.*}}) -> tensor<1x2x64x16xf32> score {
// CHECK-NOT: mask
// CHECK: return
// GENERIC: "attn.attention"(%{{.*}}, %{{.*}}, %{{.*}}) <{causal = false}> ({
// GENERIC: }, {
// GENERIC: "attn.attention"(%{{.*}}, %{{.*}}, %{{.*}}) <{causal = true}> ({
// GENERIC-NEXT: }, {
func.func @attention_mask_and_score(%q: tensor<1x2x64x16xf32>)
    -> (tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>) {
  %0 = attn.attention %q, %q, %q
      : (tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>)
      -> tensor<1x2x64x16xf32>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %t = arith.cmpi ule, %j, %i : index
        attn.yield %t : i1
      } score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %t = math.tanh %s : f32
        attn.yield %t : f32
      }
  %1 = attn.attention %q, %q, %q {causal = true}
      : (tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>)
      -> tensor<1x2x64x16xf32>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        attn.yield %s : f32
      }
  return %0, %1 : tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>
}

// -----

// Half attention saves an f32 logsumexp; its score region works on f32
// scores.
// CHECK-LABEL: func @half_attention
// CHECK: attn.attention {{.+}} -> (tensor<1x2x64x16xbf16>, tensor<1x2x64xf32>)
// CHECK: ^bb0(%{{.+}}: f32,
func.func @half_attention(%q: tensor<1x2x64x16xbf16>) -> (tensor<1x2x64x16xbf16>, tensor<1x2x64xf32>) {
  %0, %1 = attn.attention %q, %q, %q
      : (tensor<1x2x64x16xbf16>, tensor<1x2x64x16xbf16>, tensor<1x2x64x16xbf16>)
      -> (tensor<1x2x64x16xbf16>, tensor<1x2x64xf32>)
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        attn.yield %s : f32
      }
  return %0, %1 : tensor<1x2x64x16xbf16>, tensor<1x2x64xf32>
}

// -----

// So does half relative attention.
// CHECK-LABEL: func @half_relative
// CHECK: attn.relative_attention {{.+}} -> (tensor<1x2x8x4xbf16>, tensor<1x2x8xf32>)
func.func @half_relative(%q: tensor<1x2x8x4xbf16>, %pos: tensor<2x8x4xbf16>, %u: tensor<2x4xbf16>) -> (tensor<1x2x8x4xbf16>, tensor<1x2x8xf32>) {
  %0:2 = attn.relative_attention %q, %q, %q, %pos, %u, %u : (tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>, tensor<2x8x4xbf16>, tensor<2x4xbf16>, tensor<2x4xbf16>) -> (tensor<1x2x8x4xbf16>, tensor<1x2x8xf32>)
  return %0#0, %0#1 : tensor<1x2x8x4xbf16>, tensor<1x2x8xf32>
}

// -----

// CHECK-LABEL: func @shared_qk_attention
// CHECK-SAME: (%[[QK:.+]]: tensor<1x2x64x16xf16>, %[[V:.+]]: tensor<1x2x64x16xf16>)
// CHECK: attn.attention %[[QK]], %[[QK]], %[[V]] {causal = true, shared_qk}
func.func @shared_qk_attention(%qk: tensor<1x2x64x16xf16>,
                               %v: tensor<1x2x64x16xf16>) -> tensor<1x2x64x16xf16> {
  %0 = attn.attention %qk, %qk, %v {causal = true, shared_qk}
      : (tensor<1x2x64x16xf16>, tensor<1x2x64x16xf16>, tensor<1x2x64x16xf16>)
      -> tensor<1x2x64x16xf16>
  return %0 : tensor<1x2x64x16xf16>
}

// -----

// CHECK-LABEL: func @lsh_attention
// CHECK-SAME: (%[[QK:.+]]: tensor<1x8x4096x64xf32>, %[[V:.+]]: tensor<1x8x4096x64xf32>)
// CHECK: attn.lsh_attention %[[QK]], %[[V]] {bucket_size = 64 : i64, causal = true, n_hashes = 4 : i64, seed = 7 : i64}
// CHECK: attn.lsh_attention %[[QK]], %[[V]] {bucket_size = 100 : i64, n_hashes = 1 : i64, scale = 1.250000e-01 : f32}
// CHECK: attn.lsh_attention %[[QK]], %[[V]] {bucket_size = 256 : i64, factorized_hash, n_buckets = 8192 : i64, n_hashes = 1 : i64}
func.func @lsh_attention(%qk: tensor<1x8x4096x64xf32>, %v: tensor<1x8x4096x64xf32>)
    -> (tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>) {
  %0 = attn.lsh_attention %qk, %v
      {n_hashes = 4 : i64, bucket_size = 64 : i64, causal = true, seed = 7 : i64}
      : (tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>) -> tensor<1x8x4096x64xf32>
  // A bucket size that does not divide seq is padded by the lowering.
  %1 = attn.lsh_attention %qk, %v
      {n_hashes = 1 : i64, bucket_size = 100 : i64, scale = 0.125 : f32}
      : (tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>) -> tensor<1x8x4096x64xf32>
  // More buckets than chunks (Hugging Face's num_buckets).
  %2 = attn.lsh_attention %qk, %v
      {n_hashes = 1 : i64, bucket_size = 256 : i64, n_buckets = 8192 : i64, factorized_hash}
      : (tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>) -> tensor<1x8x4096x64xf32>
  return %0, %1, %2 : tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>
}

// -----

// CHECK-LABEL: func @sparse_attention
// CHECK: attn.sparse_attention strided %{{.*}}, %{{.*}}, %{{.*}} {block = 32 : i64, causal = true, stride = 128 : i64}
// CHECK: attn.sparse_attention fixed %{{.*}}, %{{.*}}, %{{.*}} {block = 64 : i64, stride = 128 : i64, summary = 16 : i64}
// GENERIC: "attn.sparse_attention"({{.*}}) <{block = 32 : i64, causal = true, pattern = #attn<sparse_pattern strided>, stride = 128 : i64}>
func.func @sparse_attention(%q: tensor<1x8x1024x64xf32>, %k: tensor<1x8x1024x64xf32>,
                            %v: tensor<1x8x1024x64xf32>)
    -> (tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>) {
  %0 = attn.sparse_attention strided %q, %k, %v
      {block = 32 : i64, stride = 128 : i64, causal = true}
      : (tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>)
      -> tensor<1x8x1024x64xf32>
  %1 = attn.sparse_attention fixed %q, %k, %v
      {block = 64 : i64, stride = 128 : i64, summary = 16 : i64}
      : (tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>)
      -> tensor<1x8x1024x64xf32>
  return %0, %1 : tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>
}

// -----

// CHECK-LABEL: func @routed_attention
// CHECK-SAME: %[[C:[^:]+]]: tensor<8x16x64xf32>
// CHECK: attn.routed_attention %{{.*}}, %{{.*}}, %{{.*}} centroids %[[C]] {clusters = 16 : i64, window = 256 : i64}
// CHECK: attn.routed_attention %{{.*}}, %{{.*}}, %{{.*}} {causal = true, clusters = 4 : i64, seed = 3 : i64, window = 1024 : i64}
func.func @routed_attention(%q: tensor<1x8x1024x64xf32>, %k: tensor<1x8x1024x64xf32>,
                            %v: tensor<1x8x1024x64xf32>, %c: tensor<8x16x64xf32>)
    -> (tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>) {
  %0 = attn.routed_attention %q, %k, %v centroids %c
      {clusters = 16 : i64, window = 256 : i64}
      : (tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>,
         tensor<8x16x64xf32>) -> tensor<1x8x1024x64xf32>
  %1 = attn.routed_attention %q, %k, %v
      {clusters = 4 : i64, window = 1024 : i64, causal = true, seed = 3 : i64}
      : (tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>)
      -> tensor<1x8x1024x64xf32>
  return %0, %1 : tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>
}

// -----

// CHECK-LABEL: func @param_embedding_linear
// CHECK: %[[TABLE:.+]] = attn.param "embed.tokens" : tensor<256x64xf32>
// CHECK: %[[X:.+]] = attn.embedding %{{.*}}, %[[TABLE]] : (tensor<2x16xi32>, tensor<256x64xf32>) -> tensor<2x16x64xf32>
// CHECK: %[[W:.+]] = attn.param "proj.weight" : tensor<64x32xf32>
// CHECK: %[[B:.+]] = attn.param "proj.bias" : tensor<32xf32>
// CHECK: attn.linear %[[X]], %[[W]], %[[B]] : (tensor<2x16x64xf32>, tensor<64x32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
// CHECK: attn.linear %[[X]], %[[W]] : (tensor<2x16x64xf32>, tensor<64x32xf32>) -> tensor<2x16x32xf32>
func.func @param_embedding_linear(%tokens: tensor<2x16xi32>)
    -> (tensor<2x16x32xf32>, tensor<2x16x32xf32>) {
  %table = attn.param "embed.tokens" : tensor<256x64xf32>
  %x = attn.embedding %tokens, %table
      : (tensor<2x16xi32>, tensor<256x64xf32>) -> tensor<2x16x64xf32>
  %w = attn.param "proj.weight" : tensor<64x32xf32>
  %b = attn.param "proj.bias" : tensor<32xf32>
  %0 = attn.linear %x, %w, %b
      : (tensor<2x16x64xf32>, tensor<64x32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  %1 = attn.linear %x, %w : (tensor<2x16x64xf32>, tensor<64x32xf32>) -> tensor<2x16x32xf32>
  return %0, %1 : tensor<2x16x32xf32>, tensor<2x16x32xf32>
}

// -----

// CHECK-LABEL: func @layer_norm
// CHECK: attn.layer_norm %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
// CHECK: attn.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 9.99999997E-7 : f32}
func.func @layer_norm(%x: tensor<2x16x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>)
    -> (tensor<2x16x64xf32>, tensor<2x16x64xf32>) {
  %0 = attn.layer_norm %x, %g, %b
      : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  %1 = attn.layer_norm %x, %g, %b {epsilon = 1.0e-6 : f32}
      : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  return %0, %1 : tensor<2x16x64xf32>, tensor<2x16x64xf32>
}

// -----

// CHECK-LABEL: func @multi_head_attention
// CHECK: attn.multi_head_attention %{{.*}}, query %{{.*}}, key %{{.*}}, value %{{.*}}, output %{{.*}} {heads = 4 : i64}
// CHECK-NEXT: ^bb0(%[[Q:.+]]: tensor<1x4x32x16xf32>, %[[K:.+]]: tensor<1x4x32x16xf32>, %[[V:.+]]: tensor<1x4x32x8xf32>):
// CHECK-NEXT: %[[O:.+]] = attn.attention %[[Q]], %[[K]], %[[V]] {causal = true}
// CHECK-NEXT: attn.yield %[[O]] : tensor<1x4x32x8xf32>
func.func @multi_head_attention(%x: tensor<1x32x64xf32>, %wq: tensor<64x64xf32>,
                                %wk: tensor<64x64xf32>, %wv: tensor<64x32xf32>,
                                %wo: tensor<32x64xf32>) -> tensor<1x32x64xf32> {
  %0 = attn.multi_head_attention %x, query %wq, key %wk, value %wv, output %wo
      {heads = 4 : i64}
      : (tensor<1x32x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>,
         tensor<64x32xf32>, tensor<32x64xf32>) -> tensor<1x32x64xf32> {
  ^bb0(%q: tensor<1x4x32x16xf32>, %k: tensor<1x4x32x16xf32>, %v: tensor<1x4x32x8xf32>):
    %o = attn.attention %q, %k, %v {causal = true}
        : (tensor<1x4x32x16xf32>, tensor<1x4x32x16xf32>, tensor<1x4x32x8xf32>)
        -> tensor<1x4x32x8xf32>
    attn.yield %o : tensor<1x4x32x8xf32>
  }
  return %0 : tensor<1x32x64xf32>
}

// -----

// CHECK-LABEL: func @shared_qk_multi_head_attention
// CHECK: attn.multi_head_attention %{{.*}}, query %{{.*}}, value %{{.*}}, output %{{.*}} {heads = 2 : i64}
// CHECK-NEXT: ^bb0(%[[QK:.+]]: tensor<1x2x32x32xf32>, %[[V:.+]]: tensor<1x2x32x32xf32>):
// CHECK-NEXT: attn.lsh_attention %[[QK]], %[[V]]
func.func @shared_qk_multi_head_attention(%x: tensor<1x32x64xf32>, %wq: tensor<64x64xf32>,
                                          %wv: tensor<64x64xf32>, %wo: tensor<64x64xf32>)
    -> tensor<1x32x64xf32> {
  %0 = attn.multi_head_attention %x, query %wq, value %wv, output %wo {heads = 2 : i64}
      : (tensor<1x32x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>)
      -> tensor<1x32x64xf32> {
  ^bb0(%qk: tensor<1x2x32x32xf32>, %v: tensor<1x2x32x32xf32>):
    %o = attn.lsh_attention %qk, %v {n_hashes = 2 : i64, bucket_size = 8 : i64}
        : (tensor<1x2x32x32xf32>, tensor<1x2x32x32xf32>) -> tensor<1x2x32x32xf32>
    attn.yield %o : tensor<1x2x32x32xf32>
  }
  return %0 : tensor<1x32x64xf32>
}

// -----

// CHECK-LABEL: func @feed_forward
// CHECK: attn.feed_forward gelu %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<1x32x64xf32>, tensor<64x256xf32>, tensor<256xf32>, tensor<256x64xf32>, tensor<64xf32>) -> tensor<1x32x64xf32>
// CHECK: attn.feed_forward relu %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {chunks = 4 : i64}
func.func @feed_forward(%x: tensor<1x32x64xf32>, %w1: tensor<64x256xf32>, %b1: tensor<256xf32>,
                        %w2: tensor<256x64xf32>, %b2: tensor<64xf32>)
    -> (tensor<1x32x64xf32>, tensor<1x32x64xf32>) {
  %0 = attn.feed_forward gelu %x, %w1, %b1, %w2, %b2
      : (tensor<1x32x64xf32>, tensor<64x256xf32>, tensor<256xf32>, tensor<256x64xf32>,
         tensor<64xf32>) -> tensor<1x32x64xf32>
  %1 = attn.feed_forward relu %x, %w1, %b1, %w2, %b2 {chunks = 4 : i64}
      : (tensor<1x32x64xf32>, tensor<64x256xf32>, tensor<256xf32>, tensor<256x64xf32>,
         tensor<64xf32>) -> tensor<1x32x64xf32>
  return %0, %1 : tensor<1x32x64xf32>, tensor<1x32x64xf32>
}

// -----

// CHECK-LABEL: func @residual
// CHECK: %[[R:.+]] = attn.residual %{{.*}} : tensor<1x32x64xf32> {
// CHECK-NEXT: ^bb0(%[[A:.+]]: tensor<1x32x64xf32>):
// CHECK-NEXT: %[[N:.+]] = attn.layer_norm %[[A]]
// CHECK-NEXT: attn.yield %[[N]] : tensor<1x32x64xf32>
// CHECK-NEXT: }
func.func @residual(%x: tensor<1x32x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>)
    -> tensor<1x32x64xf32> {
  %0 = attn.residual %x : tensor<1x32x64xf32> {
  ^bb0(%a: tensor<1x32x64xf32>):
    %n = attn.layer_norm %a, %g, %b
        : (tensor<1x32x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x32x64xf32>
    attn.yield %n : tensor<1x32x64xf32>
  }
  return %0 : tensor<1x32x64xf32>
}

// -----

// CHECK-LABEL: func @reversible
// CHECK: %[[Y1:.+]], %[[Y2:.+]] = attn.reversible %{{.*}}, %{{.*}} : tensor<1x32x64xf32>, tensor<1x32x64xf32> f {
// CHECK: attn.layer_norm
// CHECK: } g {
// CHECK: attn.feed_forward relu
// CHECK: }
// CHECK: return %[[Y1]], %[[Y2]]
// CHECK: }
func.func @reversible(%x1: tensor<1x32x64xf32>, %x2: tensor<1x32x64xf32>,
                      %g: tensor<64xf32>, %b: tensor<64xf32>, %w1: tensor<64x128xf32>,
                      %b1: tensor<128xf32>, %w2: tensor<128x64xf32>)
    -> (tensor<1x32x64xf32>, tensor<1x32x64xf32>) {
  %y:2 = attn.reversible %x1, %x2 : tensor<1x32x64xf32>, tensor<1x32x64xf32> f {
  ^bb0(%a: tensor<1x32x64xf32>):
    %n = attn.layer_norm %a, %g, %b
        : (tensor<1x32x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x32x64xf32>
    attn.yield %n : tensor<1x32x64xf32>
  } g {
  ^bb0(%a: tensor<1x32x64xf32>):
    %f = attn.feed_forward relu %a, %w1, %b1, %w2, %b
        : (tensor<1x32x64xf32>, tensor<64x128xf32>, tensor<128xf32>, tensor<128x64xf32>,
           tensor<64xf32>) -> tensor<1x32x64xf32>
    attn.yield %f : tensor<1x32x64xf32>
  }
  return %y#0, %y#1 : tensor<1x32x64xf32>, tensor<1x32x64xf32>
}

// -----

// CHECK-LABEL: func @softmax_cross_entropy
// CHECK: attn.softmax_cross_entropy %{{.*}}, %{{.*}} : (tensor<2x16x256xf32>, tensor<2x16xi64>) -> tensor<f32>
func.func @softmax_cross_entropy(%logits: tensor<2x16x256xf32>, %labels: tensor<2x16xi64>)
    -> tensor<f32> {
  %0 = attn.softmax_cross_entropy %logits, %labels
      : (tensor<2x16x256xf32>, tensor<2x16xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Transformer-XL attention: a segment of 8 queries after a memory of 8.
// CHECK-LABEL: func @relative_attention
// CHECK: attn.relative_attention %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : (tensor<1x2x8x4xf32>, tensor<1x2x16x4xf32>, tensor<1x2x16x4xf32>, tensor<2x16x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<1x2x8x4xf32>
// CHECK: attn.relative_attention {{.*}} {clamp_len = 10 : i64, same_length = 8 : i64, scale = 5.000000e-01 : f32}
// GENERIC: "attn.relative_attention"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{clamp_len = 10 : i64, same_length = 8 : i64, scale = 5.000000e-01 : f32}>
func.func @relative_attention(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x16x4xf32>,
                              %pos: tensor<2x16x4xf32>, %u: tensor<2x4xf32>)
    -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) {
  %0 = attn.relative_attention %q, %k, %k, %pos, %u, %u
      : (tensor<1x2x8x4xf32>, tensor<1x2x16x4xf32>, tensor<1x2x16x4xf32>,
         tensor<2x16x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<1x2x8x4xf32>
  %1 = attn.relative_attention %q, %k, %k, %pos, %u, %u
      {clamp_len = 10 : i64, same_length = 8 : i64, scale = 0.5 : f32}
      : (tensor<1x2x8x4xf32>, tensor<1x2x16x4xf32>, tensor<1x2x16x4xf32>,
         tensor<2x16x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<1x2x8x4xf32>
  // CHECK: attn.relative_attention {{.*}} -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
  %2:2 = attn.relative_attention %q, %k, %k, %pos, %u, %u
      : (tensor<1x2x8x4xf32>, tensor<1x2x16x4xf32>, tensor<1x2x16x4xf32>,
         tensor<2x16x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
  return %0, %1 : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>
}

// -----

// Adaptive span: a segment of 8 queries after a memory of 8, one z per head.
// CHECK-LABEL: func @adaptive_span_attention
// CHECK: attn.adaptive_span_attention %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {causal = true, max_span = 16 : i64} : (tensor<1x2x8x4xf32>, tensor<1x2x16x4xf32>, tensor<1x2x16x4xf32>, tensor<2xf32>) -> tensor<1x2x8x4xf32>
// CHECK: attn.adaptive_span_attention {{.*}} {max_span = 12 : i64, ramp = 4 : i64, scale = 5.000000e-01 : f32} {{.*}} -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
// GENERIC: "attn.adaptive_span_attention"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{causal = true, max_span = 16 : i64, ramp = 32 : i64}>
func.func @adaptive_span_attention(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x16x4xf32>,
                                   %z: tensor<2xf32>) -> tensor<1x2x8x4xf32> {
  %0 = attn.adaptive_span_attention %q, %k, %k, %z {max_span = 16 : i64, causal = true}
      : (tensor<1x2x8x4xf32>, tensor<1x2x16x4xf32>, tensor<1x2x16x4xf32>,
         tensor<2xf32>) -> tensor<1x2x8x4xf32>
  %1:2 = attn.adaptive_span_attention %q, %k, %k, %z
      {max_span = 12 : i64, ramp = 4 : i64, scale = 0.5 : f32}
      : (tensor<1x2x8x4xf32>, tensor<1x2x16x4xf32>, tensor<1x2x16x4xf32>,
         tensor<2xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
  return %0 : tensor<1x2x8x4xf32>
}

// -----

// Compressive memory: the evicted memory compressed 4 to 1, and a value
// the train step treats as a constant.
// CHECK-LABEL: func @compress
// CHECK: attn.compress %{{.+}}, %{{.+}}, %{{.+}} {rate = 4 : i64} : (tensor<1x16x8xf32>, tensor<4x8x6xf32>, tensor<6xf32>) -> tensor<1x4x6xf32>
// CHECK: attn.stop_gradient %{{.+}} : tensor<1x4x6xf32>
// GENERIC: "attn.compress"(%{{.*}}, %{{.*}}, %{{.*}}) <{rate = 4 : i64}>
// GENERIC: "attn.stop_gradient"(%{{.*}})
func.func @compress(%x: tensor<1x16x8xf32>, %w: tensor<4x8x6xf32>,
                    %b: tensor<6xf32>) -> tensor<1x4x6xf32> {
  %0 = attn.compress %x, %w, %b {rate = 4 : i64}
      : (tensor<1x16x8xf32>, tensor<4x8x6xf32>, tensor<6xf32>) -> tensor<1x4x6xf32>
  %1 = attn.stop_gradient %0 : tensor<1x4x6xf32>
  return %1 : tensor<1x4x6xf32>
}

// -----

// CHECK-LABEL: func @sinusoidal_encoding
// CHECK: attn.sinusoidal_encoding : tensor<16x8xf32>
// GENERIC: "attn.sinusoidal_encoding"() : () -> tensor<16x8xf32>
func.func @sinusoidal_encoding() -> tensor<16x8xf32> {
  %0 = attn.sinusoidal_encoding : tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}
