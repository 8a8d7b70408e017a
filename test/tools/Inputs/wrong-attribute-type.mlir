func.func @f(%q: tensor<1x2x64x8xf32>, %v: tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32> {
  %0 = attn.attention %q, %q, %v {scale} : (tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32>
  return %0 : tensor<1x2x64x8xf32>
}
