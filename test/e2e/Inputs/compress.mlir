// attn.compress at the shapes of compress.test: rates 2 and 4, a width
// that changes (d 24 -> d_out 16) and one that does not.
module {
  func.func @rate2(%x: tensor<2x12x24xf32>, %w: tensor<2x24x16xf32>, %b: tensor<16xf32>) -> tensor<2x6x16xf32> {
    %0 = attn.compress %x, %w, %b {rate = 2 : i64}
        : (tensor<2x12x24xf32>, tensor<2x24x16xf32>, tensor<16xf32>) -> tensor<2x6x16xf32>
    return %0 : tensor<2x6x16xf32>
  }
  func.func @rate4(%x: tensor<1x64x32xf32>, %w: tensor<4x32x32xf32>, %b: tensor<32xf32>) -> tensor<1x16x32xf32> {
    %0 = attn.compress %x, %w, %b {rate = 4 : i64}
        : (tensor<1x64x32xf32>, tensor<4x32x32xf32>, tensor<32xf32>) -> tensor<1x16x32xf32>
    return %0 : tensor<1x16x32xf32>
  }
}
