// A model written with the plugin's op: windows of 32, two back, none ahead.
func.func @forward(%q: tensor<1x2x200x16xf32>, %k: tensor<1x2x200x16xf32>,
                   %v: tensor<1x2x200x16xf32>) -> tensor<1x2x200x16xf32> {
  %0 = local.attention %q, %k, %v {window = 32 : i64, look_backward = 2 : i64}
      : (tensor<1x2x200x16xf32>, tensor<1x2x200x16xf32>, tensor<1x2x200x16xf32>)
      -> tensor<1x2x200x16xf32>
  return %0 : tensor<1x2x200x16xf32>
}
