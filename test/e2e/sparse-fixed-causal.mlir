// Sparse Transformer fixed attention (stride 32, summary 4, block 64, causal) at seq 300,
// compiled and run, against the reference: dense attention with the
// pattern's mask.
// RUN: lcc %s -o %t.lcm
// RUN: lcc-testdata --output=%t.q.npy --shape=1,1,300,32
// RUN: lcc-testdata --output=%t.k.npy --shape=1,1,300,32
// RUN: lcc-testdata --output=%t.v.npy --shape=1,1,300,32
// RUN: rm -rf %t.out && mkdir %t.out
// RUN: lcc-run %t.lcm --input=%t.q.npy --input=%t.k.npy --input=%t.v.npy --output-dir=%t.out
// RUN: lcc-reference --op=sparse_attention --pattern=fixed --stride=32 --summary=4 --causal --input=%t.q.npy --input=%t.k.npy --input=%t.v.npy --output=%t.ref.npy
// RUN: lcc-compare %t.out/result0.npy %t.ref.npy --rtol=1e-5
func.func @forward(%q: tensor<1x1x300x32xf32>, %k: tensor<1x1x300x32xf32>, %v: tensor<1x1x300x32xf32>) -> tensor<1x1x300x32xf32> {
  %0 = attn.sparse_attention fixed %q, %k, %v {block = 64 : i64, stride = 32 : i64, summary = 4 : i64, causal = true}
      : (tensor<1x1x300x32xf32>, tensor<1x1x300x32xf32>, tensor<1x1x300x32xf32>) -> tensor<1x1x300x32xf32>
  return %0 : tensor<1x1x300x32xf32>
}
