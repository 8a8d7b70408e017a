func.func @f(%q: tensor<1x8x128x64xf32>, %k: tensor<1x8x128x32xf32>) -> tensor<1x8x128x32xf32> {
  %0 = attn.attention %q, %k, %k {causal = true} : (tensor<1x8x128x64xf32>, tensor<1x8x128x32xf32>, tensor<1x8x128x32xf32>) -> tensor<1x8x128x32xf32>
  return %0 : tensor<1x8x128x32xf32>
}
