// Routed attention with one cluster and a window of the whole sequence
// (150 keys, not a multiple of the 64-query tiles) equals dense attention,
// compiled and run, against the reference at rtol 1e-5. The centroids come
// from the compiled k-means.
// RUN: lcc %s -o %t.lcm
// RUN: lcc-testdata --output=%t.q.npy --shape=1,2,150,16
// RUN: lcc-testdata --output=%t.k.npy --shape=1,2,150,16
// RUN: lcc-testdata --output=%t.v.npy --shape=1,2,150,16
// RUN: rm -rf %t.out && mkdir %t.out
// RUN: lcc-run %t.lcm --input=%t.q.npy --input=%t.k.npy --input=%t.v.npy --output-dir=%t.out
// RUN: lcc-reference --op=attention  --input=%t.q.npy --input=%t.k.npy --input=%t.v.npy --output=%t.ref.npy
// RUN: lcc-compare %t.out/result0.npy %t.ref.npy --rtol=1e-5
func.func @forward(%q: tensor<1x2x150x16xf32>, %k: tensor<1x2x150x16xf32>, %v: tensor<1x2x150x16xf32>) -> tensor<1x2x150x16xf32> {
  %0 = attn.routed_attention %q, %k, %v {clusters = 1 : i64, window = 150 : i64}
      : (tensor<1x2x150x16xf32>, tensor<1x2x150x16xf32>, tensor<1x2x150x16xf32>) -> tensor<1x2x150x16xf32>
  return %0 : tensor<1x2x150x16xf32>
}
