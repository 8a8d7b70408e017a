// LSH attention where every token's whole neighbourhood is visible: seq 128
// in chunks of 128 pads to 256, so every round sorts the real tokens into
// its first chunk and the padding into its second; the first chunk looks
// back at the previous round's padding. Whatever the hashes, every token
// sees all others, so the result must equal exact shared-QK attention
// (causal) to float rounding, with 2 hash rounds combined.
// RUN: lcc %s -o %t.lcm
// RUN: lcc-testdata --output=%t.qk.npy --shape=1,2,128,16
// RUN: lcc-testdata --output=%t.v.npy --shape=1,2,128,16
// RUN: rm -rf %t.out && mkdir %t.out
// RUN: lcc-run %t.lcm --input=%t.qk.npy --input=%t.v.npy --output-dir=%t.out
// RUN: lcc-reference --op=attention --shared-qk --causal --input=%t.qk.npy --input=%t.v.npy --output=%t.ref.npy
// RUN: lcc-compare %t.out/result0.npy %t.ref.npy --rtol=1e-5
func.func @forward(%qk: tensor<1x2x128x16xf32>, %v: tensor<1x2x128x16xf32>) -> tensor<1x2x128x16xf32> {
  %0 = attn.lsh_attention %qk, %v {n_hashes = 2 : i64, bucket_size = 128 : i64, seed = 11 : i64, causal = true} : (tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>) -> tensor<1x2x128x16xf32>
  return %0 : tensor<1x2x128x16xf32>
}
