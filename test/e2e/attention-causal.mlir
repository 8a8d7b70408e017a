// Causal dense attention at seq 200 (three full key tiles and a partial
// one), 1 head of 32, against the reference.
// RUN: lcc %s -o %t.lcm
// RUN: lcc-testdata --output=%t.q.npy --shape=1,1,200,32
// RUN: lcc-testdata --output=%t.k.npy --shape=1,1,200,32
// RUN: lcc-testdata --output=%t.v.npy --shape=1,1,200,32
// RUN: rm -rf %t.out && mkdir %t.out
// RUN: lcc-run %t.lcm --input=%t.q.npy --input=%t.k.npy --input=%t.v.npy --output-dir=%t.out
// RUN: lcc-reference --op=attention --causal --input=%t.q.npy --input=%t.k.npy --input=%t.v.npy --output=%t.ref.npy
// RUN: lcc-compare %t.out/result0.npy %t.ref.npy --rtol=1e-5
func.func @forward(%q: tensor<1x1x200x32xf32>, %k: tensor<1x1x200x32xf32>,
                   %v: tensor<1x1x200x32xf32>) -> tensor<1x1x200x32xf32> {
  %0 = attn.attention %q, %k, %v {causal = true}
      : (tensor<1x1x200x32xf32>, tensor<1x1x200x32xf32>, tensor<1x1x200x32xf32>)
      -> tensor<1x1x200x32xf32>
  return %0 : tensor<1x1x200x32xf32>
}
