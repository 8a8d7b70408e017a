// A token mixer (MLP-Mixer style): the positions transposed onto the last
// axis and mixed by a product there. Each op keeps the positions apart but
// the product: no decode step can run it.
func.func @forward(%tokens: tensor<1x16xi32>) -> tensor<1x16x8xf32> {
  %table = attn.param "embed" : tensor<8x8xf32>
  %x = attn.embedding %tokens, %table : (tensor<1x16xi32>, tensor<8x8xf32>) -> tensor<1x16x8xf32>
  %e = tensor.empty() : tensor<1x8x16xf32>
  %t = linalg.transpose ins(%x : tensor<1x16x8xf32>) outs(%e : tensor<1x8x16xf32>) permutation = [0, 2, 1]
  %wm = attn.param "mix" : tensor<16x16xf32>
  %m = attn.linear %t, %wm : (tensor<1x8x16xf32>, tensor<16x16xf32>) -> tensor<1x8x16xf32>
  %e2 = tensor.empty() : tensor<1x16x8xf32>
  %y = linalg.transpose ins(%m : tensor<1x8x16xf32>) outs(%e2 : tensor<1x16x8xf32>) permutation = [0, 2, 1]
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
