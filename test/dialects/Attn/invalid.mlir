// Every verifier error of the attn dialect, one function per case.
// RUN: lcc-opt %s --split-input-file --verify-diagnostics

func.func @attention_query_rank(%q: tensor<2x8x4xf32>, %k: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x4xf32>) {
  // expected-error@+1 {{'attn.attention' op expected query of rank 4 [batch, heads, seq, head_dim], got rank 3 ('tensor<2x8x4xf32>')}}
  %0 = attn.attention %q, %k, %v : (tensor<2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  return
}

// -----

func.func @attention_value_rank(%q: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x4x1xf32>) {
  // expected-error@+1 {{expected value of rank 4 [batch, heads, seq, head_dim], got rank 5}}
  %0 = attn.attention %q, %q, %v : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4x1xf32>) -> tensor<1x2x8x4xf32>
  return
}

// -----

func.func @attention_key_element_type(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x4xf16>) {
  // expected-error@+1 {{expected key element type 'f32', got 'f16'}}
  %0 = attn.attention %q, %k, %q : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf16>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  return
}

// -----

// The softmax's statistics are f32 on half operands too.
func.func @attention_half_logsumexp(%q: tensor<1x2x8x4xbf16>) {
  // expected-error@+1 {{expected logsumexp element type 'f32', got 'bf16'}}
  %0, %1 = attn.attention %q, %q, %q : (tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>) -> (tensor<1x2x8x4xbf16>, tensor<1x2x8xbf16>)
  return
}

// -----

// A score region works on f32 scores whatever the operands' type.
func.func @attention_half_score_region(%q: tensor<1x2x8x4xbf16>) {
  // expected-error@+1 {{'attn.attention' op expected region 'score' argument #0 of type 'f32', got 'bf16'}}
  %0 = attn.attention %q, %q, %q : (tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>) -> tensor<1x2x8x4xbf16>
      score {
      ^bb0(%s: bf16, %b: index, %h: index, %i: index, %j: index):
        attn.yield %s : bf16
      }
  return
}

// -----

func.func @attention_integer_operand(%q: tensor<1x2x8x4xi32>) {
  // expected-error@+1 {{operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<1x2x8x4xi32>'}}
  %0 = "attn.attention"(%q, %q, %q) {causal = false} : (tensor<1x2x8x4xi32>, tensor<1x2x8x4xi32>, tensor<1x2x8x4xi32>) -> tensor<1x2x8x4xf32>
  return
}

// -----

func.func @attention_key_batch(%q: tensor<1x2x8x4xf32>, %k: tensor<3x2x8x4xf32>, %v: tensor<1x2x8x4xf32>) {
  // expected-error@+1 {{'attn.attention' op expected key batch 1, got 3}}
  %0 = attn.attention %q, %k, %v : (tensor<1x2x8x4xf32>, tensor<3x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  return
}

// -----

func.func @attention_key_heads(%q: tensor<1x2x8x4xf32>, %k: tensor<1x4x8x4xf32>, %v: tensor<1x2x8x4xf32>) {
  // expected-error@+1 {{expected key heads 2, got 4}}
  %0 = attn.attention %q, %k, %v : (tensor<1x2x8x4xf32>, tensor<1x4x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  return
}

// -----

func.func @attention_key_head_dim(%q: tensor<1x2x8x64xf32>, %k: tensor<1x2x8x32xf32>, %v: tensor<1x2x8x64xf32>) {
  // expected-error@+1 {{'attn.attention' op expected key head_dim 64, got 32}}
  %0 = attn.attention %q, %k, %v : (tensor<1x2x8x64xf32>, tensor<1x2x8x32xf32>, tensor<1x2x8x64xf32>) -> tensor<1x2x8x64xf32>
  return
}

// -----

func.func @attention_value_heads(%q: tensor<1x2x8x4xf32>, %v: tensor<1x3x8x4xf32>) {
  // expected-error@+1 {{expected value heads 2, got 3}}
  %0 = attn.attention %q, %q, %v : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x3x8x4xf32>) -> tensor<1x2x8x4xf32>
  return
}

// -----

func.func @attention_value_seq(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x16x4xf32>, %v: tensor<1x2x8x4xf32>) {
  // expected-error@+1 {{expected value seq 16, got 8}}
  %0 = attn.attention %q, %k, %v : (tensor<1x2x8x4xf32>, tensor<1x2x16x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  return
}

// -----

func.func @attention_result_shape(%q: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x6xf32>) {
  // expected-error@+1 {{expected result of shape [1, 2, 8, 6], got [1, 2, 8, 4]}}
  %0 = attn.attention %q, %q, %v : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x6xf32>) -> tensor<1x2x8x4xf32>
  return
}

// -----

func.func @attention_shared_qk_distinct_key(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x4xf32>) {
  // expected-error@+1 {{expected key to be the same value as query when 'shared_qk' is set}}
  %0 = attn.attention %q, %k, %k {shared_qk} : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  return
}

// -----

func.func @attention_negative_scale(%q: tensor<1x2x8x4xf32>) {
  // expected-error@+1 {{expected 'scale' > 0, got -0.5}}
  %0 = attn.attention %q, %q, %q {scale = -0.5 : f32} : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  return
}

// -----

func.func @lsh_zero_hashes(%qk: tensor<1x2x64x4xf32>) {
  // expected-error@+1 {{'attn.lsh_attention' op expected 'n_hashes' >= 1, got 0}}
  %0 = attn.lsh_attention %qk, %qk {n_hashes = 0 : i64, bucket_size = 8 : i64} : (tensor<1x2x64x4xf32>, tensor<1x2x64x4xf32>) -> tensor<1x2x64x4xf32>
  return
}

// -----

func.func @lsh_more_chunks_than_rows(%qk: tensor<1x2x64x4xf32>) {
  // expected-error@+1 {{'attn.lsh_attention' op expected 'chunks' <= batch * heads (2), got 3}}
  %0 = attn.lsh_attention %qk, %qk {n_hashes = 1 : i64, bucket_size = 8 : i64, chunks = 3 : i64} : (tensor<1x2x64x4xf32>, tensor<1x2x64x4xf32>) -> tensor<1x2x64x4xf32>
  return
}

// -----

func.func @lsh_zero_chunks(%qk: tensor<1x2x64x4xf32>) {
  // expected-error@+1 {{'attn.lsh_attention' op expected 'chunks' >= 1, got 0}}
  %0 = attn.lsh_attention %qk, %qk {n_hashes = 1 : i64, bucket_size = 8 : i64, chunks = 0 : i64} : (tensor<1x2x64x4xf32>, tensor<1x2x64x4xf32>) -> tensor<1x2x64x4xf32>
  return
}

// -----

func.func @lsh_negative_bucket_size(%qk: tensor<1x2x64x4xf32>) {
  // expected-error@+1 {{expected 'bucket_size' >= 1, got -8}}
  %0 = attn.lsh_attention %qk, %qk {n_hashes = 1 : i64, bucket_size = -8 : i64} : (tensor<1x2x64x4xf32>, tensor<1x2x64x4xf32>) -> tensor<1x2x64x4xf32>
  return
}

// -----

func.func @lsh_negative_seed(%qk: tensor<1x2x64x4xf32>) {
  // expected-error@+1 {{expected 'seed' >= 0, got -1}}
  %0 = attn.lsh_attention %qk, %qk {n_hashes = 1 : i64, bucket_size = 8 : i64, seed = -1 : i64} : (tensor<1x2x64x4xf32>, tensor<1x2x64x4xf32>) -> tensor<1x2x64x4xf32>
  return
}

// -----

func.func @lsh_value_seq(%qk: tensor<1x2x64x4xf32>, %v: tensor<1x2x32x4xf32>) {
  // expected-error@+1 {{expected value seq 64, got 32}}
  %0 = attn.lsh_attention %qk, %v {n_hashes = 1 : i64, bucket_size = 8 : i64} : (tensor<1x2x64x4xf32>, tensor<1x2x32x4xf32>) -> tensor<1x2x64x4xf32>
  return
}

// -----

func.func @lsh_query_key_rank(%qk: tensor<2x64x4xf32>, %v: tensor<1x2x64x4xf32>) {
  // expected-error@+1 {{expected query_key of rank 4 [batch, heads, seq, head_dim], got rank 3}}
  %0 = attn.lsh_attention %qk, %v {n_hashes = 1 : i64, bucket_size = 8 : i64} : (tensor<2x64x4xf32>, tensor<1x2x64x4xf32>) -> tensor<1x2x64x4xf32>
  return
}

// -----

func.func @sparse_key_seq(%q: tensor<1x2x64x4xf32>, %k: tensor<1x2x32x4xf32>) {
  // expected-error@+1 {{'attn.sparse_attention' op expected key seq 64, got 32}}
  %0 = attn.sparse_attention strided %q, %k, %k {block = 8 : i64, stride = 8 : i64} : (tensor<1x2x64x4xf32>, tensor<1x2x32x4xf32>, tensor<1x2x32x4xf32>) -> tensor<1x2x64x4xf32>
  return
}

// -----

func.func @sparse_zero_block(%q: tensor<1x2x64x4xf32>) {
  // expected-error@+1 {{expected 'block' >= 1, got 0}}
  %0 = attn.sparse_attention strided %q, %q, %q {block = 0 : i64, stride = 8 : i64} : (tensor<1x2x64x4xf32>, tensor<1x2x64x4xf32>, tensor<1x2x64x4xf32>) -> tensor<1x2x64x4xf32>
  return
}

// -----

func.func @sparse_zero_stride(%q: tensor<1x2x64x4xf32>) {
  // expected-error@+1 {{expected 'stride' >= 1, got 0}}
  %0 = attn.sparse_attention strided %q, %q, %q {block = 8 : i64, stride = 0 : i64} : (tensor<1x2x64x4xf32>, tensor<1x2x64x4xf32>, tensor<1x2x64x4xf32>) -> tensor<1x2x64x4xf32>
  return
}

// -----

func.func @sparse_stride_exceeds_seq(%q: tensor<1x2x64x4xf32>) {
  // expected-error@+1 {{'attn.sparse_attention' op expected 'stride' <= seq (64), got 128}}
  %0 = attn.sparse_attention strided %q, %q, %q {block = 8 : i64, stride = 128 : i64} : (tensor<1x2x64x4xf32>, tensor<1x2x64x4xf32>, tensor<1x2x64x4xf32>) -> tensor<1x2x64x4xf32>
  return
}

// -----

func.func @sparse_fixed_without_summary(%q: tensor<1x2x64x4xf32>) {
  // expected-error@+1 {{expected 'summary' for the fixed pattern}}
  %0 = attn.sparse_attention fixed %q, %q, %q {block = 8 : i64, stride = 16 : i64} : (tensor<1x2x64x4xf32>, tensor<1x2x64x4xf32>, tensor<1x2x64x4xf32>) -> tensor<1x2x64x4xf32>
  return
}

// -----

func.func @sparse_summary_exceeds_stride(%q: tensor<1x2x64x4xf32>) {
  // expected-error@+1 {{expected 'summary' <= stride (16), got 32}}
  %0 = attn.sparse_attention fixed %q, %q, %q {block = 8 : i64, stride = 16 : i64, summary = 32 : i64} : (tensor<1x2x64x4xf32>, tensor<1x2x64x4xf32>, tensor<1x2x64x4xf32>) -> tensor<1x2x64x4xf32>
  return
}

// -----

func.func @sparse_zero_summary(%q: tensor<1x2x64x4xf32>) {
  // expected-error@+1 {{expected 'summary' >= 1, got 0}}
  %0 = attn.sparse_attention fixed %q, %q, %q {block = 8 : i64, stride = 16 : i64, summary = 0 : i64} : (tensor<1x2x64x4xf32>, tensor<1x2x64x4xf32>, tensor<1x2x64x4xf32>) -> tensor<1x2x64x4xf32>
  return
}

// -----

func.func @sparse_strided_with_summary(%q: tensor<1x2x64x4xf32>) {
  // expected-error@+1 {{unexpected 'summary' for the strided pattern; it applies to the fixed pattern only}}
  %0 = attn.sparse_attention strided %q, %q, %q {block = 8 : i64, stride = 16 : i64, summary = 4 : i64} : (tensor<1x2x64x4xf32>, tensor<1x2x64x4xf32>, tensor<1x2x64x4xf32>) -> tensor<1x2x64x4xf32>
  return
}

// -----

func.func @sparse_unknown_pattern(%q: tensor<1x2x64x4xf32>) {
  // expected-error@+1 {{custom op 'attn.sparse_attention' expected sparse pattern to be one of 'strided', 'fixed'; got 'dilated'}}
  %0 = attn.sparse_attention dilated %q, %q, %q {block = 8 : i64, stride = 16 : i64} : (tensor<1x2x64x4xf32>, tensor<1x2x64x4xf32>, tensor<1x2x64x4xf32>) -> tensor<1x2x64x4xf32>
  return
}

// -----

func.func @routed_zero_clusters(%q: tensor<1x2x64x4xf32>) {
  // expected-error@+1 {{'attn.routed_attention' op expected 'clusters' >= 1, got 0}}
  %0 = attn.routed_attention %q, %q, %q {clusters = 0 : i64, window = 8 : i64} : (tensor<1x2x64x4xf32>, tensor<1x2x64x4xf32>, tensor<1x2x64x4xf32>) -> tensor<1x2x64x4xf32>
  return
}

// -----

func.func @routed_clusters_exceed_seq(%q: tensor<1x2x64x4xf32>) {
  // expected-error@+1 {{expected 'clusters' <= key seq (64), got 65}}
  %0 = attn.routed_attention %q, %q, %q {clusters = 65 : i64, window = 8 : i64} : (tensor<1x2x64x4xf32>, tensor<1x2x64x4xf32>, tensor<1x2x64x4xf32>) -> tensor<1x2x64x4xf32>
  return
}

// -----

func.func @routed_zero_window(%q: tensor<1x2x64x4xf32>) {
  // expected-error@+1 {{expected 'window' >= 1, got 0}}
  %0 = attn.routed_attention %q, %q, %q {clusters = 4 : i64, window = 0 : i64} : (tensor<1x2x64x4xf32>, tensor<1x2x64x4xf32>, tensor<1x2x64x4xf32>) -> tensor<1x2x64x4xf32>
  return
}

// -----

func.func @routed_window_exceeds_seq(%q: tensor<1x2x64x4xf32>) {
  // expected-error@+1 {{expected 'window' <= key seq (64), got 100}}
  %0 = attn.routed_attention %q, %q, %q {clusters = 4 : i64, window = 100 : i64} : (tensor<1x2x64x4xf32>, tensor<1x2x64x4xf32>, tensor<1x2x64x4xf32>) -> tensor<1x2x64x4xf32>
  return
}

// -----

func.func @routed_centroids_shape(%q: tensor<1x2x64x4xf32>, %c: tensor<2x8x4xf32>) {
  // expected-error@+1 {{expected centroids of shape [2, 4, 4], got [2, 8, 4]}}
  %0 = attn.routed_attention %q, %q, %q centroids %c {clusters = 4 : i64, window = 16 : i64} : (tensor<1x2x64x4xf32>, tensor<1x2x64x4xf32>, tensor<1x2x64x4xf32>, tensor<2x8x4xf32>) -> tensor<1x2x64x4xf32>
  return
}

// -----

func.func @routed_centroids_element_type(%q: tensor<1x2x64x4xf32>, %c: tensor<2x4x4xbf16>) {
  // expected-error@+1 {{expected centroids element type 'f32', got 'bf16'}}
  %0 = attn.routed_attention %q, %q, %q centroids %c {clusters = 4 : i64, window = 16 : i64} : (tensor<1x2x64x4xf32>, tensor<1x2x64x4xf32>, tensor<1x2x64x4xf32>, tensor<2x4x4xbf16>) -> tensor<1x2x64x4xf32>
  return
}

// -----

func.func @param_empty_name() {
  // expected-error@+1 {{'attn.param' op expected a non-empty parameter name}}
  %0 = attn.param "" : tensor<4xf32>
  return
}

// -----

func.func @param_dynamic_shape() {
  // expected-error@+1 {{expected parameter 'w' to have a static shape, got 'tensor<?x4xf32>'}}
  %0 = attn.param "w" : tensor<?x4xf32>
  return
}

// -----

func.func @embedding_tokens_rank(%t: tensor<8xi32>, %table: tensor<16x4xf32>) {
  // expected-error@+1 {{'attn.embedding' op expected tokens of rank 2 [batch, seq], got rank 1}}
  %0 = attn.embedding %t, %table : (tensor<8xi32>, tensor<16x4xf32>) -> tensor<1x8x4xf32>
  return
}

// -----

func.func @embedding_table_rank(%t: tensor<1x8xi32>, %table: tensor<16xf32>) {
  // expected-error@+1 {{expected table of rank 2 [vocab, d_model], got rank 1}}
  %0 = attn.embedding %t, %table : (tensor<1x8xi32>, tensor<16xf32>) -> tensor<1x8x4xf32>
  return
}

// -----

func.func @embedding_result_shape(%t: tensor<1x8xi32>, %table: tensor<16x4xf32>) {
  // expected-error@+1 {{expected result of shape [1, 8, 4], got [1, 8, 16]}}
  %0 = attn.embedding %t, %table : (tensor<1x8xi32>, tensor<16x4xf32>) -> tensor<1x8x16xf32>
  return
}

// -----

func.func @embedding_float_tokens(%t: tensor<1x8xf32>, %table: tensor<16x4xf32>) {
  // expected-error@+1 {{operand #0 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<1x8xf32>'}}
  %0 = attn.embedding %t, %table : (tensor<1x8xf32>, tensor<16x4xf32>) -> tensor<1x8x4xf32>
  return
}

// -----

func.func @layer_norm_gamma_shape(%x: tensor<1x8x4xf32>, %g: tensor<8xf32>, %b: tensor<4xf32>) {
  // expected-error@+1 {{'attn.layer_norm' op expected gamma of shape [4], got [8]}}
  %0 = attn.layer_norm %x, %g, %b : (tensor<1x8x4xf32>, tensor<8xf32>, tensor<4xf32>) -> tensor<1x8x4xf32>
  return
}

// -----

func.func @layer_norm_beta_element_type(%x: tensor<1x8x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error@+1 {{expected beta element type 'f32', got 'f16'}}
  %0 = attn.layer_norm %x, %g, %b : (tensor<1x8x4xf32>, tensor<4xf32>, tensor<4xf16>) -> tensor<1x8x4xf32>
  return
}

// -----

func.func @layer_norm_result_type(%x: tensor<1x8x4xf32>, %g: tensor<4xf32>) {
  // expected-error@+1 {{expected result type 'tensor<1x8x4xf32>', got 'tensor<8x4xf32>'}}
  %0 = attn.layer_norm %x, %g, %g : (tensor<1x8x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  return
}

// -----

func.func @layer_norm_zero_epsilon(%x: tensor<1x8x4xf32>, %g: tensor<4xf32>) {
  // expected-error@+1 {{expected 'epsilon' > 0, got 0}}
  %0 = attn.layer_norm %x, %g, %g {epsilon = 0.0 : f32} : (tensor<1x8x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x8x4xf32>
  return
}

// -----

func.func @layer_norm_scalar_input(%x: tensor<f32>, %g: tensor<4xf32>) {
  // expected-error@+1 {{expected input of rank >= 1 [..., features], got rank 0}}
  %0 = attn.layer_norm %x, %g, %g : (tensor<f32>, tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  return
}

// -----

func.func @linear_weight_rank(%x: tensor<1x8x4xf32>, %w: tensor<4xf32>) {
  // expected-error@+1 {{'attn.linear' op expected weight of rank 2 [in, out], got rank 1}}
  %0 = attn.linear %x, %w : (tensor<1x8x4xf32>, tensor<4xf32>) -> tensor<1x8x4xf32>
  return
}

// -----

func.func @linear_weight_rows(%x: tensor<1x8x4xf32>, %w: tensor<6x2xf32>) {
  // expected-error@+1 {{expected weight rows (input features) 4, got 6}}
  %0 = attn.linear %x, %w : (tensor<1x8x4xf32>, tensor<6x2xf32>) -> tensor<1x8x2xf32>
  return
}

// -----

func.func @linear_bias_shape(%x: tensor<1x8x4xf32>, %w: tensor<4x2xf32>, %b: tensor<4xf32>) {
  // expected-error@+1 {{expected bias of shape [2], got [4]}}
  %0 = attn.linear %x, %w, %b : (tensor<1x8x4xf32>, tensor<4x2xf32>, tensor<4xf32>) -> tensor<1x8x2xf32>
  return
}

// -----

func.func @linear_result_shape(%x: tensor<1x8x4xf32>, %w: tensor<4x2xf32>) {
  // expected-error@+1 {{expected result of shape [1, 8, 2], got [1, 8, 4]}}
  %0 = attn.linear %x, %w : (tensor<1x8x4xf32>, tensor<4x2xf32>) -> tensor<1x8x4xf32>
  return
}

// -----

func.func @mha_input_rank(%x: tensor<8x16xf32>, %w: tensor<16x16xf32>) {
  // expected-error@+1 {{'attn.multi_head_attention' op expected input of rank 3 [batch, seq, d_model], got rank 2}}
  %0 = attn.multi_head_attention %x, query %w, value %w, output %w {heads = 2 : i64}
      : (tensor<8x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<1x8x16xf32> {
  ^bb0(%qk: tensor<1x2x8x8xf32>, %v: tensor<1x2x8x8xf32>):
    attn.yield %v : tensor<1x2x8x8xf32>
  }
  return
}

// -----

func.func @mha_zero_heads(%x: tensor<1x8x16xf32>, %w: tensor<16x16xf32>) {
  // expected-error@+1 {{expected 'heads' >= 1, got 0}}
  %0 = attn.multi_head_attention %x, query %w, value %w, output %w {heads = 0 : i64}
      : (tensor<1x8x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<1x8x16xf32> {
  ^bb0(%qk: tensor<1x2x8x8xf32>, %v: tensor<1x2x8x8xf32>):
    attn.yield %v : tensor<1x2x8x8xf32>
  }
  return
}

// -----

func.func @mha_heads_not_dividing_width(%x: tensor<1x8x16xf32>, %w: tensor<16x16xf32>) {
  // expected-error@+1 {{expected query weight columns (16) to be a multiple of 'heads' (3)}}
  %0 = attn.multi_head_attention %x, query %w, value %w, output %w {heads = 3 : i64}
      : (tensor<1x8x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<1x8x16xf32> {
  ^bb0(%qk: tensor<1x3x8x5xf32>, %v: tensor<1x3x8x5xf32>):
    attn.yield %v : tensor<1x3x8x5xf32>
  }
  return
}

// -----

func.func @mha_query_weight_rows(%x: tensor<1x8x16xf32>, %wq: tensor<12x16xf32>, %w: tensor<16x16xf32>) {
  // expected-error@+1 {{expected query weight rows (d_model) 16, got 12}}
  %0 = attn.multi_head_attention %x, query %wq, value %w, output %w {heads = 2 : i64}
      : (tensor<1x8x16xf32>, tensor<12x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<1x8x16xf32> {
  ^bb0(%qk: tensor<1x2x8x8xf32>, %v: tensor<1x2x8x8xf32>):
    attn.yield %v : tensor<1x2x8x8xf32>
  }
  return
}

// -----

func.func @mha_key_weight_shape(%x: tensor<1x8x16xf32>, %w: tensor<16x16xf32>, %wk: tensor<16x8xf32>) {
  // expected-error@+1 {{expected key weight of shape [16, 16], got [16, 8]}}
  %0 = attn.multi_head_attention %x, query %w, key %wk, value %w, output %w {heads = 2 : i64}
      : (tensor<1x8x16xf32>, tensor<16x16xf32>, tensor<16x8xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<1x8x16xf32> {
  ^bb0(%q: tensor<1x2x8x8xf32>, %k: tensor<1x2x8x8xf32>, %v: tensor<1x2x8x8xf32>):
    attn.yield %v : tensor<1x2x8x8xf32>
  }
  return
}

// -----

func.func @mha_output_weight_rows(%x: tensor<1x8x16xf32>, %w: tensor<16x16xf32>, %wo: tensor<8x16xf32>) {
  // expected-error@+1 {{expected output weight rows (heads * value head_dim) 16, got 8}}
  %0 = attn.multi_head_attention %x, query %w, value %w, output %wo {heads = 2 : i64}
      : (tensor<1x8x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<8x16xf32>) -> tensor<1x8x16xf32> {
  ^bb0(%qk: tensor<1x2x8x8xf32>, %v: tensor<1x2x8x8xf32>):
    attn.yield %v : tensor<1x2x8x8xf32>
  }
  return
}

// -----

func.func @mha_weight_element_type(%x: tensor<1x8x16xf32>, %w: tensor<16x16xf32>, %wv: tensor<16x16xbf16>) {
  // expected-error@+1 {{expected value weight element type 'f32', got 'bf16'}}
  %0 = attn.multi_head_attention %x, query %w, value %wv, output %w {heads = 2 : i64}
      : (tensor<1x8x16xf32>, tensor<16x16xf32>, tensor<16x16xbf16>, tensor<16x16xf32>) -> tensor<1x8x16xf32> {
  ^bb0(%qk: tensor<1x2x8x8xf32>, %v: tensor<1x2x8x8xf32>):
    attn.yield %v : tensor<1x2x8x8xf32>
  }
  return
}

// -----

func.func @mha_result_shape(%x: tensor<1x8x16xf32>, %w: tensor<16x16xf32>) {
  // expected-error@+1 {{expected result of shape [1, 8, 16], got [1, 4, 16]}}
  %0 = attn.multi_head_attention %x, query %w, value %w, output %w {heads = 2 : i64}
      : (tensor<1x8x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<1x4x16xf32> {
  ^bb0(%qk: tensor<1x2x8x8xf32>, %v: tensor<1x2x8x8xf32>):
    attn.yield %v : tensor<1x2x8x8xf32>
  }
  return
}

// -----

func.func @mha_shared_qk_body_arguments(%x: tensor<1x8x16xf32>, %w: tensor<16x16xf32>) {
  // expected-error@+1 {{expected region 'body' to take 2 argument(s), got 3}}
  %0 = attn.multi_head_attention %x, query %w, value %w, output %w {heads = 2 : i64}
      : (tensor<1x8x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<1x8x16xf32> {
  ^bb0(%q: tensor<1x2x8x8xf32>, %k: tensor<1x2x8x8xf32>, %v: tensor<1x2x8x8xf32>):
    attn.yield %v : tensor<1x2x8x8xf32>
  }
  return
}

// -----

func.func @mha_body_head_dim(%x: tensor<1x8x16xf32>, %w: tensor<16x16xf32>) {
  // expected-error@+1 {{expected region 'body' argument #0 of type 'tensor<1x4x8x4xf32>', got 'tensor<1x4x8x8xf32>'}}
  %0 = attn.multi_head_attention %x, query %w, value %w, output %w {heads = 4 : i64}
      : (tensor<1x8x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<1x8x16xf32> {
  ^bb0(%qk: tensor<1x4x8x8xf32>, %v: tensor<1x4x8x4xf32>):
    attn.yield %v : tensor<1x4x8x4xf32>
  }
  return
}

// -----

func.func @mha_body_yield_type(%x: tensor<1x8x16xf32>, %w: tensor<16x16xf32>, %o: tensor<1x2x8x4xf32>) {
  // expected-error@+1 {{expected region 'body' to yield #0 of type 'tensor<1x2x8x8xf32>', got 'tensor<1x2x8x4xf32>'}}
  %0 = attn.multi_head_attention %x, query %w, value %w, output %w {heads = 2 : i64}
      : (tensor<1x8x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<1x8x16xf32> {
  ^bb0(%qk: tensor<1x2x8x8xf32>, %v: tensor<1x2x8x8xf32>):
    attn.yield %o : tensor<1x2x8x4xf32>
  }
  return
}

// -----

func.func @mha_body_yield_count(%x: tensor<1x8x16xf32>, %w: tensor<16x16xf32>) {
  // expected-error@+1 {{expected region 'body' to yield 1 value(s), got 2}}
  %0 = attn.multi_head_attention %x, query %w, value %w, output %w {heads = 2 : i64}
      : (tensor<1x8x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<1x8x16xf32> {
  ^bb0(%qk: tensor<1x2x8x8xf32>, %v: tensor<1x2x8x8xf32>):
    attn.yield %v, %v : tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>
  }
  return
}

// -----

func.func @feed_forward_input_rank(%x: tensor<8x4xf32>, %w1: tensor<4x8xf32>, %b1: tensor<8xf32>, %w2: tensor<8x4xf32>, %b2: tensor<4xf32>) {
  // expected-error@+1 {{'attn.feed_forward' op expected input of rank 3 [batch, seq, d_model], got rank 2}}
  %0 = attn.feed_forward relu %x, %w1, %b1, %w2, %b2 : (tensor<8x4xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  return
}

// -----

func.func @feed_forward_up_weight_rows(%x: tensor<1x8x4xf32>, %w1: tensor<6x8xf32>, %b1: tensor<8xf32>, %w2: tensor<8x4xf32>, %b2: tensor<4xf32>) {
  // expected-error@+1 {{expected up_weight rows (d_model) 4, got 6}}
  %0 = attn.feed_forward relu %x, %w1, %b1, %w2, %b2 : (tensor<1x8x4xf32>, tensor<6x8xf32>, tensor<8xf32>, tensor<8x4xf32>, tensor<4xf32>) -> tensor<1x8x4xf32>
  return
}

// -----

func.func @feed_forward_up_bias_shape(%x: tensor<1x8x4xf32>, %w1: tensor<4x8xf32>, %b1: tensor<4xf32>, %w2: tensor<8x4xf32>, %b2: tensor<4xf32>) {
  // expected-error@+1 {{expected up_bias of shape [8], got [4]}}
  %0 = attn.feed_forward relu %x, %w1, %b1, %w2, %b2 : (tensor<1x8x4xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<8x4xf32>, tensor<4xf32>) -> tensor<1x8x4xf32>
  return
}

// -----

func.func @feed_forward_down_weight_shape(%x: tensor<1x8x4xf32>, %w1: tensor<4x8xf32>, %b1: tensor<8xf32>, %w2: tensor<4x8xf32>, %b2: tensor<4xf32>) {
  // expected-error@+1 {{expected down_weight of shape [8, 4], got [4, 8]}}
  %0 = attn.feed_forward gelu %x, %w1, %b1, %w2, %b2 : (tensor<1x8x4xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<1x8x4xf32>
  return
}

// -----

func.func @feed_forward_result_type(%x: tensor<1x8x4xf32>, %w1: tensor<4x8xf32>, %b1: tensor<8xf32>, %w2: tensor<8x4xf32>, %b2: tensor<4xf32>) {
  // expected-error@+1 {{expected result type 'tensor<1x8x4xf32>', got 'tensor<1x8x8xf32>'}}
  %0 = attn.feed_forward relu %x, %w1, %b1, %w2, %b2 : (tensor<1x8x4xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<8x4xf32>, tensor<4xf32>) -> tensor<1x8x8xf32>
  return
}

// -----

func.func @feed_forward_zero_chunks(%x: tensor<1x8x4xf32>, %w1: tensor<4x8xf32>, %b1: tensor<8xf32>, %w2: tensor<8x4xf32>, %b2: tensor<4xf32>) {
  // expected-error@+1 {{expected 'chunks' >= 1, got 0}}
  %0 = attn.feed_forward relu %x, %w1, %b1, %w2, %b2 {chunks = 0 : i64} : (tensor<1x8x4xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<8x4xf32>, tensor<4xf32>) -> tensor<1x8x4xf32>
  return
}

// -----

func.func @feed_forward_chunks_exceed_seq(%x: tensor<1x8x4xf32>, %w1: tensor<4x8xf32>, %b1: tensor<8xf32>, %w2: tensor<8x4xf32>, %b2: tensor<4xf32>) {
  // expected-error@+1 {{expected 'chunks' <= seq (8), got 16}}
  %0 = attn.feed_forward relu %x, %w1, %b1, %w2, %b2 {chunks = 16 : i64} : (tensor<1x8x4xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<8x4xf32>, tensor<4xf32>) -> tensor<1x8x4xf32>
  return
}

// -----

func.func @feed_forward_unknown_activation(%x: tensor<1x8x4xf32>, %w1: tensor<4x8xf32>, %b1: tensor<8xf32>, %w2: tensor<8x4xf32>, %b2: tensor<4xf32>) {
  // expected-error@+1 {{custom op 'attn.feed_forward' expected activation to be one of 'relu', 'gelu'; got 'swish'}}
  %0 = attn.feed_forward swish %x, %w1, %b1, %w2, %b2 : (tensor<1x8x4xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<8x4xf32>, tensor<4xf32>) -> tensor<1x8x4xf32>
  return
}

// -----

func.func @residual_body_argument(%x: tensor<1x8x4xf32>) {
  // expected-error@+1 {{'attn.residual' op expected region 'body' argument #0 of type 'tensor<1x8x4xf32>', got 'tensor<1x8x2xf32>'}}
  %0 = attn.residual %x : tensor<1x8x4xf32> {
  ^bb0(%a: tensor<1x8x2xf32>):
    attn.yield %x : tensor<1x8x4xf32>
  }
  return
}

// -----

func.func @residual_body_yield(%x: tensor<1x8x4xf32>, %y: tensor<1x8x2xf32>) {
  // expected-error@+1 {{expected region 'body' to yield #0 of type 'tensor<1x8x4xf32>', got 'tensor<1x8x2xf32>'}}
  %0 = attn.residual %x : tensor<1x8x4xf32> {
  ^bb0(%a: tensor<1x8x4xf32>):
    attn.yield %y : tensor<1x8x2xf32>
  }
  return
}

// -----

func.func @residual_body_without_yield(%x: tensor<1x8x4xf32>) {
  // expected-error@+1 {{'attn.residual' op expects a non-empty block}}
  %0 = attn.residual %x : tensor<1x8x4xf32> {
  ^bb0(%a: tensor<1x8x4xf32>):
  }
  return
}

// -----

func.func @reversible_f_yield(%x1: tensor<1x8x4xf32>, %x2: tensor<1x8x2xf32>) {
  // expected-error@+1 {{'attn.reversible' op expected region 'f' to yield #0 of type 'tensor<1x8x4xf32>', got 'tensor<1x8x2xf32>'}}
  %y:2 = attn.reversible %x1, %x2 : tensor<1x8x4xf32>, tensor<1x8x2xf32> f {
  ^bb0(%a: tensor<1x8x2xf32>):
    attn.yield %a : tensor<1x8x2xf32>
  } g {
  ^bb0(%a: tensor<1x8x4xf32>):
    attn.yield %x2 : tensor<1x8x2xf32>
  }
  return
}

// -----

func.func @reversible_g_arguments(%x: tensor<1x8x4xf32>) {
  // expected-error@+1 {{expected region 'g' to take 1 argument(s), got 2}}
  %y:2 = attn.reversible %x, %x : tensor<1x8x4xf32>, tensor<1x8x4xf32> f {
  ^bb0(%a: tensor<1x8x4xf32>):
    attn.yield %a : tensor<1x8x4xf32>
  } g {
  ^bb0(%a: tensor<1x8x4xf32>, %b: tensor<1x8x4xf32>):
    attn.yield %a : tensor<1x8x4xf32>
  }
  return
}

// -----

func.func @reversible_result_type(%x: tensor<1x8x4xf32>) {
  // expected-error@+1 {{'attn.reversible' op failed to verify that all of {x1, y1} have same type}}
  %y:2 = "attn.reversible"(%x, %x) ({
  ^bb0(%a: tensor<1x8x4xf32>):
    attn.yield %a : tensor<1x8x4xf32>
  }, {
  ^bb0(%a: tensor<1x8x4xf32>):
    attn.yield %a : tensor<1x8x4xf32>
  }) : (tensor<1x8x4xf32>, tensor<1x8x4xf32>) -> (tensor<1x8x2xf32>, tensor<1x8x4xf32>)
  return
}

// -----

func.func @yield_outside_block(%x: tensor<4xf32>) {
  // expected-error@+1 {{'attn.yield' op expects parent op to be one of 'attn.attention, attn.attention_backward, attn.ring_attention, attn.ring_attention_backward, attn.multi_head_attention, attn.residual, attn.reversible'}}
  attn.yield %x : tensor<4xf32>
}

// -----

func.func @cross_entropy_labels_shape(%l: tensor<1x8x16xf32>, %t: tensor<1x4xi32>) {
  // expected-error@+1 {{'attn.softmax_cross_entropy' op expected labels of shape [1, 8], got [1, 4]}}
  %0 = attn.softmax_cross_entropy %l, %t : (tensor<1x8x16xf32>, tensor<1x4xi32>) -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_logits_rank(%l: tensor<16xf32>, %t: tensor<i32>) {
  // expected-error@+1 {{expected logits of rank >= 2 [..., vocab], got rank 1}}
  %0 = attn.softmax_cross_entropy %l, %t : (tensor<16xf32>, tensor<i32>) -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_loss_shape(%l: tensor<1x8x16xf32>, %t: tensor<1x8xi32>) {
  // expected-error@+1 {{expected loss of shape [], got [1]}}
  %0 = attn.softmax_cross_entropy %l, %t : (tensor<1x8x16xf32>, tensor<1x8xi32>) -> tensor<1xf32>
  return
}

// -----

func.func @cross_entropy_loss_element_type(%l: tensor<1x8x16xf32>, %t: tensor<1x8xi32>) {
  // expected-error@+1 {{expected loss element type 'f32', got 'f16'}}
  %0 = attn.softmax_cross_entropy %l, %t : (tensor<1x8x16xf32>, tensor<1x8xi32>) -> tensor<f16>
  return
}

// -----

func.func @linear_scalar_input(%x: tensor<f32>, %w: tensor<4x2xf32>) {
  // expected-error@+1 {{expected input of rank >= 1 [..., in], got rank 0}}
  %0 = attn.linear %x, %w : (tensor<f32>, tensor<4x2xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @linear_weight_element_type(%x: tensor<1x8x4xf32>, %w: tensor<4x2xf16>) {
  // expected-error@+1 {{expected weight element type 'f32', got 'f16'}}
  %0 = attn.linear %x, %w : (tensor<1x8x4xf32>, tensor<4x2xf16>) -> tensor<1x8x2xf32>
  return
}

// -----

func.func @feed_forward_bias_element_type(%x: tensor<1x8x4xf32>, %w1: tensor<4x8xf32>, %b1: tensor<8xbf16>, %w2: tensor<8x4xf32>, %b2: tensor<4xf32>) {
  // expected-error@+1 {{expected up_bias element type 'f32', got 'bf16'}}
  %0 = attn.feed_forward relu %x, %w1, %b1, %w2, %b2 : (tensor<1x8x4xf32>, tensor<4x8xf32>, tensor<8xbf16>, tensor<8x4xf32>, tensor<4xf32>) -> tensor<1x8x4xf32>
  return
}

// -----

func.func @mha_output_weight_rank(%x: tensor<1x8x16xf32>, %w: tensor<16x16xf32>, %wo: tensor<16xf32>) {
  // expected-error@+1 {{expected output weight of rank 2 [heads * head_dim, d_model], got rank 1}}
  %0 = attn.multi_head_attention %x, query %w, value %w, output %wo {heads = 2 : i64}
      : (tensor<1x8x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16xf32>) -> tensor<1x8x16xf32> {
  ^bb0(%qk: tensor<1x2x8x8xf32>, %v: tensor<1x2x8x8xf32>):
    attn.yield %v : tensor<1x2x8x8xf32>
  }
  return
}

// -----

func.func @sparse_zero_scale(%q: tensor<1x2x64x4xf32>) {
  // expected-error@+1 {{'attn.sparse_attention' op expected 'scale' > 0, got 0}}
  %0 = attn.sparse_attention strided %q, %q, %q {block = 8 : i64, stride = 8 : i64, scale = 0.0 : f32} : (tensor<1x2x64x4xf32>, tensor<1x2x64x4xf32>, tensor<1x2x64x4xf32>) -> tensor<1x2x64x4xf32>
  return
}

// -----

// Shapes and attributes lcc cannot compile in reasonable time and memory are
// rejected here with the limit they exceed (they used to crash the backend:
// SIGFPE, SIGSEGV, LLVM out-of-memory aborts).

func.func @attention_zero_seq(%q: tensor<1x2x0x4xf32>) {
  // expected-error@+1 {{'attn.attention' op expected every dimension of query to be at least 1, got 'tensor<1x2x0x4xf32>'}}
  %0 = attn.attention %q, %q, %q : (tensor<1x2x0x4xf32>, tensor<1x2x0x4xf32>, tensor<1x2x0x4xf32>) -> tensor<1x2x0x4xf32>
  return
}

// -----

func.func @attention_zero_batch(%q: tensor<0x2x8x4xf32>) {
  // expected-error@+1 {{expected every dimension of query to be at least 1, got 'tensor<0x2x8x4xf32>'}}
  %0 = attn.attention %q, %q, %q {causal = true} : (tensor<0x2x8x4xf32>, tensor<0x2x8x4xf32>, tensor<0x2x8x4xf32>) -> tensor<0x2x8x4xf32>
  return
}

// -----

func.func @attention_zero_value_head_dim(%q: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x0xf32>) {
  // expected-error@+1 {{expected every dimension of value to be at least 1, got 'tensor<1x2x8x0xf32>'}}
  %0 = attn.attention %q, %q, %v : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x0xf32>) -> tensor<1x2x8x0xf32>
  return
}

// -----

func.func @feed_forward_zero_seq(%x: tensor<1x0x4xf32>, %w1: tensor<4x8xf32>, %b1: tensor<8xf32>, %w2: tensor<8x4xf32>, %b2: tensor<4xf32>) {
  // expected-error@+1 {{'attn.feed_forward' op expected every dimension of input to be at least 1, got 'tensor<1x0x4xf32>'}}
  %0 = attn.feed_forward relu %x, %w1, %b1, %w2, %b2 : (tensor<1x0x4xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<8x4xf32>, tensor<4xf32>) -> tensor<1x0x4xf32>
  return
}

// -----

func.func @feed_forward_zero_d_ff(%x: tensor<1x4x4xf32>, %w1: tensor<4x0xf32>, %b1: tensor<0xf32>, %w2: tensor<0x4xf32>, %b2: tensor<4xf32>) {
  // expected-error@+1 {{'attn.feed_forward' op expected every dimension of up_weight to be at least 1, got 'tensor<4x0xf32>'}}
  %0 = attn.feed_forward relu %x, %w1, %b1, %w2, %b2 : (tensor<1x4x4xf32>, tensor<4x0xf32>, tensor<0xf32>, tensor<0x4xf32>, tensor<4xf32>) -> tensor<1x4x4xf32>
  return
}

// -----

func.func @layer_norm_zero_features(%x: tensor<2x0xf32>, %g: tensor<0xf32>) {
  // expected-error@+1 {{'attn.layer_norm' op expected every dimension of input to be at least 1, got 'tensor<2x0xf32>'}}
  %0 = attn.layer_norm %x, %g, %g : (tensor<2x0xf32>, tensor<0xf32>, tensor<0xf32>) -> tensor<2x0xf32>
  return
}

// -----

func.func @embedding_zero_vocab(%t: tensor<1x4xi32>, %e: tensor<0x8xf32>) {
  // expected-error@+1 {{'attn.embedding' op expected every dimension of table to be at least 1, got 'tensor<0x8xf32>'}}
  %0 = attn.embedding %t, %e : (tensor<1x4xi32>, tensor<0x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @lsh_too_many_hashes(%qk: tensor<1x2x64x4xf32>) {
  // expected-error@+1 {{'attn.lsh_attention' op expected 'n_hashes' <= the hash-round limit (1024), got 4294967296}}
  %0 = attn.lsh_attention %qk, %qk {n_hashes = 4294967296 : i64, bucket_size = 8 : i64} : (tensor<1x2x64x4xf32>, tensor<1x2x64x4xf32>) -> tensor<1x2x64x4xf32>
  return
}

// -----

func.func @lsh_bucket_size_over_seq(%qk: tensor<1x2x64x4xf32>) {
  // expected-error@+1 {{'attn.lsh_attention' op expected 'bucket_size' <= seq (64), got 65}}
  %0 = attn.lsh_attention %qk, %qk {n_hashes = 1 : i64, bucket_size = 65 : i64} : (tensor<1x2x64x4xf32>, tensor<1x2x64x4xf32>) -> tensor<1x2x64x4xf32>
  return
}

// -----

func.func @lsh_factorized_hash_buckets(%qk: tensor<1x2x192x4xf32>) {
  // 192 tokens in buckets of 32: 6 buckets, which no pair of even counts makes.
  // expected-error@+1 {{'attn.lsh_attention' op expected n_buckets (padded seq / bucket_size) to be a multiple of 4 with factorized_hash, got 6}}
  %0 = attn.lsh_attention %qk, %qk {n_hashes = 1 : i64, bucket_size = 32 : i64, factorized_hash} : (tensor<1x2x192x4xf32>, tensor<1x2x192x4xf32>) -> tensor<1x2x192x4xf32>
  return
}

// -----

func.func @lsh_named_buckets_factorized(%qk: tensor<1x2x192x4xf32>) {
  // expected-error@+1 {{'attn.lsh_attention' op expected n_buckets to be a multiple of 4 with factorized_hash, got 10}}
  %0 = attn.lsh_attention %qk, %qk {n_hashes = 1 : i64, bucket_size = 32 : i64, n_buckets = 10 : i64, factorized_hash} : (tensor<1x2x192x4xf32>, tensor<1x2x192x4xf32>) -> tensor<1x2x192x4xf32>
  return
}

// -----

func.func @lsh_odd_buckets(%qk: tensor<1x2x192x4xf32>) {
  // expected-error@+1 {{'attn.lsh_attention' op expected n_buckets to be even (argmax over [xR; -xR]), got 7}}
  %0 = attn.lsh_attention %qk, %qk {n_hashes = 1 : i64, bucket_size = 32 : i64, n_buckets = 7 : i64} : (tensor<1x2x192x4xf32>, tensor<1x2x192x4xf32>) -> tensor<1x2x192x4xf32>
  return
}

// -----

func.func @lsh_no_buckets(%qk: tensor<1x2x192x4xf32>) {
  // expected-error@+1 {{'attn.lsh_attention' op expected 'n_buckets' >= 2, got 0}}
  %0 = attn.lsh_attention %qk, %qk {n_hashes = 1 : i64, bucket_size = 32 : i64, n_buckets = 0 : i64} : (tensor<1x2x192x4xf32>, tensor<1x2x192x4xf32>) -> tensor<1x2x192x4xf32>
  return
}

// -----

func.func @lsh_too_many_buckets(%qk: tensor<1x2x192x4xf32>) {
  // expected-error@+1 {{'attn.lsh_attention' op expected 'n_buckets' <= the bucket limit (1048576), got 1048578}}
  %0 = attn.lsh_attention %qk, %qk {n_hashes = 1 : i64, bucket_size = 32 : i64, n_buckets = 1048578 : i64, factorized_hash} : (tensor<1x2x192x4xf32>, tensor<1x2x192x4xf32>) -> tensor<1x2x192x4xf32>
  return
}

// -----

func.func @lsh_rotations_too_large(%qk: tensor<1x1x65536x2147483647xf32>) {
  // expected-error@+1 {{'attn.lsh_attention' op expected at most 16777216 rotation values (head_dim x n_hashes x rotation columns), got 2147483647 x 8 x 512}}
  %0 = attn.lsh_attention %qk, %qk {n_hashes = 8 : i64, bucket_size = 64 : i64} : (tensor<1x1x65536x2147483647xf32>, tensor<1x1x65536x2147483647xf32>) -> tensor<1x1x65536x2147483647xf32>
  return
}

// -----

func.func @attention_mask_arguments(%q: tensor<1x2x8x4xf32>) {
  // expected-error@+1 {{'attn.attention' op expected region 'mask' to take 4 argument(s), got 2}}
  %0 = attn.attention %q, %q, %q : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
      mask {
      ^bb0(%i: index, %j: index):
        %t = arith.cmpi ule, %j, %i : index
        attn.yield %t : i1
      }
  return
}

// -----

func.func @attention_mask_yield(%q: tensor<1x2x8x4xf32>) {
  // expected-error@+1 {{'attn.attention' op expected region 'mask' to yield #0 of type 'i1', got 'index'}}
  %0 = attn.attention %q, %q, %q : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        attn.yield %i : index
      }
  return
}

// -----

func.func @attention_score_types(%q: tensor<1x2x8x4xf32>) {
  // expected-error@+1 {{'attn.attention' op expected region 'score' argument #0 of type 'f32', got 'index'}}
  %0 = attn.attention %q, %q, %q : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
      score {
      ^bb0(%s: index, %b: index, %h: index, %i: index, %j: index):
        %f = arith.constant 0.0 : f32
        attn.yield %f : f32
      }
  return
}

// -----

func.func @attention_mask_tensor_op(%q: tensor<1x2x8x4xf32>) {
  // expected-error@+1 {{'attn.attention' op expected only 'arith' and 'math' ops in region 'mask', got 'tensor.dim'}}
  %0 = attn.attention %q, %q, %q : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %n = tensor.dim %q, %b : tensor<1x2x8x4xf32>
        %t = arith.cmpi ult, %j, %n : index
        attn.yield %t : i1
      }
  return
}

// -----

func.func @attention_mask_captures(%q: tensor<1x2x8x4xf32>, %n: index) {
  // expected-error@+1 {{'attn.attention' op expected region 'mask' to use only its arguments, its own values and constants}}
  %0 = attn.attention %q, %q, %q : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %t = arith.cmpi ult, %j, %n : index
        attn.yield %t : i1
      }
  return
}

// -----

func.func @attention_one_region_generic(%q: tensor<1x2x8x4xf32>) {
  // expected-error@+1 {{'attn.attention' op expected no regions or two (mask, score), got 1}}
  %0 = "attn.attention"(%q, %q, %q) ({
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %t = arith.cmpi ule, %j, %i : index
    "attn.yield"(%t) : (i1) -> ()
  }) : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  return
}

// -----

func.func @relative_fewer_keys(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x4x4xf32>, %pos: tensor<2x4x4xf32>, %u: tensor<2x4xf32>) {
  // expected-error@+1 {{'attn.relative_attention' op expected key seq >= query seq (the first key seq - query seq keys are the memory), got key seq 4 and query seq 8}}
  %0 = attn.relative_attention %q, %k, %k, %pos, %u, %u : (tensor<1x2x8x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<1x2x8x4xf32>
  return
}

// -----

func.func @relative_pos_shape(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x12x4xf32>, %pos: tensor<2x8x4xf32>, %u: tensor<2x4xf32>) {
  // expected-error@+1 {{'attn.relative_attention' op expected pos of shape [2, 12, 4], got [2, 8, 4]}}
  %0 = attn.relative_attention %q, %k, %k, %pos, %u, %u : (tensor<1x2x8x4xf32>, tensor<1x2x12x4xf32>, tensor<1x2x12x4xf32>, tensor<2x8x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<1x2x8x4xf32>
  return
}

// -----

func.func @relative_bias_shape(%q: tensor<1x2x8x4xf32>, %pos: tensor<2x8x4xf32>, %u: tensor<2x4xf32>, %w: tensor<4xf32>) {
  // expected-error@+1 {{'attn.relative_attention' op expected w of shape [2, 4], got [4]}}
  %0 = attn.relative_attention %q, %q, %q, %pos, %u, %w : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x4xf32>, tensor<4xf32>) -> tensor<1x2x8x4xf32>
  return
}

// -----

func.func @relative_pos_type(%q: tensor<1x2x8x4xf32>, %pos: tensor<2x8x4xbf16>, %u: tensor<2x4xf32>) {
  // expected-error@+1 {{'attn.relative_attention' op expected pos element type 'f32', got 'bf16'}}
  %0 = attn.relative_attention %q, %q, %q, %pos, %u, %u : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<2x8x4xbf16>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<1x2x8x4xf32>
  return
}

// -----

// Relative attention's logsumexp is f32 on half operands too.
func.func @relative_half_logsumexp(%q: tensor<1x2x8x4xbf16>, %pos: tensor<2x8x4xbf16>, %u: tensor<2x4xbf16>) {
  // expected-error@+1 {{'attn.relative_attention' op expected logsumexp element type 'f32', got 'bf16'}}
  %0:2 = attn.relative_attention %q, %q, %q, %pos, %u, %u : (tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>, tensor<2x8x4xbf16>, tensor<2x4xbf16>, tensor<2x4xbf16>) -> (tensor<1x2x8x4xbf16>, tensor<1x2x8xbf16>)
  return
}

// -----

func.func @relative_logsumexp_shape(%q: tensor<1x2x8x4xf32>, %pos: tensor<2x8x4xf32>, %u: tensor<2x4xf32>) {
  // expected-error@+1 {{'attn.relative_attention' op expected logsumexp of shape [1, 2, 8], got [1, 2, 4]}}
  %0:2 = attn.relative_attention %q, %q, %q, %pos, %u, %u : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x4xf32>)
  return
}

// -----

func.func @relative_negative_clamp(%q: tensor<1x2x8x4xf32>, %pos: tensor<2x8x4xf32>, %u: tensor<2x4xf32>) {
  // expected-error@+1 {{'attn.relative_attention' op expected 'clamp_len' >= 0, got -1}}
  %0 = attn.relative_attention %q, %q, %q, %pos, %u, %u {clamp_len = -1 : i64} : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<1x2x8x4xf32>
  return
}

// -----

func.func @relative_zero_same_length(%q: tensor<1x2x8x4xf32>, %pos: tensor<2x8x4xf32>, %u: tensor<2x4xf32>) {
  // expected-error@+1 {{'attn.relative_attention' op expected 'same_length' >= 1, got 0}}
  %0 = attn.relative_attention %q, %q, %q, %pos, %u, %u {same_length = 0 : i64} : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<1x2x8x4xf32>
  return
}

// -----

func.func @relative_result_shape(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x12x4xf32>, %pos: tensor<2x12x4xf32>, %u: tensor<2x4xf32>) {
  // expected-error@+1 {{'attn.relative_attention' op expected result of shape [1, 2, 8, 4], got [1, 2, 12, 4]}}
  %0 = attn.relative_attention %q, %k, %k, %pos, %u, %u : (tensor<1x2x8x4xf32>, tensor<1x2x12x4xf32>, tensor<1x2x12x4xf32>, tensor<2x12x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<1x2x12x4xf32>
  return
}

// -----

func.func @sinusoidal_odd_dim() {
  // expected-error@+1 {{'attn.sinusoidal_encoding' op expected an even dim (sines, then cosines), got 7}}
  %0 = attn.sinusoidal_encoding : tensor<16x7xf32>
  return
}

// -----

func.func @sinusoidal_rank() {
  // expected-error@+1 {{'attn.sinusoidal_encoding' op expected result of rank 2 [positions, dim], got rank 1 ('tensor<16xf32>')}}
  %0 = attn.sinusoidal_encoding : tensor<16xf32>
  return
}

// -----

func.func @span_fewer_keys(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x4x4xf32>, %z: tensor<2xf32>) {
  // expected-error@+1 {{'attn.adaptive_span_attention' op expected key seq >= query seq (the first key seq - query seq keys are the memory), got key seq 4 and query seq 8}}
  %0 = attn.adaptive_span_attention %q, %k, %k, %z {max_span = 8 : i64} : (tensor<1x2x8x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<2xf32>) -> tensor<1x2x8x4xf32>
  return
}

// -----

func.func @span_z_shape(%q: tensor<1x2x8x4xf32>, %z: tensor<3xf32>) {
  // expected-error@+1 {{'attn.adaptive_span_attention' op expected z of shape [2], got [3]}}
  %0 = attn.adaptive_span_attention %q, %q, %q, %z {max_span = 8 : i64} : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<3xf32>) -> tensor<1x2x8x4xf32>
  return
}

// -----

func.func @span_z_type(%q: tensor<1x2x8x4xf32>, %z: tensor<2xbf16>) {
  // expected-error@+1 {{'attn.adaptive_span_attention' op expected z element type 'f32', got 'bf16'}}
  %0 = attn.adaptive_span_attention %q, %q, %q, %z {max_span = 8 : i64} : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<2xbf16>) -> tensor<1x2x8x4xf32>
  return
}

// -----

func.func @span_zero_max_span(%q: tensor<1x2x8x4xf32>, %z: tensor<2xf32>) {
  // expected-error@+1 {{'attn.adaptive_span_attention' op expected 'max_span' >= 1, got 0}}
  %0 = attn.adaptive_span_attention %q, %q, %q, %z {max_span = 0 : i64} : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<2xf32>) -> tensor<1x2x8x4xf32>
  return
}

// -----

func.func @span_zero_ramp(%q: tensor<1x2x8x4xf32>, %z: tensor<2xf32>) {
  // expected-error@+1 {{'attn.adaptive_span_attention' op expected 'ramp' >= 1, got 0}}
  %0 = attn.adaptive_span_attention %q, %q, %q, %z {max_span = 8 : i64, ramp = 0 : i64} : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<2xf32>) -> tensor<1x2x8x4xf32>
  return
}

// -----

func.func @span_huge_max_span(%q: tensor<1x2x8x4xf32>, %z: tensor<2xf32>) {
  // expected-error@+1 {{'attn.adaptive_span_attention' op expected 'max_span' <= 2^24 (16777216), got 16777217}}
  %0 = attn.adaptive_span_attention %q, %q, %q, %z {max_span = 16777217 : i64} : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<2xf32>) -> tensor<1x2x8x4xf32>
  return
}

// -----

func.func @span_log_normalizer_shape(%q: tensor<1x2x8x4xf32>, %z: tensor<2xf32>) {
  // expected-error@+1 {{'attn.adaptive_span_attention' op expected log_normalizer of shape [1, 2, 8], got [1, 2, 4]}}
  %0:2 = attn.adaptive_span_attention %q, %q, %q, %z {max_span = 8 : i64} : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<2xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x4xf32>)
  return
}

// -----

func.func @compress_length(%x: tensor<1x10x8xf32>, %w: tensor<4x8x8xf32>, %b: tensor<8xf32>) {
  // expected-error@+1 {{'attn.compress' op expected the input length 10 to be a multiple of 'rate' 4}}
  %0 = attn.compress %x, %w, %b {rate = 4 : i64} : (tensor<1x10x8xf32>, tensor<4x8x8xf32>, tensor<8xf32>) -> tensor<1x2x8xf32>
  return
}

// -----

func.func @compress_zero_rate(%x: tensor<1x8x8xf32>, %w: tensor<0x8x8xf32>, %b: tensor<8xf32>) {
  // expected-error@+1 {{'attn.compress' op expected 'rate' >= 1, got 0}}
  %0 = attn.compress %x, %w, %b {rate = 0 : i64} : (tensor<1x8x8xf32>, tensor<0x8x8xf32>, tensor<8xf32>) -> tensor<1x8x8xf32>
  return
}

// -----

func.func @compress_weight_shape(%x: tensor<1x8x8xf32>, %w: tensor<2x8x8xf32>, %b: tensor<8xf32>) {
  // expected-error@+1 {{'attn.compress' op expected weight of shape [4, 8, 8], got [2, 8, 8]}}
  %0 = attn.compress %x, %w, %b {rate = 4 : i64} : (tensor<1x8x8xf32>, tensor<2x8x8xf32>, tensor<8xf32>) -> tensor<1x2x8xf32>
  return
}

// -----

func.func @compress_result_shape(%x: tensor<1x8x8xf32>, %w: tensor<4x8x6xf32>, %b: tensor<6xf32>) {
  // expected-error@+1 {{'attn.compress' op expected result of shape [1, 2, 6], got [1, 2, 8]}}
  %0 = attn.compress %x, %w, %b {rate = 4 : i64} : (tensor<1x8x8xf32>, tensor<4x8x6xf32>, tensor<6xf32>) -> tensor<1x2x8xf32>
  return
}
