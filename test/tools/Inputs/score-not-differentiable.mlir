func.func @loss(%x: tensor<1x16x8xf32>, %labels: tensor<1x16xi32>) -> tensor<f32> {
  %wq = attn.param "wq" : tensor<8x8xf32>
  %wk = attn.param "wk" : tensor<8x8xf32>
  %wv = attn.param "wv" : tensor<8x8xf32>
  %wo = attn.param "wo" : tensor<8x8xf32>
  %h = attn.multi_head_attention %x, query %wq, key %wk, value %wv, output %wo {heads = 2 : i64}
      : (tensor<1x16x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x16x8xf32> {
  ^bb0(%q: tensor<1x2x16x4xf32>, %k: tensor<1x2x16x4xf32>, %v: tensor<1x2x16x4xf32>):
    %o = attn.attention %q, %k, %v : (tensor<1x2x16x4xf32>, tensor<1x2x16x4xf32>, tensor<1x2x16x4xf32>) -> tensor<1x2x16x4xf32>
      score {
      ^bb0(%s: f32, %b: index, %hd: index, %i: index, %j: index):
        %f = math.floor %s : f32
        attn.yield %f : f32
      }
    attn.yield %o : tensor<1x2x16x4xf32>
  }
  %hw = attn.param "head.w" : tensor<8x6xf32>
  %logits = attn.linear %h, %hw : (tensor<1x16x8xf32>, tensor<8x6xf32>) -> tensor<1x16x6xf32>
  %l = attn.softmax_cross_entropy %logits, %labels : (tensor<1x16x6xf32>, tensor<1x16xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
