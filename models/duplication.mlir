// duplication: the Reformer paper's duplication task (Kitaev et al. 2020,
// Table 2), at the size that trains on two CPU cores in minutes: sequences
// `0 w 0 w` of 256 tokens, w drawn from symbols 1..32 (vocab 33), and a
// one-layer model that must copy the first w into the second. Pre-norm
// residual blocks: shared-QK causal attention (d_model 128, 4 heads of 32),
// so that one model runs dense or, with --attention=lsh, as LSH attention,
// and a ReLU feed-forward (d_ff 256). Batches of 8.
//
// @loss(tokens, labels, weights): next-token cross-entropy counted where
// `weights` is 1 (the second w); tools/duplication/ makes the data, trains
// and evaluates (docs/benchmarks.md).
module {
  func.func @forward(%tokens: tensor<8x256xi32>) -> tensor<8x256x33xf32> {
  %table = attn.param "embed.tokens" : tensor<33x128xf32>
  %tok = attn.embedding %tokens, %table : (tensor<8x256xi32>, tensor<33x128xf32>) -> tensor<8x256x128xf32>
  %pos = attn.param "embed.positions" : tensor<8x256x128xf32>
  %x = arith.addf %tok, %pos : tensor<8x256x128xf32>
  %a = attn.residual %x : tensor<8x256x128xf32> {
  ^bb0(%in: tensor<8x256x128xf32>):
    %g = attn.param "attn_norm.gamma" : tensor<128xf32>
    %b = attn.param "attn_norm.beta" : tensor<128xf32>
    %n = attn.layer_norm %in, %g, %b : (tensor<8x256x128xf32>, tensor<128xf32>, tensor<128xf32>) -> tensor<8x256x128xf32>
    %wqk = attn.param "attn.wqk" : tensor<128x128xf32>
    %wv = attn.param "attn.wv" : tensor<128x128xf32>
    %wo = attn.param "attn.wo" : tensor<128x128xf32>
    %h = attn.multi_head_attention %n, query %wqk, value %wv, output %wo {heads = 4 : i64}
        : (tensor<8x256x128xf32>, tensor<128x128xf32>, tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<8x256x128xf32> {
    ^bb0(%qk: tensor<8x4x256x32xf32>, %v: tensor<8x4x256x32xf32>):
      %o = attn.attention %qk, %qk, %v {causal = true, shared_qk}
          : (tensor<8x4x256x32xf32>, tensor<8x4x256x32xf32>, tensor<8x4x256x32xf32>) -> tensor<8x4x256x32xf32>
      attn.yield %o : tensor<8x4x256x32xf32>
    }
    attn.yield %h : tensor<8x256x128xf32>
  }
  %f = attn.residual %a : tensor<8x256x128xf32> {
  ^bb0(%in: tensor<8x256x128xf32>):
    %g = attn.param "ff_norm.gamma" : tensor<128xf32>
    %b = attn.param "ff_norm.beta" : tensor<128xf32>
    %n = attn.layer_norm %in, %g, %b : (tensor<8x256x128xf32>, tensor<128xf32>, tensor<128xf32>) -> tensor<8x256x128xf32>
    %w1 = attn.param "ff.w1" : tensor<128x256xf32>
    %b1 = attn.param "ff.b1" : tensor<256xf32>
    %w2 = attn.param "ff.w2" : tensor<256x128xf32>
    %b2 = attn.param "ff.b2" : tensor<128xf32>
    %y = attn.feed_forward relu %n, %w1, %b1, %w2, %b2
        : (tensor<8x256x128xf32>, tensor<128x256xf32>, tensor<256xf32>, tensor<256x128xf32>, tensor<128xf32>) -> tensor<8x256x128xf32>
    attn.yield %y : tensor<8x256x128xf32>
  }
  %g = attn.param "final_norm.gamma" : tensor<128xf32>
  %b = attn.param "final_norm.beta" : tensor<128xf32>
  %n = attn.layer_norm %f, %g, %b : (tensor<8x256x128xf32>, tensor<128xf32>, tensor<128xf32>) -> tensor<8x256x128xf32>
  %w = attn.param "lm_head.weight" : tensor<128x33xf32>
  %bias = attn.param "lm_head.bias" : tensor<33xf32>
  %logits = attn.linear %n, %w, %bias : (tensor<8x256x128xf32>, tensor<128x33xf32>, tensor<33xf32>) -> tensor<8x256x33xf32>
  return %logits : tensor<8x256x33xf32>
  }

  func.func @loss(%tokens: tensor<8x256xi32>, %labels: tensor<8x256xi32>,
                  %weights: tensor<8x256xf32>) -> tensor<f32> {
  %logits = call @forward(%tokens) : (tensor<8x256xi32>) -> tensor<8x256x33xf32>
  %l = attn.softmax_cross_entropy %logits, %labels, %weights
      : (tensor<8x256x33xf32>, tensor<8x256xi32>, tensor<8x256xf32>) -> tensor<f32>
  return %l : tensor<f32>
  }
}
