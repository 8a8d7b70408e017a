// Causal routed attention with trained centroids (4 clusters per head,
// windows of 8 keys), two sequences, no learned positions: the routed
// decode step equals this model's forward at the length of the tokens so
// far (test_decode.py compiles it at those lengths).
func.func @forward(%tokens: tensor<2x64xi32>) -> tensor<2x64x32xf32> {
  %table = attn.param "embed" : tensor<32x16xf32>
  %x = attn.embedding %tokens, %table : (tensor<2x64xi32>, tensor<32x16xf32>) -> tensor<2x64x16xf32>
  %g = attn.param "norm.gamma" : tensor<16xf32>
  %b = attn.param "norm.beta" : tensor<16xf32>
  %n = attn.layer_norm %x, %g, %b : (tensor<2x64x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x64x16xf32>
  %wq = attn.param "wq" : tensor<16x16xf32>
  %wk = attn.param "wk" : tensor<16x16xf32>
  %wv = attn.param "wv" : tensor<16x16xf32>
  %wo = attn.param "wo" : tensor<16x16xf32>
  %centroids = attn.param "centroids" : tensor<2x4x8xf32>
  %h = attn.multi_head_attention %n, query %wq, key %wk, value %wv, output %wo {heads = 2 : i64}
      : (tensor<2x64x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<2x64x16xf32> {
  ^bb0(%q: tensor<2x2x64x8xf32>, %k: tensor<2x2x64x8xf32>, %v: tensor<2x2x64x8xf32>):
    %o = attn.routed_attention %q, %k, %v centroids %centroids {clusters = 4 : i64, window = 8 : i64, causal = true}
        : (tensor<2x2x64x8xf32>, tensor<2x2x64x8xf32>, tensor<2x2x64x8xf32>, tensor<2x4x8xf32>) -> tensor<2x2x64x8xf32>
    attn.yield %o : tensor<2x2x64x8xf32>
  }
  %y = arith.addf %x, %h : tensor<2x64x16xf32>
  %w = attn.param "head.weight" : tensor<16x32xf32>
  %c = attn.param "head.bias" : tensor<32xf32>
  %logits = attn.linear %y, %w, %c : (tensor<2x64x16xf32>, tensor<16x32xf32>, tensor<32xf32>) -> tensor<2x64x32xf32>
  return %logits : tensor<2x64x32xf32>
}
