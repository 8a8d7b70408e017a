// Routed attention on clustered tokens (16 directions of 64 tokens per
// head; queries = keys = values = the tokens) with 16 clusters from the
// compiled k-means and windows of 128 keys: close to dense attention.
// Fixed seed (7): the claim is about one distribution. Measured l2
// relative error 3.0e-3.
// RUN: lcc %s -o %t.lcm
// RUN: lcc-testdata --output=%t.x.npy --shape=1,2,1024,32 --clustered=16 --radius=12 --noise=0.05 --seed=7
// RUN: rm -rf %t.out && mkdir %t.out
// RUN: lcc-run %t.lcm --input=%t.x.npy --input=%t.x.npy --input=%t.x.npy --output-dir=%t.out
// RUN: lcc-reference --op=attention --input=%t.x.npy --input=%t.x.npy --input=%t.x.npy --output=%t.ref.npy
// RUN: lcc-compare %t.out/result0.npy %t.ref.npy --metric=l2 --rtol=1e-2
func.func @forward(%q: tensor<1x2x1024x32xf32>, %k: tensor<1x2x1024x32xf32>, %v: tensor<1x2x1024x32xf32>) -> tensor<1x2x1024x32xf32> {
  %0 = attn.routed_attention %q, %k, %v {clusters = 16 : i64, window = 128 : i64, seed = 1 : i64}
      : (tensor<1x2x1024x32xf32>, tensor<1x2x1024x32xf32>, tensor<1x2x1024x32xf32>) -> tensor<1x2x1024x32xf32>
  return %0 : tensor<1x2x1024x32xf32>
}
