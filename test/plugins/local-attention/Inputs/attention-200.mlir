// Plain and causal attention of seq 200 (not a multiple of the 64-wide
// tiles): what the plugin tests rewrite into local attention.
func.func @forward(%q: tensor<1x2x200x16xf32>, %k: tensor<1x2x200x16xf32>,
                   %v: tensor<1x2x200x16xf32>) -> tensor<1x2x200x16xf32> {
  %0 = attn.attention %q, %k, %v
      : (tensor<1x2x200x16xf32>, tensor<1x2x200x16xf32>, tensor<1x2x200x16xf32>)
      -> tensor<1x2x200x16xf32>
  return %0 : tensor<1x2x200x16xf32>
}

func.func @causal(%q: tensor<1x2x200x16xf32>, %k: tensor<1x2x200x16xf32>,
                  %v: tensor<1x2x200x16xf32>) -> tensor<1x2x200x16xf32> {
  %0 = attn.attention %q, %k, %v {causal = true}
      : (tensor<1x2x200x16xf32>, tensor<1x2x200x16xf32>, tensor<1x2x200x16xf32>)
      -> tensor<1x2x200x16xf32>
  return %0 : tensor<1x2x200x16xf32>
}
