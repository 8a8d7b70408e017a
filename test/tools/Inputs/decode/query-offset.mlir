// A model whose relative attention places its queries at a given offset
// (as a step of ring attention does): no decode step can place them too.
func.func @forward(%tokens: tensor<1x16xi32>) -> tensor<1x16x8xf32> {
  %table = attn.param "embed" : tensor<8x8xf32>
  %x = attn.embedding %tokens, %table : (tensor<1x16xi32>, tensor<8x8xf32>) -> tensor<1x16x8xf32>
  %wq = attn.param "wq" : tensor<8x8xf32>
  %wk = attn.param "wk" : tensor<8x8xf32>
  %wv = attn.param "wv" : tensor<8x8xf32>
  %wo = attn.param "wo" : tensor<8x8xf32>
  %pos = attn.param "pos" : tensor<2x32x4xf32>
  %u = attn.param "u" : tensor<2x4xf32>
  %at = arith.constant dense<4> : tensor<i32>
  %h = attn.multi_head_attention %x, query %wq, key %wk, value %wv, output %wo {heads = 2 : i64}
      : (tensor<1x16x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x16x8xf32> {
  ^bb0(%q: tensor<1x2x16x4xf32>, %k: tensor<1x2x16x4xf32>, %v: tensor<1x2x16x4xf32>):
    %o = attn.relative_attention %q, %k, %v, %pos, %u, %u query_offset(%at)
        : (tensor<1x2x16x4xf32>, tensor<1x2x16x4xf32>, tensor<1x2x16x4xf32>, tensor<2x32x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<i32>) -> tensor<1x2x16x4xf32>
    attn.yield %o : tensor<1x2x16x4xf32>
  }
  return %h : tensor<1x16x8xf32>
}
