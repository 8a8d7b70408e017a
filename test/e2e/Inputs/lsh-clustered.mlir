func.func @forward(%qk: tensor<1x2x1024x32xf32>, %v: tensor<1x2x1024x32xf32>) -> tensor<1x2x1024x32xf32> {
  %0 = attn.lsh_attention %qk, %v {n_hashes = N_HASHES : i64, bucket_size = 32 : i64, seed = 3 : i64}
      : (tensor<1x2x1024x32xf32>, tensor<1x2x1024x32xf32>) -> tensor<1x2x1024x32xf32>
  return %0 : tensor<1x2x1024x32xf32>
}
