// Routed attention with four clusters of 40 keys, causal, centroids from
// the compiled k-means (test/e2e/routed-degenerate-inputs.test).
func.func @forward(%q: tensor<1x2x150x16xf32>, %k: tensor<1x2x150x16xf32>, %v: tensor<1x2x150x16xf32>) -> tensor<1x2x150x16xf32> {
  %0 = attn.routed_attention %q, %k, %v {clusters = 4 : i64, window = 40 : i64, causal = true, seed = 5 : i64}
      : (tensor<1x2x150x16xf32>, tensor<1x2x150x16xf32>, tensor<1x2x150x16xf32>) -> tensor<1x2x150x16xf32>
  return %0 : tensor<1x2x150x16xf32>
}
