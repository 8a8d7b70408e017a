// LSH attention in the model's second function only: --input feeds the
// first, so the LSH op is not drawn, and its remark says why.
func.func @scale(%x: tensor<1x2x96x16xf32>) -> tensor<1x2x96x16xf32> {
  %y = arith.addf %x, %x : tensor<1x2x96x16xf32>
  return %y : tensor<1x2x96x16xf32>
}
func.func @attend(%qk: tensor<1x2x96x16xf32>, %v: tensor<1x2x96x16xf32>) -> tensor<1x2x96x16xf32> {
  %0 = attn.lsh_attention %qk, %v {n_hashes = 2 : i64, bucket_size = 16 : i64, causal = true, seed = 7 : i64} : (tensor<1x2x96x16xf32>, tensor<1x2x96x16xf32>) -> tensor<1x2x96x16xf32>
  return %0 : tensor<1x2x96x16xf32>
}
