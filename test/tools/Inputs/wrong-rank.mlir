func.func @f(%q: tensor<2x8x4xf32>, %k: tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> {
  %0 = attn.attention %q, %k, %k : (tensor<2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  return %0 : tensor<1x2x8x4xf32>
}
