// One Transformer-XL attention step: a segment of 16 tokens attends to the
// memory (the previous segment, 16 tokens) and to itself; the new memory
// is this segment. Run with lcc-run --segments=N --carry=1:1.
func.func @segment(%x: tensor<1x16x8xf32>, %mem: tensor<1x16x8xf32>)
    -> (tensor<1x16x8xf32>, tensor<1x16x8xf32>) {
  %cat = tensor.concat dim(1) %mem, %x
      : (tensor<1x16x8xf32>, tensor<1x16x8xf32>) -> tensor<1x32x8xf32>
  %k = tensor.expand_shape %cat [[0, 1], [2], [3]] output_shape [1, 1, 32, 8]
      : tensor<1x32x8xf32> into tensor<1x1x32x8xf32>
  %q = tensor.expand_shape %x [[0, 1], [2], [3]] output_shape [1, 1, 16, 8]
      : tensor<1x16x8xf32> into tensor<1x1x16x8xf32>
  %pos = attn.param "pos" : tensor<1x32x8xf32>
  %u = attn.param "u" : tensor<1x8xf32>
  %w = attn.param "w" : tensor<1x8xf32>
  %o = attn.relative_attention %q, %k, %k, %pos, %u, %w
      : (tensor<1x1x16x8xf32>, tensor<1x1x32x8xf32>, tensor<1x1x32x8xf32>,
         tensor<1x32x8xf32>, tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x1x16x8xf32>
  %y = tensor.collapse_shape %o [[0, 1], [2], [3]]
      : tensor<1x1x16x8xf32> into tensor<1x16x8xf32>
  return %y, %x : tensor<1x16x8xf32>, tensor<1x16x8xf32>
}
