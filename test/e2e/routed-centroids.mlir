// Routed attention with the centroids given as an operand (a trained
// Routing Transformer's): with one centroid and a full window it equals
// dense attention whatever the centroid is.
// RUN: lcc %s -o %t.lcm
// RUN: lcc-testdata --output=%t.q.npy --shape=2,2,80,8
// RUN: lcc-testdata --output=%t.k.npy --shape=2,2,80,8
// RUN: lcc-testdata --output=%t.v.npy --shape=2,2,80,8
// RUN: lcc-testdata --output=%t.c.npy --shape=2,1,8
// RUN: rm -rf %t.out && mkdir %t.out
// RUN: lcc-run %t.lcm --input=%t.q.npy --input=%t.k.npy --input=%t.v.npy --input=%t.c.npy --output-dir=%t.out
// RUN: lcc-reference --op=attention --input=%t.q.npy --input=%t.k.npy --input=%t.v.npy --output=%t.ref.npy
// RUN: lcc-compare %t.out/result0.npy %t.ref.npy --rtol=1e-5
func.func @forward(%q: tensor<2x2x80x8xf32>, %k: tensor<2x2x80x8xf32>, %v: tensor<2x2x80x8xf32>,
                   %c: tensor<2x1x8xf32>) -> tensor<2x2x80x8xf32> {
  %0 = attn.routed_attention %q, %k, %v centroids %c {clusters = 1 : i64, window = 80 : i64}
      : (tensor<2x2x80x8xf32>, tensor<2x2x80x8xf32>, tensor<2x2x80x8xf32>, tensor<2x1x8xf32>)
      -> tensor<2x2x80x8xf32>
  return %0 : tensor<2x2x80x8xf32>
}
