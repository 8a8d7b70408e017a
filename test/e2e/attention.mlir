// Dense attention, compiled and run, against the double-precision
// reference: non-causal, seq 100 (not a multiple of the 64-wide tiles),
// batch 2, 2 heads, head_dim 16. Inputs are fresh random data; the seed
// is printed.
// RUN: lcc %s -o %t.lcm
// RUN: lcc-testdata --output=%t.q.npy --shape=2,2,100,16
// RUN: lcc-testdata --output=%t.k.npy --shape=2,2,100,16
// RUN: lcc-testdata --output=%t.v.npy --shape=2,2,100,16
// RUN: rm -rf %t.out && mkdir %t.out
// RUN: lcc-run %t.lcm --input=%t.q.npy --input=%t.k.npy --input=%t.v.npy --output-dir=%t.out
// RUN: lcc-reference --op=attention --input=%t.q.npy --input=%t.k.npy --input=%t.v.npy --output=%t.ref.npy
// RUN: lcc-compare %t.out/result0.npy %t.ref.npy --rtol=1e-5
func.func @forward(%q: tensor<2x2x100x16xf32>, %k: tensor<2x2x100x16xf32>,
                   %v: tensor<2x2x100x16xf32>) -> tensor<2x2x100x16xf32> {
  %0 = attn.attention %q, %k, %v
      : (tensor<2x2x100x16xf32>, tensor<2x2x100x16xf32>, tensor<2x2x100x16xf32>)
      -> tensor<2x2x100x16xf32>
  return %0 : tensor<2x2x100x16xf32>
}
