// A 2-layer pre-norm decoder of residual (attention, feed-forward) pairs,
// as lcc-bench depth generates them, at a tiny size: d_model 16, 2 heads,
// d_ff 32, vocab 8, 64 tokens; layer 0 dense shared-QK causal attention,
// layer 1 LSH (2 hashes, buckets of 16). `lcc --reversible` makes it two
// reversible blocks.
func.func @loss(%tokens: tensor<1x64xi32>, %labels: tensor<1x64xi32>) -> tensor<f32> {
  %table = attn.param "embed.tokens" : tensor<8x16xf32>
  %x0 = attn.embedding %tokens, %table : (tensor<1x64xi32>, tensor<8x16xf32>) -> tensor<1x64x16xf32>
  %a0 = attn.residual %x0 : tensor<1x64x16xf32> {
  ^bb0(%a: tensor<1x64x16xf32>):
    %g = attn.param "layers.0.attn_norm.gamma" : tensor<16xf32>
    %b = attn.param "layers.0.attn_norm.beta" : tensor<16xf32>
    %n = attn.layer_norm %a, %g, %b : (tensor<1x64x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x64x16xf32>
    %wqk = attn.param "layers.0.attn.wqk" : tensor<16x16xf32>
    %wv = attn.param "layers.0.attn.wv" : tensor<16x16xf32>
    %wo = attn.param "layers.0.attn.wo" : tensor<16x16xf32>
    %h = attn.multi_head_attention %n, query %wqk, value %wv, output %wo {heads = 2 : i64} : (tensor<1x64x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<1x64x16xf32> {
    ^bb0(%qk: tensor<1x2x64x8xf32>, %v: tensor<1x2x64x8xf32>):
      %o = attn.attention %qk, %qk, %v {causal = true, shared_qk} : (tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32>
      attn.yield %o : tensor<1x2x64x8xf32>
    }
    attn.yield %h : tensor<1x64x16xf32>
  }
  %f0 = attn.residual %a0 : tensor<1x64x16xf32> {
  ^bb0(%a: tensor<1x64x16xf32>):
    %g = attn.param "layers.0.ff_norm.gamma" : tensor<16xf32>
    %b = attn.param "layers.0.ff_norm.beta" : tensor<16xf32>
    %n = attn.layer_norm %a, %g, %b : (tensor<1x64x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x64x16xf32>
    %w1 = attn.param "layers.0.ff.w1" : tensor<16x32xf32>
    %b1 = attn.param "layers.0.ff.b1" : tensor<32xf32>
    %w2 = attn.param "layers.0.ff.w2" : tensor<32x16xf32>
    %b2 = attn.param "layers.0.ff.b2" : tensor<16xf32>
    %h = attn.feed_forward relu %n, %w1, %b1, %w2, %b2 : (tensor<1x64x16xf32>, tensor<16x32xf32>, tensor<32xf32>, tensor<32x16xf32>, tensor<16xf32>) -> tensor<1x64x16xf32>
    attn.yield %h : tensor<1x64x16xf32>
  }
  %a1 = attn.residual %f0 : tensor<1x64x16xf32> {
  ^bb0(%a: tensor<1x64x16xf32>):
    %g = attn.param "layers.1.attn_norm.gamma" : tensor<16xf32>
    %b = attn.param "layers.1.attn_norm.beta" : tensor<16xf32>
    %n = attn.layer_norm %a, %g, %b : (tensor<1x64x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x64x16xf32>
    %wqk = attn.param "layers.1.attn.wqk" : tensor<16x16xf32>
    %wv = attn.param "layers.1.attn.wv" : tensor<16x16xf32>
    %wo = attn.param "layers.1.attn.wo" : tensor<16x16xf32>
    %h = attn.multi_head_attention %n, query %wqk, value %wv, output %wo {heads = 2 : i64} : (tensor<1x64x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<1x64x16xf32> {
    ^bb0(%qk: tensor<1x2x64x8xf32>, %v: tensor<1x2x64x8xf32>):
      %o = attn.lsh_attention %qk, %v {n_hashes = 2 : i64, bucket_size = 16 : i64, causal = true, seed = 5 : i64} : (tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32>
      attn.yield %o : tensor<1x2x64x8xf32>
    }
    attn.yield %h : tensor<1x64x16xf32>
  }
  %f1 = attn.residual %a1 : tensor<1x64x16xf32> {
  ^bb0(%a: tensor<1x64x16xf32>):
    %g = attn.param "layers.1.ff_norm.gamma" : tensor<16xf32>
    %b = attn.param "layers.1.ff_norm.beta" : tensor<16xf32>
    %n = attn.layer_norm %a, %g, %b : (tensor<1x64x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x64x16xf32>
    %w1 = attn.param "layers.1.ff.w1" : tensor<16x32xf32>
    %b1 = attn.param "layers.1.ff.b1" : tensor<32xf32>
    %w2 = attn.param "layers.1.ff.w2" : tensor<32x16xf32>
    %b2 = attn.param "layers.1.ff.b2" : tensor<16xf32>
    %h = attn.feed_forward relu %n, %w1, %b1, %w2, %b2 : (tensor<1x64x16xf32>, tensor<16x32xf32>, tensor<32xf32>, tensor<32x16xf32>, tensor<16xf32>) -> tensor<1x64x16xf32>
    attn.yield %h : tensor<1x64x16xf32>
  }
  %g = attn.param "final_norm.gamma" : tensor<16xf32>
  %b = attn.param "final_norm.beta" : tensor<16xf32>
  %n = attn.layer_norm %f1, %g, %b : (tensor<1x64x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x64x16xf32>
  %w = attn.param "lm_head.weight" : tensor<16x8xf32>
  %logits = attn.linear %n, %w : (tensor<1x64x16xf32>, tensor<16x8xf32>) -> tensor<1x64x8xf32>
  %l = attn.softmax_cross_entropy %logits, %labels : (tensor<1x64x8xf32>, tensor<1x64xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
