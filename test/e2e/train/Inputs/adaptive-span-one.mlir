// One adaptive-span attention whose operands, z too, are parameters
// (adaptive-span-kinks.test).
func.func @loss(%labels: tensor<1x2x24xi32>) -> tensor<f32> {
  %q = attn.param "q" : tensor<1x2x24x8xf32>
  %k = attn.param "k" : tensor<1x2x24x8xf32>
  %v = attn.param "v" : tensor<1x2x24x8xf32>
  %z = attn.param "z" : tensor<2xf32>
  %o = attn.adaptive_span_attention %q, %k, %v, %z {max_span = 16 : i64, ramp = 4 : i64, causal = true}
      : (tensor<1x2x24x8xf32>, tensor<1x2x24x8xf32>, tensor<1x2x24x8xf32>, tensor<2xf32>) -> tensor<1x2x24x8xf32>
  %l = attn.softmax_cross_entropy %o, %labels : (tensor<1x2x24x8xf32>, tensor<1x2x24xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
