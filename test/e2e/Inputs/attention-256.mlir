// Attention over 256 positions, non-causal and causal, batch 2, 2 heads of
// 16 (run by ../sparse-parts.test with --attention=sparse).
func.func @forward(%q: tensor<2x2x256x16xf32>, %k: tensor<2x2x256x16xf32>,
                   %v: tensor<2x2x256x16xf32>)
    -> (tensor<2x2x256x16xf32>, tensor<2x2x256x16xf32>) {
  %0 = attn.attention %q, %k, %v
      : (tensor<2x2x256x16xf32>, tensor<2x2x256x16xf32>,
         tensor<2x2x256x16xf32>) -> tensor<2x2x256x16xf32>
  %1 = attn.attention %q, %k, %v {causal = true}
      : (tensor<2x2x256x16xf32>, tensor<2x2x256x16xf32>,
         tensor<2x2x256x16xf32>) -> tensor<2x2x256x16xf32>
  return %0, %1 : tensor<2x2x256x16xf32>, tensor<2x2x256x16xf32>
}
