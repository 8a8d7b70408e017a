// One adaptive-span attention layer over byte tokens (a..p), 2 heads of
// 16, max_span 32, ramp 4, plus the span loss 0.02 * max_span * mean(z),
// z an attn.param: what adaptive-span.test trains on text that needs only
// the last two tokens.
func.func @loss(%tokens: tensor<1x64xi32>, %labels: tensor<1x64xi32>) -> tensor<f32> {
  %table = attn.param "embed" : tensor<256x32xf32>
  %x = attn.embedding %tokens, %table : (tensor<1x64xi32>, tensor<256x32xf32>) -> tensor<1x64x32xf32>
  %wq = attn.param "wq" : tensor<32x32xf32>
  %wk = attn.param "wk" : tensor<32x32xf32>
  %wv = attn.param "wv" : tensor<32x32xf32>
  %q = attn.linear %x, %wq : (tensor<1x64x32xf32>, tensor<32x32xf32>) -> tensor<1x64x32xf32>
  %k = attn.linear %x, %wk : (tensor<1x64x32xf32>, tensor<32x32xf32>) -> tensor<1x64x32xf32>
  %v = attn.linear %x, %wv : (tensor<1x64x32xf32>, tensor<32x32xf32>) -> tensor<1x64x32xf32>
  %qh = attn.split_heads %q {heads = 2 : i64} : (tensor<1x64x32xf32>) -> tensor<1x2x64x16xf32>
  %kh = attn.split_heads %k {heads = 2 : i64} : (tensor<1x64x32xf32>) -> tensor<1x2x64x16xf32>
  %vh = attn.split_heads %v {heads = 2 : i64} : (tensor<1x64x32xf32>) -> tensor<1x2x64x16xf32>
  %z = attn.param "span.z" : tensor<2xf32>
  %oh = attn.adaptive_span_attention %qh, %kh, %vh, %z {max_span = 32 : i64, ramp = 4 : i64, causal = true}
      : (tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<2xf32>) -> tensor<1x2x64x16xf32>
  %o = attn.merge_heads %oh : (tensor<1x2x64x16xf32>) -> tensor<1x64x32xf32>
  %h = arith.addf %x, %o : tensor<1x64x32xf32>
  %w1 = attn.param "ff.w1" : tensor<32x128xf32>
  %b1 = attn.param "ff.b1" : tensor<128xf32>
  %w2 = attn.param "ff.w2" : tensor<128x32xf32>
  %b2 = attn.param "ff.b2" : tensor<32xf32>
  %f = attn.feed_forward relu %h, %w1, %b1, %w2, %b2
      : (tensor<1x64x32xf32>, tensor<32x128xf32>, tensor<128xf32>, tensor<128x32xf32>, tensor<32xf32>) -> tensor<1x64x32xf32>
  %y = arith.addf %h, %f : tensor<1x64x32xf32>
  %head = attn.param "head" : tensor<32x256xf32>
  %logits = attn.linear %y, %head : (tensor<1x64x32xf32>, tensor<32x256xf32>) -> tensor<1x64x256xf32>
  %ce = attn.softmax_cross_entropy %logits, %labels : (tensor<1x64x256xf32>, tensor<1x64xi32>) -> tensor<f32>
  // The span loss: mean(z) as z [1, 2] times a column of 1/2, times
  // 0.02 * max_span.
  %zr = tensor.expand_shape %z [[0, 1]] output_shape [1, 2] : tensor<2xf32> into tensor<1x2xf32>
  %half = arith.constant dense<0.5> : tensor<2x1xf32>
  %mean = attn.linear %zr, %half : (tensor<1x2xf32>, tensor<2x1xf32>) -> tensor<1x1xf32>
  %mean0 = tensor.collapse_shape %mean [] : tensor<1x1xf32> into tensor<f32>
  %weight = arith.constant dense<0.64> : tensor<f32>
  %span = arith.mulf %mean0, %weight : tensor<f32>
  %total = arith.addf %ce, %span : tensor<f32>
  return %total : tensor<f32>
}
