// Routed attention with given centroids, four clusters of windows of 24
// keys over 100 positions, not causal and causal: routed-half.test
// compiles it on bf16 and f16 operands.
func.func @forward(%q: tensor<1x2x100x16xf32>, %k: tensor<1x2x100x16xf32>, %v: tensor<1x2x100x16xf32>, %c: tensor<2x4x16xf32>)
    -> (tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32>) {
  %0 = attn.routed_attention %q, %k, %v centroids %c {clusters = 4 : i64, window = 24 : i64}
      : (tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32>, tensor<2x4x16xf32>) -> tensor<1x2x100x16xf32>
  %1 = attn.routed_attention %q, %k, %v centroids %c {clusters = 4 : i64, window = 24 : i64, causal = true}
      : (tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32>, tensor<2x4x16xf32>) -> tensor<1x2x100x16xf32>
  return %0, %1 : tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32>
}
