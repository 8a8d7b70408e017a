// Two (attention, feed-forward) pairs of residual blocks on 160 positions,
// written with dense attention: `--attention=local` makes the first a
// non-causal window attention with a window ahead, the second a causal one
// (local-training.test).
func.func @loss(%x: tensor<1x160x8xf32>, %labels: tensor<1x160xi32>) -> tensor<f32> {
  %wide = attn.residual %x : tensor<1x160x8xf32> {
  ^bb0(%a: tensor<1x160x8xf32>):
    %wq = attn.param "wide.wq" : tensor<8x8xf32>
    %wk = attn.param "wide.wk" : tensor<8x8xf32>
    %wv = attn.param "wide.wv" : tensor<8x8xf32>
    %wo = attn.param "wide.wo" : tensor<8x8xf32>
    %h = attn.multi_head_attention %a, query %wq, key %wk, value %wv, output %wo {heads = 2 : i64}
        : (tensor<1x160x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x160x8xf32> {
    ^bb0(%q: tensor<1x2x160x4xf32>, %k: tensor<1x2x160x4xf32>, %v: tensor<1x2x160x4xf32>):
      %o = attn.attention %q, %k, %v  : (tensor<1x2x160x4xf32>, tensor<1x2x160x4xf32>, tensor<1x2x160x4xf32>) -> tensor<1x2x160x4xf32>
      attn.yield %o : tensor<1x2x160x4xf32>
    }
    attn.yield %h : tensor<1x160x8xf32>
  }
  %wide_ff = attn.residual %wide : tensor<1x160x8xf32> {
  ^bb0(%a: tensor<1x160x8xf32>):
    %w1 = attn.param "wide_ff.w1" : tensor<8x16xf32>
    %b1 = attn.param "wide_ff.b1" : tensor<16xf32>
    %w2 = attn.param "wide_ff.w2" : tensor<16x8xf32>
    %b2 = attn.param "wide_ff.b2" : tensor<8xf32>
    %f = attn.feed_forward gelu %a, %w1, %b1, %w2, %b2
        : (tensor<1x160x8xf32>, tensor<8x16xf32>, tensor<16xf32>, tensor<16x8xf32>, tensor<8xf32>) -> tensor<1x160x8xf32>
    attn.yield %f : tensor<1x160x8xf32>
  }
  %causal = attn.residual %wide_ff : tensor<1x160x8xf32> {
  ^bb0(%a: tensor<1x160x8xf32>):
    %wq = attn.param "causal.wq" : tensor<8x8xf32>
    %wk = attn.param "causal.wk" : tensor<8x8xf32>
    %wv = attn.param "causal.wv" : tensor<8x8xf32>
    %wo = attn.param "causal.wo" : tensor<8x8xf32>
    %h = attn.multi_head_attention %a, query %wq, key %wk, value %wv, output %wo {heads = 2 : i64}
        : (tensor<1x160x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x160x8xf32> {
    ^bb0(%q: tensor<1x2x160x4xf32>, %k: tensor<1x2x160x4xf32>, %v: tensor<1x2x160x4xf32>):
      %o = attn.attention %q, %k, %v {causal = true} : (tensor<1x2x160x4xf32>, tensor<1x2x160x4xf32>, tensor<1x2x160x4xf32>) -> tensor<1x2x160x4xf32>
      attn.yield %o : tensor<1x2x160x4xf32>
    }
    attn.yield %h : tensor<1x160x8xf32>
  }
  %causal_ff = attn.residual %causal : tensor<1x160x8xf32> {
  ^bb0(%a: tensor<1x160x8xf32>):
    %w1 = attn.param "causal_ff.w1" : tensor<8x16xf32>
    %b1 = attn.param "causal_ff.b1" : tensor<16xf32>
    %w2 = attn.param "causal_ff.w2" : tensor<16x8xf32>
    %b2 = attn.param "causal_ff.b2" : tensor<8xf32>
    %f = attn.feed_forward gelu %a, %w1, %b1, %w2, %b2
        : (tensor<1x160x8xf32>, tensor<8x16xf32>, tensor<16xf32>, tensor<16x8xf32>, tensor<8xf32>) -> tensor<1x160x8xf32>
    attn.yield %f : tensor<1x160x8xf32>
  }
  %head = attn.param "head.w" : tensor<8x6xf32>
  %logits = attn.linear %causal_ff, %head : (tensor<1x160x8xf32>, tensor<8x6xf32>) -> tensor<1x160x6xf32>
  %loss = attn.softmax_cross_entropy %logits, %labels : (tensor<1x160x6xf32>, tensor<1x160xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
