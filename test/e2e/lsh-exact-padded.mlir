// LSH attention where every token's whole neighbourhood is visible: seq 100
// in chunks of 100 pads to 200, so every round sorts the real tokens into
// its first chunk and the padding into its second (which the next round's
// first chunk looks back at, and must not see). The result must equal
// exact shared-QK attention (causal) to float rounding, with 4 hash rounds
// combined.
// RUN: lcc %s -o %t.lcm
// RUN: lcc-testdata --output=%t.qk.npy --shape=1,2,100,16
// RUN: lcc-testdata --output=%t.v.npy --shape=1,2,100,16
// RUN: rm -rf %t.out && mkdir %t.out
// RUN: lcc-run %t.lcm --input=%t.qk.npy --input=%t.v.npy --output-dir=%t.out
// RUN: lcc-reference --op=attention --shared-qk --causal --input=%t.qk.npy --input=%t.v.npy --output=%t.ref.npy
// RUN: lcc-compare %t.out/result0.npy %t.ref.npy --rtol=1e-5
func.func @forward(%qk: tensor<1x2x100x16xf32>, %v: tensor<1x2x100x16xf32>) -> tensor<1x2x100x16xf32> {
  %0 = attn.lsh_attention %qk, %v {n_hashes = 4 : i64, bucket_size = 100 : i64, seed = 11 : i64, causal = true} : (tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32>) -> tensor<1x2x100x16xf32>
  return %0 : tensor<1x2x100x16xf32>
}
