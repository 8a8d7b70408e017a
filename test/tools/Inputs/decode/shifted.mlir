// Each position also reads the previous one's embedding (a token shift, by
// slice and concat): no op-by-op decode step can run that.
func.func @forward(%tokens: tensor<1x16xi32>) -> tensor<1x16x8xf32> {
  %table = attn.param "embed" : tensor<8x8xf32>
  %x = attn.embedding %tokens, %table : (tensor<1x16xi32>, tensor<8x8xf32>) -> tensor<1x16x8xf32>
  %head = tensor.extract_slice %x[0, 0, 0] [1, 15, 8] [1, 1, 1] : tensor<1x16x8xf32> to tensor<1x15x8xf32>
  %zero = arith.constant dense<0.0> : tensor<1x1x8xf32>
  %shifted = tensor.concat dim(1) %zero, %head : (tensor<1x1x8xf32>, tensor<1x15x8xf32>) -> tensor<1x16x8xf32>
  %y = arith.addf %x, %shifted : tensor<1x16x8xf32>
  %wq = attn.param "wq" : tensor<8x8xf32>
  %wk = attn.param "wk" : tensor<8x8xf32>
  %wv = attn.param "wv" : tensor<8x8xf32>
  %wo = attn.param "wo" : tensor<8x8xf32>
  %h = attn.multi_head_attention %y, query %wq, key %wk, value %wv, output %wo {heads = 2 : i64}
      : (tensor<1x16x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x16x8xf32> {
  ^bb0(%q: tensor<1x2x16x4xf32>, %k: tensor<1x2x16x4xf32>, %v: tensor<1x2x16x4xf32>):
    %o = attn.attention %q, %k, %v {causal = true} : (tensor<1x2x16x4xf32>, tensor<1x2x16x4xf32>, tensor<1x2x16x4xf32>) -> tensor<1x2x16x4xf32>
    attn.yield %o : tensor<1x2x16x4xf32>
  }
  return %h : tensor<1x16x8xf32>
}
