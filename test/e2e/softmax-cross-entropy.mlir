// Mean softmax cross-entropy of [3, 21, 30] logits against labels in
// [0, 30).
// RUN: lcc %s -o %t.lcm
// RUN: lcc-testdata --output=%t.l.npy --shape=3,21,30
// RUN: lcc-testdata --output=%t.y.npy --shape=3,21 --dtype=i32 --uniform=0,30
// RUN: rm -rf %t.out && mkdir %t.out
// RUN: lcc-run %t.lcm --input=%t.l.npy --input=%t.y.npy --output-dir=%t.out
// RUN: lcc-reference --op=softmax_cross_entropy --input=%t.l.npy --input=%t.y.npy --output=%t.ref.npy
// RUN: lcc-compare %t.out/result0.npy %t.ref.npy --rtol=1e-5
func.func @forward(%l: tensor<3x21x30xf32>, %y: tensor<3x21xi32>) -> tensor<f32> {
  %0 = attn.softmax_cross_entropy %l, %y : (tensor<3x21x30xf32>, tensor<3x21xi32>) -> tensor<f32>
  return %0 : tensor<f32>
}
