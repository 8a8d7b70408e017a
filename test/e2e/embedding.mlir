// Embedding lookup of random token ids in [0, 50) into a [50, 12] table.
// RUN: lcc %s -o %t.lcm
// RUN: lcc-testdata --output=%t.t.npy --shape=2,37 --dtype=i32 --uniform=0,50
// RUN: lcc-testdata --output=%t.e.npy --shape=50,12
// RUN: rm -rf %t.out && mkdir %t.out
// RUN: lcc-run %t.lcm --input=%t.t.npy --input=%t.e.npy --output-dir=%t.out
// RUN: lcc-reference --op=embedding --input=%t.t.npy --input=%t.e.npy --output=%t.ref.npy
// RUN: lcc-compare %t.out/result0.npy %t.ref.npy --rtol=1e-5
func.func @forward(%t: tensor<2x37xi32>, %e: tensor<50x12xf32>) -> tensor<2x37x12xf32> {
  %0 = attn.embedding %t, %e : (tensor<2x37xi32>, tensor<50x12xf32>) -> tensor<2x37x12xf32>
  return %0 : tensor<2x37x12xf32>
}
