// RUN: lcc-opt %s --split-input-file --attn-lower-to-linalg="query-tile=32 key-tile=16" --verify-diagnostics | FileCheck %s
// RUN: not lcc-opt %s --split-input-file --attn-lower-to-linalg="query-tile=32 key-tile=15" 2>&1 | FileCheck %s --check-prefix=ODD-TILE
// ODD-TILE: error: 'attn.attention' op bf16 attention multiplies keys in pairs; key-tile 15 is odd
// RUN: not lcc-opt %s --split-input-file --attn-lower-to-linalg="query-tile=31 key-tile=16" 2>&1 | FileCheck %s --check-prefix=ODD-QUERY-TILE
// ODD-QUERY-TILE: error: 'attn.attention_backward' op bf16 attention's backward multiplies queries in pairs; query-tile 31 is odd

// bf16 attention takes the flash form with both products on bf16 accumulated
// in f32, A by rows of the summed dimension and B in pairs of it: the
// values are transposed once, each query tile scaled (in f32) and put in
// pairs of head_dim for k·qᵀ, each block of probabilities rounded to bf16
// pairs of keys for vᵀ·pᵀ, which accumulates the output transposed; the
// softmax state is f32 and the output is transposed back and rounded at
// the end.
// CHECK-DAG: #[[VT:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
// CHECK-DAG: #[[A_ROWS:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[B_PAIRS:.+]] = affine_map<(d0, d1, d2, d3) -> (d2, d1, d3)>
// CHECK-DAG: #[[C:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
// CHECK-DAG: #[[BACK:.+]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-LABEL: func @bf16_attention
// CHECK: %[[VALUES:.+]] = linalg.generic {indexing_maps = [#[[VT]], {{.+}}outs({{.+}} : tensor<1x1x16x64xbf16>)
// CHECK: scf.forall
// CHECK: tensor.expand_shape %{{.+}} {{\[\[}}0], [1, 2]] output_shape [32, 16, 2] : tensor<32x32xbf16> into tensor<32x16x2xbf16>
// CHECK: arith.extf %{{.+}} : bf16 to f32
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: } -> tensor<16x32x2xbf16>
// CHECK: scf.for {{.+}} -> (tensor<32xf32>, tensor<32xf32>, tensor<16x32xf32>)
// CHECK: %[[VBLOCK:.+]] = tensor.extract_slice %[[VALUES]]{{.+}} [1, 1, 16, 16] [1, 1, 1, 1] : tensor<1x1x16x64xbf16> to tensor<16x16xbf16>
// CHECK: linalg.generic {indexing_maps = [#[[A_ROWS]], #[[B_PAIRS]], #[[C]]], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins({{.+}} : tensor<16x16x2xbf16>, tensor<16x32x2xbf16>) outs({{.+}} : tensor<16x32xf32>)
// CHECK: math.exp
// CHECK: tensor.expand_shape %[[VBLOCK]] {{\[\[}}0], [1, 2]] output_shape [16, 8, 2] : tensor<16x16xbf16> into tensor<16x8x2xbf16>
// CHECK: } -> tensor<8x32x2xbf16>
// CHECK: linalg.generic {indexing_maps = [#[[A_ROWS]], #[[B_PAIRS]], #[[C]]], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins({{.+}} : tensor<16x8x2xbf16>, tensor<8x32x2xbf16>) outs({{.+}} : tensor<16x32xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[BACK]],
// CHECK: arith.divf
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: } -> tensor<32x16xbf16>
func.func @bf16_attention(%q: tensor<1x1x64x32xbf16>, %k: tensor<1x1x64x32xbf16>, %v: tensor<1x1x64x16xbf16>) -> tensor<1x1x64x16xbf16> {
  %0 = attn.attention %q, %k, %v : (tensor<1x1x64x32xbf16>, tensor<1x1x64x32xbf16>, tensor<1x1x64x16xbf16>) -> tensor<1x1x64x16xbf16>
  return %0 : tensor<1x1x64x16xbf16>
}

// -----

// bf16 attention's backward (FlashAttention-2's, from the saved f32
// logsumexp) runs its five products on bf16 pairs with f32 sums: per key
// tile over the query tiles, q·kᵀ and do·vᵀ (B in pairs of head_dim, the
// keys and values put in pairs per block), then dk += dsᵀ·q and dv += pᵀ·do
// (ds and p rounded to bf16 in pairs of queries); per query tile over the
// key tiles, dq += ds·k. delta = do·o is summed in f32; the gradients are
// summed in f32 and rounded once at the end.
// CHECK-LABEL: func @bf16_backward
// CHECK: arith.extf %{{.+}} : bf16 to f32
// CHECK: scf.forall {{.+}} -> (tensor<1x1x64x32xf32>, tensor<1x1x64x16xf32>)
// CHECK: ins(%{{.+}}, %{{.+}} : tensor<32x16x2xbf16>, tensor<16x16x2xbf16>) outs(%{{.+}} : tensor<32x16xf32>)
// CHECK: ins(%{{.+}}, %{{.+}} : tensor<32x8x2xbf16>, tensor<8x16x2xbf16>) outs(%{{.+}} : tensor<32x16xf32>)
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: ins(%{{.+}}, %{{.+}} : tensor<16x16x2xbf16>, tensor<16x32x2xbf16>) outs(%{{.+}} : tensor<16x32xf32>)
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: ins(%{{.+}}, %{{.+}} : tensor<16x16x2xbf16>, tensor<16x16x2xbf16>) outs(%{{.+}} : tensor<16x16xf32>)
// CHECK: scf.forall {{.+}} -> (tensor<1x1x64x32xf32>)
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: ins(%{{.+}}, %{{.+}} : tensor<32x8x2xbf16>, tensor<8x32x2xbf16>) outs(%{{.+}} : tensor<32x32xf32>)
// CHECK-COUNT-3: arith.truncf %{{.+}} : f32 to bf16
// CHECK: return
func.func @bf16_backward(%q: tensor<1x1x64x32xbf16>, %k: tensor<1x1x64x32xbf16>, %v: tensor<1x1x64x16xbf16>, %o: tensor<1x1x64x16xbf16>, %lse: tensor<1x1x64xf32>, %do: tensor<1x1x64x16xbf16>) -> (tensor<1x1x64x32xbf16>, tensor<1x1x64x32xbf16>, tensor<1x1x64x16xbf16>) {
  %dq, %dk, %dv = attn.attention_backward %q, %k, %v, %o, %lse, %do
      : (tensor<1x1x64x32xbf16>, tensor<1x1x64x32xbf16>, tensor<1x1x64x16xbf16>, tensor<1x1x64x16xbf16>, tensor<1x1x64xf32>, tensor<1x1x64x16xbf16>)
      -> (tensor<1x1x64x32xbf16>, tensor<1x1x64x32xbf16>, tensor<1x1x64x16xbf16>)
  return %dq, %dk, %dv : tensor<1x1x64x32xbf16>, tensor<1x1x64x32xbf16>, tensor<1x1x64x16xbf16>
}

// -----

// Transformer-XL attention in bf16: q + u and (q + w) * scale summed in f32
// and rounded once; the table of 32 + 48 - 1 distances, one more row for the
// bands of 32 + 16 - 1 rounded up to 48 (whole m16 tiles); (q + w) * scale
// laid out once in pairs of head_dim; each tile pair's band product on
// bf16 pairs with f32 sums, added to the f32 scores.
// CHECK-LABEL: func @bf16_relative
// CHECK: ins(%arg0, %arg3 : tensor<1x1x32x16xbf16>, tensor<1x16xbf16>)
// CHECK: arith.extf
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: } -> tensor<1x80x16xbf16>
// CHECK: } -> tensor<1x1x8x32x2xbf16>
// CHECK: scf.for
// CHECK: tensor.extract_slice %{{.+}} [1, 48, 16] [1, 1, 1] : tensor<1x80x16xbf16> to tensor<48x16xbf16>
// CHECK: tensor.extract_slice %{{.+}} [1, 1, 8, 32, 2] [1, 1, 1, 1, 1] : tensor<1x1x8x32x2xbf16> to tensor<8x32x2xbf16>
// CHECK: ins(%{{.+}}, %{{.+}} : tensor<48x8x2xbf16>, tensor<8x32x2xbf16>) outs(%{{.+}} : tensor<48x32xf32>)
func.func @bf16_relative(%q: tensor<1x1x32x16xbf16>, %k: tensor<1x1x48x16xbf16>, %pos: tensor<1x48x16xbf16>, %u: tensor<1x16xbf16>) -> (tensor<1x1x32x16xbf16>, tensor<1x1x32xf32>) {
  %o, %lse = attn.relative_attention %q, %k, %k, %pos, %u, %u
      : (tensor<1x1x32x16xbf16>, tensor<1x1x48x16xbf16>, tensor<1x1x48x16xbf16>, tensor<1x48x16xbf16>, tensor<1x16xbf16>, tensor<1x16xbf16>) -> (tensor<1x1x32x16xbf16>, tensor<1x1x32xf32>)
  return %o, %lse : tensor<1x1x32x16xbf16>, tensor<1x1x32xf32>
}

// -----

// Its backward: the gradients summed in f32 (the table's too), the band's
// three products on bf16 pairs: the band's scores, the band's gradient
// (summed over the query tile) and the queries' (summed over the band's 48
// rows).
// CHECK-LABEL: func @bf16_relative_backward
// CHECK: scf.forall {{.+}} -> (tensor<1x1x32x16xf32>, tensor<1x1x16xf32>, tensor<1x1x16xf32>, tensor<1x1x80x16xf32>)
// CHECK: ins(%{{.+}}, %{{.+}} : tensor<48x8x2xbf16>, tensor<8x32x2xbf16>) outs(%{{.+}} : tensor<48x32xf32>)
// CHECK: ins(%{{.+}}, %{{.+}} : tensor<48x16x2xbf16>, tensor<16x16x2xbf16>) outs(%{{.+}} : tensor<48x16xf32>)
// CHECK: ins(%{{.+}}, %{{.+}} : tensor<32x24x2xbf16>, tensor<24x16x2xbf16>) outs(%{{.+}} : tensor<32x16xf32>)
// CHECK: return
func.func @bf16_relative_backward(%q: tensor<1x1x32x16xbf16>, %k: tensor<1x1x48x16xbf16>, %pos: tensor<1x48x16xbf16>, %u: tensor<1x16xbf16>, %lse: tensor<1x1x32xf32>) -> (tensor<1x1x32x16xbf16>, tensor<1x48x16xbf16>, tensor<1x16xbf16>) {
  %g:6 = attn.relative_attention_backward %q, %k, %k, %pos, %u, %u, %q, %lse, %q
      : (tensor<1x1x32x16xbf16>, tensor<1x1x48x16xbf16>, tensor<1x1x48x16xbf16>, tensor<1x48x16xbf16>, tensor<1x16xbf16>, tensor<1x16xbf16>, tensor<1x1x32x16xbf16>, tensor<1x1x32xf32>, tensor<1x1x32x16xbf16>)
      -> (tensor<1x1x32x16xbf16>, tensor<1x1x48x16xbf16>, tensor<1x1x48x16xbf16>, tensor<1x48x16xbf16>, tensor<1x16xbf16>, tensor<1x16xbf16>)
  return %g#0, %g#3, %g#5 : tensor<1x1x32x16xbf16>, tensor<1x48x16xbf16>, tensor<1x16xbf16>
}

// -----

func.func @odd_value_dim(%q: tensor<1x1x64x32xbf16>, %v: tensor<1x1x64x15xbf16>, %lse: tensor<1x1x64xf32>) -> tensor<1x1x64x15xbf16> {
  // expected-error @below {{'attn.attention_backward' op bf16 attention's backward multiplies the values' head_dim in pairs; it is 15, odd}}
  %dq, %dk, %dv = attn.attention_backward %q, %q, %v, %v, %lse, %v
      : (tensor<1x1x64x32xbf16>, tensor<1x1x64x32xbf16>, tensor<1x1x64x15xbf16>, tensor<1x1x64x15xbf16>, tensor<1x1x64xf32>, tensor<1x1x64x15xbf16>)
      -> (tensor<1x1x64x32xbf16>, tensor<1x1x64x32xbf16>, tensor<1x1x64x15xbf16>)
  return %dv : tensor<1x1x64x15xbf16>
}

// -----

func.func @odd_head_dim(%q: tensor<1x1x64x15xbf16>, %v: tensor<1x1x64x16xbf16>) -> tensor<1x1x64x16xbf16> {
  // expected-error @below {{'attn.attention' op bf16 attention multiplies head_dim in pairs; head_dim 15 is odd}}
  %0 = attn.attention %q, %q, %v : (tensor<1x1x64x15xbf16>, tensor<1x1x64x15xbf16>, tensor<1x1x64x16xbf16>) -> tensor<1x1x64x16xbf16>
  return %0 : tensor<1x1x64x16xbf16>
}

// -----

// Shared QK in bf16: the keys, the unit queries, are normalised with the
// sum of squares in f32 and rounded once; a token's own score is -1e5 on
// the f32 scores.
// CHECK-LABEL: func @shared_qk
// CHECK-DAG: %[[SELF:.+]] = arith.constant -1.000000e+05 : f32
// CHECK: ins(%arg0 : tensor<1x1x64x16xbf16>) outs(%{{.+}} : tensor<1x1x64xf32>)
// CHECK: arith.extf %{{.+}} : bf16 to f32
// CHECK: math.rsqrt
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: } -> tensor<1x1x64x16xbf16>
// CHECK: scf.forall
// CHECK: arith.select %{{.+}}, %[[SELF]], %{{.+}} : f32
func.func @shared_qk(%qk: tensor<1x1x64x16xbf16>, %v: tensor<1x1x64x16xbf16>) -> tensor<1x1x64x16xbf16> {
  %0 = attn.attention %qk, %qk, %v {shared_qk} : (tensor<1x1x64x16xbf16>, tensor<1x1x64x16xbf16>, tensor<1x1x64x16xbf16>) -> tensor<1x1x64x16xbf16>
  return %0 : tensor<1x1x64x16xbf16>
}

// -----

// f16 attention is computed as bf16 is; f16 elsewhere is named as f16.
// CHECK-LABEL: func @f16_shared_qk
// CHECK: arith.truncf %{{.+}} : f32 to f16
// CHECK: } -> tensor<1x1x64x16xf16>
func.func @f16_shared_qk(%q: tensor<1x1x64x16xf16>) -> tensor<1x1x64x16xf16> {
  %0 = attn.attention %q, %q, %q {shared_qk} : (tensor<1x1x64x16xf16>, tensor<1x1x64x16xf16>, tensor<1x1x64x16xf16>) -> tensor<1x1x64x16xf16>
  return %0 : tensor<1x1x64x16xf16>
}

// -----

// LSH attention in bf16: tokens hashed widened to f32; keys (the unit
// queries) and queries (times the scale) gathered in f32 and rounded once;
// a chunk's k·(q·scale)ᵀ and p·v on bf16 pairs with f32 sums; each
// round's outputs f32, combined in f32 and rounded at the end.
// CHECK-LABEL: func @bf16_lsh
// CHECK: ins(%{{.+}} : tensor<2x64x16xbf16>) outs(%{{.+}} : tensor<2x64xf32>)
// CHECK: scf.forall
// CHECK: ins(%{{.+}} : tensor<16x16xbf16>) outs(%{{.+}} : tensor<16x16xf32>)
// CHECK: scf.forall
// CHECK: scf.forall {{.+}} -> (tensor<2x2x64x8xf32>, tensor<2x2x64xf32>)
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: } -> tensor<64x16xbf16>
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: } -> tensor<80x16xbf16>
// CHECK: } -> tensor<80x8xbf16>
// CHECK: ins(%{{.+}}, %{{.+}} : tensor<32x8x2xbf16>, tensor<8x16x2xbf16>) outs(%{{.+}} : tensor<32x16xf32>)
// CHECK: ins(%{{.+}}, %{{.+}} : tensor<16x16x2xbf16>, tensor<16x8x2xbf16>) outs(%{{.+}} : tensor<16x8xf32>)
// CHECK: outs(%{{.+}} : tensor<2x64x8xf32>)
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: } -> tensor<2x64x8xbf16>
// CHECK: return
func.func @bf16_lsh(%qk: tensor<1x2x64x16xbf16>, %v: tensor<1x2x64x8xbf16>) -> tensor<1x2x64x8xbf16> {
  %0 = attn.lsh_attention %qk, %v {n_hashes = 2 : i64, bucket_size = 16 : i64, causal = true}
      : (tensor<1x2x64x16xbf16>, tensor<1x2x64x8xbf16>) -> tensor<1x2x64x8xbf16>
  return %0 : tensor<1x2x64x8xbf16>
}

// -----

// Its backward: the chunk's five products on bf16 pairs (p, ds and the
// output's gradient rounded for them), every gradient summed in f32 and
// rounded once at the end.
// CHECK-LABEL: func @bf16_lsh_backward
// CHECK: scf.forall {{.+}} -> (tensor<2x2x64x16xf32>, tensor<2x2x64x16xf32>, tensor<2x2x64x16xf32>, tensor<2x2x64x8xf32>, tensor<2x2x64x8xf32>)
// CHECK: ins(%{{.+}}, %{{.+}} : tensor<16x8x2xbf16>, tensor<8x32x2xbf16>) outs(%{{.+}} : tensor<16x32xf32>)
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: ins(%{{.+}}, %{{.+}} : tensor<16x4x2xbf16>, tensor<4x32x2xbf16>) outs(%{{.+}} : tensor<16x32xf32>)
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: ins(%{{.+}}, %{{.+}} : tensor<16x16x2xbf16>, tensor<16x16x2xbf16>) outs(%{{.+}} : tensor<16x16xf32>)
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: ins(%{{.+}}, %{{.+}} : tensor<32x8x2xbf16>, tensor<8x16x2xbf16>) outs(%{{.+}} : tensor<32x16xf32>)
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: ins(%{{.+}}, %{{.+}} : tensor<32x8x2xbf16>, tensor<8x8x2xbf16>) outs(%{{.+}} : tensor<32x8xf32>)
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: } -> tensor<2x64x16xbf16>
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: } -> tensor<2x64x8xbf16>
// CHECK: return
func.func @bf16_lsh_backward(%qk: tensor<1x2x64x16xbf16>, %v: tensor<1x2x64x8xbf16>, %o: tensor<1x2x64x8xbf16>, %do: tensor<1x2x64x8xbf16>)
    -> (tensor<1x2x64x16xbf16>, tensor<1x2x64x8xbf16>) {
  %g:2 = attn.lsh_attention_backward %qk, %v, %o, %do {n_hashes = 2 : i64, bucket_size = 16 : i64, causal = true}
      : (tensor<1x2x64x16xbf16>, tensor<1x2x64x8xbf16>, tensor<1x2x64x8xbf16>, tensor<1x2x64x8xbf16>) -> (tensor<1x2x64x16xbf16>, tensor<1x2x64x8xbf16>)
  return %g#0, %g#1 : tensor<1x2x64x16xbf16>, tensor<1x2x64x8xbf16>
}

// -----

func.func @bf16_lsh_odd_bucket(%qk: tensor<1x2x60x16xbf16>, %v: tensor<1x2x60x8xbf16>, %o: tensor<1x2x60x8xbf16>, %do: tensor<1x2x60x8xbf16>)
    -> (tensor<1x2x60x16xbf16>, tensor<1x2x60x8xbf16>) {
  // expected-error @below {{'attn.lsh_attention_backward' op bf16 LSH attention's backward multiplies a chunk's queries in pairs; bucket_size 15 is odd}}
  %g:2 = attn.lsh_attention_backward %qk, %v, %o, %do {n_hashes = 2 : i64, bucket_size = 15 : i64}
      : (tensor<1x2x60x16xbf16>, tensor<1x2x60x8xbf16>, tensor<1x2x60x8xbf16>, tensor<1x2x60x8xbf16>) -> (tensor<1x2x60x16xbf16>, tensor<1x2x60x8xbf16>)
  return %g#0, %g#1 : tensor<1x2x60x16xbf16>, tensor<1x2x60x8xbf16>
}

// -----

// Routed attention in bf16: the tokens and centroids routed widened to
// f32 (unit rows, cosines); a tile's scores against a cluster's window
// and p·v on bf16 pairs with f32 sums; the outputs f32 until the result
// is rounded once.
// CHECK-LABEL: func @bf16_routed
// CHECK: ins(%{{.+}} : tensor<1x2x64x16xbf16>) outs(%{{.+}} : tensor<1x2x64x16xf32>)
// CHECK: ins(%{{.+}}, %{{.+}} : tensor<64x8x2xbf16>, tensor<8x16x2xbf16>) outs(%{{.+}} : tensor<64x16xf32>)
// CHECK: ins(%{{.+}}, %{{.+}} : tensor<64x8x2xbf16>, tensor<8x8x2xbf16>) outs(%{{.+}} : tensor<64x8xf32>)
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: } -> tensor<2x64x8xbf16>
// CHECK: return
func.func @bf16_routed(%q: tensor<1x2x64x16xbf16>, %v: tensor<1x2x64x8xbf16>, %c: tensor<2x4x16xbf16>) -> tensor<1x2x64x8xbf16> {
  %0 = attn.routed_attention %q, %q, %v centroids %c {clusters = 4 : i64, window = 16 : i64, causal = true}
      : (tensor<1x2x64x16xbf16>, tensor<1x2x64x16xbf16>, tensor<1x2x64x8xbf16>, tensor<2x4x16xbf16>) -> tensor<1x2x64x8xbf16>
  return %0 : tensor<1x2x64x8xbf16>
}

// -----

// Its backward: do·vᵀ, ds·k, dsᵀ·q and pᵀ·do on bf16 pairs (ds and p
// rounded for them), every gradient summed in f32 and rounded once.
// CHECK-LABEL: func @bf16_routed_backward
// CHECK: ins(%{{.+}}, %{{.+}} : tensor<64x4x2xbf16>, tensor<4x16x2xbf16>) outs(%{{.+}} : tensor<64x16xf32>)
// CHECK: ins(%{{.+}}, %{{.+}} : tensor<64x8x2xbf16>, tensor<8x16x2xbf16>) outs(%{{.+}} : tensor<64x16xf32>)
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: ins(%{{.+}}, %{{.+}} : tensor<16x32x2xbf16>, tensor<32x16x2xbf16>) outs(%{{.+}} : tensor<16x16xf32>)
// CHECK: ins(%{{.+}}, %{{.+}} : tensor<16x32x2xbf16>, tensor<32x8x2xbf16>) outs(%{{.+}} : tensor<16x8xf32>)
// CHECK: return
func.func @bf16_routed_backward(%q: tensor<1x2x64x16xbf16>, %v: tensor<1x2x64x8xbf16>, %do: tensor<1x2x64x8xbf16>)
    -> (tensor<1x2x64x16xbf16>, tensor<1x2x64x16xbf16>, tensor<1x2x64x8xbf16>) {
  %g:3 = attn.routed_attention_backward %q, %q, %v, %do {clusters = 4 : i64, window = 16 : i64}
      : (tensor<1x2x64x16xbf16>, tensor<1x2x64x16xbf16>, tensor<1x2x64x8xbf16>, tensor<1x2x64x8xbf16>) -> (tensor<1x2x64x16xbf16>, tensor<1x2x64x16xbf16>, tensor<1x2x64x8xbf16>)
  return %g#0, %g#1, %g#2 : tensor<1x2x64x16xbf16>, tensor<1x2x64x16xbf16>, tensor<1x2x64x8xbf16>
}

// -----

func.func @bf16_routed_odd_window(%q: tensor<1x2x64x16xbf16>) -> tensor<1x2x64x16xbf16> {
  // expected-error @below {{'attn.routed_attention' op bf16 routed attention multiplies a cluster's window of keys in pairs; window 15 is odd}}
  %0 = attn.routed_attention %q, %q, %q {clusters = 4 : i64, window = 15 : i64}
      : (tensor<1x2x64x16xbf16>, tensor<1x2x64x16xbf16>, tensor<1x2x64x16xbf16>) -> tensor<1x2x64x16xbf16>
  return %0 : tensor<1x2x64x16xbf16>
}

// -----

func.func @bf16_routed_odd_tile(%q: tensor<1x2x45x16xbf16>) -> (tensor<1x2x45x16xbf16>, tensor<1x2x45x16xbf16>, tensor<1x2x45x16xbf16>) {
  // expected-error @below {{'attn.routed_attention_backward' op bf16 routed attention's backward multiplies a tile of queries in pairs; the query seq 45 is odd}}
  %g:3 = attn.routed_attention_backward %q, %q, %q, %q {clusters = 3 : i64, window = 16 : i64}
      : (tensor<1x2x45x16xbf16>, tensor<1x2x45x16xbf16>, tensor<1x2x45x16xbf16>, tensor<1x2x45x16xbf16>) -> (tensor<1x2x45x16xbf16>, tensor<1x2x45x16xbf16>, tensor<1x2x45x16xbf16>)
  return %g#0, %g#1, %g#2 : tensor<1x2x45x16xbf16>, tensor<1x2x45x16xbf16>, tensor<1x2x45x16xbf16>
}

// -----

func.func @bf16_lsh_odd_values(%q: tensor<1x2x64x16xbf16>, %v: tensor<1x2x64x5xbf16>) -> (tensor<1x2x64x16xbf16>, tensor<1x2x64x5xbf16>) {
  // expected-error @below {{'attn.lsh_attention_backward' op bf16 attention's backward multiplies the values' head_dim in pairs; head_dim 5 is odd}}
  %g:2 = attn.lsh_attention_backward %q, %v, %v, %v {n_hashes = 2 : i64, bucket_size = 16 : i64}
      : (tensor<1x2x64x16xbf16>, tensor<1x2x64x5xbf16>, tensor<1x2x64x5xbf16>, tensor<1x2x64x5xbf16>) -> (tensor<1x2x64x16xbf16>, tensor<1x2x64x5xbf16>)
  return %g#0, %g#1 : tensor<1x2x64x16xbf16>, tensor<1x2x64x5xbf16>
}

// -----

func.func @bf16_routed_odd_values(%q: tensor<1x2x64x16xbf16>, %v: tensor<1x2x64x5xbf16>) -> (tensor<1x2x64x16xbf16>, tensor<1x2x64x16xbf16>, tensor<1x2x64x5xbf16>) {
  // expected-error @below {{'attn.routed_attention_backward' op bf16 attention's backward multiplies the values' head_dim in pairs; head_dim 5 is odd}}
  %g:3 = attn.routed_attention_backward %q, %q, %v, %v {clusters = 4 : i64, window = 16 : i64}
      : (tensor<1x2x64x16xbf16>, tensor<1x2x64x16xbf16>, tensor<1x2x64x5xbf16>, tensor<1x2x64x5xbf16>) -> (tensor<1x2x64x16xbf16>, tensor<1x2x64x16xbf16>, tensor<1x2x64x5xbf16>)
  return %g#0, %g#1, %g#2 : tensor<1x2x64x16xbf16>, tensor<1x2x64x16xbf16>, tensor<1x2x64x5xbf16>
}

// -----

func.func @f16_layer_norm(%x: tensor<1x8x16xf16>, %g: tensor<16xf16>, %b: tensor<16xf16>) -> tensor<1x8x16xf16> {
  // expected-error @below {{'attn.layer_norm' op f16 is computed by attn.attention, attn.sparse_attention, attn.adaptive_span_attention, attn.relative_attention, attn.lsh_attention and attn.routed_attention and their backward ops (dense, masked, sparse, adaptive-span, relative, LSH and routed forms) only; give this op f32 tensors}}
  %0 = attn.layer_norm %x, %g, %b : (tensor<1x8x16xf16>, tensor<16xf16>, tensor<16xf16>) -> tensor<1x8x16xf16>
  return %0 : tensor<1x8x16xf16>
}

// -----

func.func @layer_norm(%x: tensor<1x8x16xbf16>, %g: tensor<16xbf16>, %b: tensor<16xbf16>) -> tensor<1x8x16xbf16> {
  // expected-error @below {{'attn.layer_norm' op bf16 is computed by attn.attention, attn.sparse_attention, attn.adaptive_span_attention, attn.relative_attention, attn.lsh_attention and attn.routed_attention and their backward ops (dense, masked, sparse, adaptive-span, relative, LSH and routed forms) only; give this op f32 tensors}}
  %0 = attn.layer_norm %x, %g, %b : (tensor<1x8x16xbf16>, tensor<16xbf16>, tensor<16xbf16>) -> tensor<1x8x16xbf16>
  return %0 : tensor<1x8x16xbf16>
}
