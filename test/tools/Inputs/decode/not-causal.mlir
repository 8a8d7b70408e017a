// A model whose attention sees later positions: no decode step can run it.
func.func @forward(%tokens: tensor<1x16xi32>) -> tensor<1x16x8xf32> {
  %table = attn.param "embed" : tensor<8x8xf32>
  %x = attn.embedding %tokens, %table : (tensor<1x16xi32>, tensor<8x8xf32>) -> tensor<1x16x8xf32>
  %wq = attn.param "wq" : tensor<8x8xf32>
  %wk = attn.param "wk" : tensor<8x8xf32>
  %wv = attn.param "wv" : tensor<8x8xf32>
  %wo = attn.param "wo" : tensor<8x8xf32>
  %h = attn.multi_head_attention %x, query %wq, key %wk, value %wv, output %wo {heads = 2 : i64}
      : (tensor<1x16x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x16x8xf32> {
  ^bb0(%q: tensor<1x2x16x4xf32>, %k: tensor<1x2x16x4xf32>, %v: tensor<1x2x16x4xf32>):
    %o = attn.attention %q, %k, %v : (tensor<1x2x16x4xf32>, tensor<1x2x16x4xf32>, tensor<1x2x16x4xf32>) -> tensor<1x2x16x4xf32>
    attn.yield %o : tensor<1x2x16x4xf32>
  }
  return %h : tensor<1x16x8xf32>
}
