// Shared-QK (Reformer) causal attention at seq 130: unit-norm keys and the
// -1e5 self score, against the reference.
// RUN: lcc %s -o %t.lcm
// RUN: lcc-testdata --output=%t.qk.npy --shape=1,2,130,32
// RUN: lcc-testdata --output=%t.v.npy --shape=1,2,130,32
// RUN: rm -rf %t.out && mkdir %t.out
// RUN: lcc-run %t.lcm --input=%t.qk.npy --input=%t.v.npy --output-dir=%t.out
// RUN: lcc-reference --op=attention --causal --shared-qk --input=%t.qk.npy --input=%t.v.npy --output=%t.ref.npy
// RUN: lcc-compare %t.out/result0.npy %t.ref.npy --rtol=1e-5
func.func @forward(%qk: tensor<1x2x130x32xf32>, %v: tensor<1x2x130x32xf32>)
    -> tensor<1x2x130x32xf32> {
  %0 = attn.attention %qk, %qk, %v {causal = true, shared_qk}
      : (tensor<1x2x130x32xf32>, tensor<1x2x130x32xf32>, tensor<1x2x130x32xf32>)
      -> tensor<1x2x130x32xf32>
  return %0 : tensor<1x2x130x32xf32>
}
