// Attention of 70 queries over 150 keys with an explicit scale and a value
// head_dim (24) different from the key head_dim (16), against the
// reference.
// RUN: lcc %s -o %t.lcm
// RUN: lcc-testdata --output=%t.q.npy --shape=1,3,70,16
// RUN: lcc-testdata --output=%t.k.npy --shape=1,3,150,16
// RUN: lcc-testdata --output=%t.v.npy --shape=1,3,150,24
// RUN: rm -rf %t.out && mkdir %t.out
// RUN: lcc-run %t.lcm --input=%t.q.npy --input=%t.k.npy --input=%t.v.npy --output-dir=%t.out
// RUN: lcc-reference --op=attention --scale=0.3 --input=%t.q.npy --input=%t.k.npy --input=%t.v.npy --output=%t.ref.npy
// RUN: lcc-compare %t.out/result0.npy %t.ref.npy --rtol=1e-5
func.func @forward(%q: tensor<1x3x70x16xf32>, %k: tensor<1x3x150x16xf32>,
                   %v: tensor<1x3x150x24xf32>) -> tensor<1x3x70x24xf32> {
  %0 = attn.attention %q, %k, %v {scale = 0.3 : f32}
      : (tensor<1x3x70x16xf32>, tensor<1x3x150x16xf32>, tensor<1x3x150x24xf32>)
      -> tensor<1x3x70x24xf32>
  return %0 : tensor<1x3x70x24xf32>
}
