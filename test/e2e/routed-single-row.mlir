// Routed attention of one (batch, head) row, at seq 1 and seq 3: the
// one-iteration foralls of its lowering fold away, which used to leave its
// loops outside every dispatch ("'scf.for' op was left outside every
// dispatch"). With one cluster and a full window it equals dense attention.
// RUN: lcc %s -o %t.lcm
// RUN: lcc-testdata --output=%t.q1.npy --shape=1,1,1,8 --seed=1
// RUN: lcc-testdata --output=%t.k1.npy --shape=1,1,1,8 --seed=2
// RUN: lcc-testdata --output=%t.v1.npy --shape=1,1,1,8 --seed=3
// RUN: lcc-testdata --output=%t.q3.npy --shape=1,1,3,1 --seed=4
// RUN: lcc-testdata --output=%t.k3.npy --shape=1,1,3,1 --seed=5
// RUN: lcc-testdata --output=%t.v3.npy --shape=1,1,3,1 --seed=6
// RUN: rm -rf %t.out && mkdir %t.out
// RUN: lcc-run %t.lcm --input=%t.q1.npy --input=%t.k1.npy --input=%t.v1.npy --input=%t.q3.npy --input=%t.k3.npy --input=%t.v3.npy --output-dir=%t.out
// RUN: lcc-reference --op=attention --input=%t.q1.npy --input=%t.k1.npy --input=%t.v1.npy --output=%t.ref1.npy
// RUN: lcc-compare %t.out/result0.npy %t.ref1.npy --rtol=1e-5
// RUN: lcc-reference --op=attention --causal --input=%t.q3.npy --input=%t.k3.npy --input=%t.v3.npy --output=%t.ref3.npy
// RUN: lcc-compare %t.out/result1.npy %t.ref3.npy --rtol=1e-5
func.func @forward(%q1: tensor<1x1x1x8xf32>, %k1: tensor<1x1x1x8xf32>, %v1: tensor<1x1x1x8xf32>,
                   %q3: tensor<1x1x3x1xf32>, %k3: tensor<1x1x3x1xf32>, %v3: tensor<1x1x3x1xf32>)
    -> (tensor<1x1x1x8xf32>, tensor<1x1x3x1xf32>) {
  %0 = attn.routed_attention %q1, %k1, %v1 {clusters = 1 : i64, window = 1 : i64}
      : (tensor<1x1x1x8xf32>, tensor<1x1x1x8xf32>, tensor<1x1x1x8xf32>) -> tensor<1x1x1x8xf32>
  %1 = attn.routed_attention %q3, %k3, %v3 {clusters = 1 : i64, window = 3 : i64, causal = true}
      : (tensor<1x1x3x1xf32>, tensor<1x1x3x1xf32>, tensor<1x1x3x1xf32>) -> tensor<1x1x3x1xf32>
  return %0, %1 : tensor<1x1x1x8xf32>, tensor<1x1x3x1xf32>
}
