// LSH attention where every token's whole neighbourhood is visible: seq 128
// pads to 128 = 2 buckets of 64, so each chunk attends to itself and the
// other chunk, whatever the hashes. The result must equal exact shared-QK
// attention to float rounding, with 1 hash rounds combined.
// RUN: lcc %s -o %t.lcm
// RUN: lcc-testdata --output=%t.qk.npy --shape=1,2,128,16
// RUN: lcc-testdata --output=%t.v.npy --shape=1,2,128,16
// RUN: rm -rf %t.out && mkdir %t.out
// RUN: lcc-run %t.lcm --input=%t.qk.npy --input=%t.v.npy --output-dir=%t.out
// RUN: lcc-reference --op=attention --shared-qk  --input=%t.qk.npy --input=%t.v.npy --output=%t.ref.npy
// RUN: lcc-compare %t.out/result0.npy %t.ref.npy --rtol=1e-5
// --attention=dense compiles the exact attention LSH stands for.
// RUN: lcc %s --attention=dense -o %t.dense.lcm 2>/dev/null
// RUN: rm -rf %t.dense && mkdir %t.dense
// RUN: lcc-run %t.dense.lcm --input=%t.qk.npy --input=%t.v.npy --output-dir=%t.dense
// RUN: lcc-compare %t.dense/result0.npy %t.ref.npy --rtol=1e-5
func.func @forward(%qk: tensor<1x2x128x16xf32>, %v: tensor<1x2x128x16xf32>) -> tensor<1x2x128x16xf32> {
  %0 = attn.lsh_attention %qk, %v {n_hashes = 1 : i64, bucket_size = 64 : i64, seed = 11 : i64} : (tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>) -> tensor<1x2x128x16xf32>
  return %0 : tensor<1x2x128x16xf32>
}
