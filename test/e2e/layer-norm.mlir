// Layer norm over 48 features of [2, 33, 48] with epsilon 1e-3, against the
// reference.
// RUN: lcc %s -o %t.lcm
// RUN: lcc-testdata --output=%t.x.npy --shape=2,33,48
// RUN: lcc-testdata --output=%t.g.npy --shape=48
// RUN: lcc-testdata --output=%t.b.npy --shape=48
// RUN: rm -rf %t.out && mkdir %t.out
// RUN: lcc-run %t.lcm --input=%t.x.npy --input=%t.g.npy --input=%t.b.npy --output-dir=%t.out
// RUN: lcc-reference --op=layer_norm --epsilon=1e-3 --input=%t.x.npy --input=%t.g.npy --input=%t.b.npy --output=%t.ref.npy
// RUN: lcc-compare %t.out/result0.npy %t.ref.npy --rtol=1e-5
func.func @forward(%x: tensor<2x33x48xf32>, %g: tensor<48xf32>, %b: tensor<48xf32>)
    -> tensor<2x33x48xf32> {
  %0 = attn.layer_norm %x, %g, %b {epsilon = 1.0e-3 : f32}
      : (tensor<2x33x48xf32>, tensor<48xf32>, tensor<48xf32>) -> tensor<2x33x48xf32>
  return %0 : tensor<2x33x48xf32>
}
