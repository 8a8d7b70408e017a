// LSH attention straight on the function's inputs (lcc-attention-map-input.test):
// 96 tokens in 6 chunks of 16, 2 chained rounds, causal.
func.func @forward(%qk: tensor<1x2x96x16xf32>, %v: tensor<1x2x96x16xf32>) -> tensor<1x2x96x16xf32> {
  %0 = attn.lsh_attention %qk, %v {n_hashes = 2 : i64, bucket_size = 16 : i64, causal = true, seed = 7 : i64} : (tensor<1x2x96x16xf32>, tensor<1x2x96x16xf32>) -> tensor<1x2x96x16xf32>
  return %0 : tensor<1x2x96x16xf32>
}
