func.func @f(%q: tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> {
  %0 = "attn.flash_attention"(%q, %q, %q) : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  return %0 : tensor<1x2x8x4xf32>
}
