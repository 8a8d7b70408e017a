// Routed attention with given centroids (lcc-attention-map-input.test): 5
// clusters of 24 keys over 100 queries and 120 keys, not causal.
func.func @forward(%q: tensor<1x2x100x16xf32>, %k: tensor<1x2x120x16xf32>, %v: tensor<1x2x120x16xf32>, %c: tensor<2x5x16xf32>) -> tensor<1x2x100x16xf32> {
  %0 = attn.routed_attention %q, %k, %v centroids %c {clusters = 5 : i64, window = 24 : i64}
      : (tensor<1x2x100x16xf32>, tensor<1x2x120x16xf32>, tensor<1x2x120x16xf32>, tensor<2x5x16xf32>) -> tensor<1x2x100x16xf32>
  return %0 : tensor<1x2x100x16xf32>
}
