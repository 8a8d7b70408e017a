// Linear with bias, [3, 17, 40] x [40, 24], against the reference.
// RUN: lcc %s -o %t.lcm
// RUN: lcc-testdata --output=%t.x.npy --shape=3,17,40
// RUN: lcc-testdata --output=%t.w.npy --shape=40,24
// RUN: lcc-testdata --output=%t.b.npy --shape=24
// RUN: rm -rf %t.out && mkdir %t.out
// RUN: lcc-run %t.lcm --input=%t.x.npy --input=%t.w.npy --input=%t.b.npy --output-dir=%t.out
// RUN: lcc-reference --op=linear --input=%t.x.npy --input=%t.w.npy --input=%t.b.npy --output=%t.ref.npy
// RUN: lcc-compare %t.out/result0.npy %t.ref.npy --rtol=1e-5
func.func @forward(%x: tensor<3x17x40xf32>, %w: tensor<40x24xf32>, %b: tensor<24xf32>)
    -> tensor<3x17x24xf32> {
  %0 = attn.linear %x, %w, %b
      : (tensor<3x17x40xf32>, tensor<40x24xf32>, tensor<24xf32>) -> tensor<3x17x24xf32>
  return %0 : tensor<3x17x24xf32>
}
