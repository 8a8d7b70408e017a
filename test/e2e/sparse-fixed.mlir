// Sparse Transformer fixed attention (stride 64, summary 8, block 32) at seq 160,
// compiled and run, against the reference: dense attention with the
// pattern's mask.
// RUN: lcc %s -o %t.lcm
// RUN: lcc-testdata --output=%t.q.npy --shape=1,2,160,16
// RUN: lcc-testdata --output=%t.k.npy --shape=1,2,160,16
// RUN: lcc-testdata --output=%t.v.npy --shape=1,2,160,16
// RUN: rm -rf %t.out && mkdir %t.out
// RUN: lcc-run %t.lcm --input=%t.q.npy --input=%t.k.npy --input=%t.v.npy --output-dir=%t.out
// RUN: lcc-reference --op=sparse_attention --pattern=fixed --stride=64 --summary=8 --input=%t.q.npy --input=%t.k.npy --input=%t.v.npy --output=%t.ref.npy
// RUN: lcc-compare %t.out/result0.npy %t.ref.npy --rtol=1e-5
// --attention=dense makes it the masked attention it equals: the same result.
// RUN: lcc %s --attention=dense -o %t.dense.lcm 2>/dev/null
// RUN: rm -rf %t.dense && mkdir %t.dense
// RUN: lcc-run %t.dense.lcm --input=%t.q.npy --input=%t.k.npy --input=%t.v.npy --output-dir=%t.dense
// RUN: lcc-compare %t.dense/result0.npy %t.ref.npy --rtol=1e-5
func.func @forward(%q: tensor<1x2x160x16xf32>, %k: tensor<1x2x160x16xf32>, %v: tensor<1x2x160x16xf32>) -> tensor<1x2x160x16xf32> {
  %0 = attn.sparse_attention fixed %q, %k, %v {block = 32 : i64, stride = 64 : i64, summary = 8 : i64}
      : (tensor<1x2x160x16xf32>, tensor<1x2x160x16xf32>, tensor<1x2x160x16xf32>) -> tensor<1x2x160x16xf32>
  return %0 : tensor<1x2x160x16xf32>
}
