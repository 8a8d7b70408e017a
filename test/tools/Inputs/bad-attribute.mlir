func.func @f(%qk: tensor<1x2x64x4xf32>) -> tensor<1x2x64x4xf32> {
  %0 = attn.lsh_attention %qk, %qk {n_hashes = 4 : i64, bucket_size = 0 : i64} : (tensor<1x2x64x4xf32>, tensor<1x2x64x4xf32>) -> tensor<1x2x64x4xf32>
  return %0 : tensor<1x2x64x4xf32>
}
