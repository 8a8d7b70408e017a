// decoder-two-rows.mlir as one row with 2 heads of 32 (ring.mlir in
// context-parallel.test), each layer's attention Transformer-XL's relative
// attention over learned encodings of 256 distances (clamped past 100) with
// its content and position biases: for context-parallel.test.
func.func @loss(%tokens: tensor<1x256xi32>, %labels: tensor<1x256xi32>) -> tensor<f32> {
  %table = attn.param "embed.tokens" : tensor<256x64xf32>
  %x0 = attn.embedding %tokens, %table : (tensor<1x256xi32>, tensor<256x64xf32>) -> tensor<1x256x64xf32>
  %a0 = attn.residual %x0 : tensor<1x256x64xf32> {
  ^bb0(%a: tensor<1x256x64xf32>):
    %g = attn.param "layers.0.attn_norm.gamma" : tensor<64xf32>
    %b = attn.param "layers.0.attn_norm.beta" : tensor<64xf32>
    %n = attn.layer_norm %a, %g, %b : (tensor<1x256x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x256x64xf32>
    %wqk = attn.param "layers.0.attn.wqk" : tensor<64x64xf32>
    %wv = attn.param "layers.0.attn.wv" : tensor<64x64xf32>
    %wo = attn.param "layers.0.attn.wo" : tensor<64x64xf32>
    %h = attn.multi_head_attention %n, query %wqk, value %wv, output %wo {heads = 2 : i64} : (tensor<1x256x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<1x256x64xf32> {
    ^bb0(%qk: tensor<1x2x256x32xf32>, %v: tensor<1x2x256x32xf32>):
      %pos = attn.param "layers.0.attn.pos" : tensor<2x256x32xf32>
      %u = attn.param "layers.0.attn.r_w_bias" : tensor<2x32xf32>
      %w = attn.param "layers.0.attn.r_r_bias" : tensor<2x32xf32>
      %o = attn.relative_attention %qk, %qk, %v, %pos, %u, %w {clamp_len = 100 : i64} : (tensor<1x2x256x32xf32>, tensor<1x2x256x32xf32>, tensor<1x2x256x32xf32>, tensor<2x256x32xf32>, tensor<2x32xf32>, tensor<2x32xf32>) -> tensor<1x2x256x32xf32>
      attn.yield %o : tensor<1x2x256x32xf32>
    }
    attn.yield %h : tensor<1x256x64xf32>
  }
  %f0 = attn.residual %a0 : tensor<1x256x64xf32> {
  ^bb0(%a: tensor<1x256x64xf32>):
    %g = attn.param "layers.0.ff_norm.gamma" : tensor<64xf32>
    %b = attn.param "layers.0.ff_norm.beta" : tensor<64xf32>
    %n = attn.layer_norm %a, %g, %b : (tensor<1x256x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x256x64xf32>
    %w1 = attn.param "layers.0.ff.w1" : tensor<64x128xf32>
    %b1 = attn.param "layers.0.ff.b1" : tensor<128xf32>
    %w2 = attn.param "layers.0.ff.w2" : tensor<128x64xf32>
    %b2 = attn.param "layers.0.ff.b2" : tensor<64xf32>
    %h = attn.feed_forward gelu %n, %w1, %b1, %w2, %b2 : (tensor<1x256x64xf32>, tensor<64x128xf32>, tensor<128xf32>, tensor<128x64xf32>, tensor<64xf32>) -> tensor<1x256x64xf32>
    attn.yield %h : tensor<1x256x64xf32>
  }
  %a1 = attn.residual %f0 : tensor<1x256x64xf32> {
  ^bb0(%a: tensor<1x256x64xf32>):
    %g = attn.param "layers.1.attn_norm.gamma" : tensor<64xf32>
    %b = attn.param "layers.1.attn_norm.beta" : tensor<64xf32>
    %n = attn.layer_norm %a, %g, %b : (tensor<1x256x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x256x64xf32>
    %wqk = attn.param "layers.1.attn.wqk" : tensor<64x64xf32>
    %wv = attn.param "layers.1.attn.wv" : tensor<64x64xf32>
    %wo = attn.param "layers.1.attn.wo" : tensor<64x64xf32>
    %h = attn.multi_head_attention %n, query %wqk, value %wv, output %wo {heads = 2 : i64} : (tensor<1x256x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<1x256x64xf32> {
    ^bb0(%qk: tensor<1x2x256x32xf32>, %v: tensor<1x2x256x32xf32>):
      %pos = attn.param "layers.1.attn.pos" : tensor<2x256x32xf32>
      %u = attn.param "layers.1.attn.r_w_bias" : tensor<2x32xf32>
      %w = attn.param "layers.1.attn.r_r_bias" : tensor<2x32xf32>
      %o = attn.relative_attention %qk, %qk, %v, %pos, %u, %w {clamp_len = 100 : i64} : (tensor<1x2x256x32xf32>, tensor<1x2x256x32xf32>, tensor<1x2x256x32xf32>, tensor<2x256x32xf32>, tensor<2x32xf32>, tensor<2x32xf32>) -> tensor<1x2x256x32xf32>
      attn.yield %o : tensor<1x2x256x32xf32>
    }
    attn.yield %h : tensor<1x256x64xf32>
  }
  %f1 = attn.residual %a1 : tensor<1x256x64xf32> {
  ^bb0(%a: tensor<1x256x64xf32>):
    %g = attn.param "layers.1.ff_norm.gamma" : tensor<64xf32>
    %b = attn.param "layers.1.ff_norm.beta" : tensor<64xf32>
    %n = attn.layer_norm %a, %g, %b : (tensor<1x256x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x256x64xf32>
    %w1 = attn.param "layers.1.ff.w1" : tensor<64x128xf32>
    %b1 = attn.param "layers.1.ff.b1" : tensor<128xf32>
    %w2 = attn.param "layers.1.ff.w2" : tensor<128x64xf32>
    %b2 = attn.param "layers.1.ff.b2" : tensor<64xf32>
    %h = attn.feed_forward gelu %n, %w1, %b1, %w2, %b2 : (tensor<1x256x64xf32>, tensor<64x128xf32>, tensor<128xf32>, tensor<128x64xf32>, tensor<64xf32>) -> tensor<1x256x64xf32>
    attn.yield %h : tensor<1x256x64xf32>
  }
  %g = attn.param "final_norm.gamma" : tensor<64xf32>
  %b = attn.param "final_norm.beta" : tensor<64xf32>
  %n = attn.layer_norm %f1, %g, %b : (tensor<1x256x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x256x64xf32>
  %w = attn.param "lm_head.weight" : tensor<64x256xf32>
  %logits = attn.linear %n, %w : (tensor<1x256x64xf32>, tensor<64x256xf32>) -> tensor<1x256x256xf32>
  %l = attn.softmax_cross_entropy %logits, %labels : (tensor<1x256x256xf32>, tensor<1x256xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
