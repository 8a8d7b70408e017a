// Causal LSH attention over 300 tokens in buckets of 32, two hash rounds
// (test/e2e/lsh-degenerate-inputs.test).
func.func @forward(%qk: tensor<1x2x300x16xf32>, %v: tensor<1x2x300x16xf32>) -> tensor<1x2x300x16xf32> {
  %0 = attn.lsh_attention %qk, %v {n_hashes = 2 : i64, bucket_size = 32 : i64, seed = 3 : i64, causal = true}
      : (tensor<1x2x300x16xf32>, tensor<1x2x300x16xf32>) -> tensor<1x2x300x16xf32>
  return %0 : tensor<1x2x300x16xf32>
}
