// Gradients through the Compressive Transformer's ops against central
// finite differences of the double-precision reference: attn.compress at
// rates 2 and 4 (input, weight and bias), tensor.extract_slice (its
// gradient in zeros of the source), and attn.stop_gradient, whose operand
// the reference freezes at its value at the base weights: p enters as
// stop_gradient(p) * p, so its gradient is p0 times the loss's, not twice
// that.
// RUN: lcc %s --train --emit-gradients -o %t.lcm
// RUN: lcc-run %t.lcm --init-params=%t.w.safetensors --seed=8
// RUN: lcc-testdata --output=%t.labels4.npy --shape=1,4 --dtype=i32 --uniform=0,16 --seed=1
// RUN: lcc-testdata --output=%t.labels2.npy --shape=1,2 --dtype=i32 --uniform=0,16 --seed=2
// RUN: rm -rf %t.out && mkdir %t.out
// RUN: lcc-run %t.lcm --function=loss_gradients --input=%t.labels4.npy --input=%t.labels2.npy --params=%t.w.safetensors --output-dir=%t.out --results-file=%t.g.safetensors
// RUN: lcc-reference --graph=%S/Inputs/compress.json --params=%t.w.safetensors --input=%t.labels4.npy --input=%t.labels2.npy --check-gradients=%t.g.safetensors --fd-entries=100 --rtol=1e-5 | FileCheck %s
// CHECK: loss: compiled
// CHECK-DAG: x: 100 of 288 entries
// CHECK-DAG: w: 100 of 768 entries
// CHECK-DAG: b: 16 of 16 entries
// CHECK-DAG: p: 96 of 96 entries
// CHECK-DAG: x4: 100 of 128 entries
// CHECK-DAG: w4: 100 of 1024 entries
// CHECK: max relative error
func.func @loss(%labels4: tensor<1x4xi32>, %labels2: tensor<1x2xi32>) -> tensor<f32> {
  %x = attn.param "x" : tensor<1x12x24xf32>
  %w = attn.param "w" : tensor<2x24x16xf32>
  %b = attn.param "b" : tensor<16xf32>
  %a = attn.compress %x, %w, %b {rate = 2 : i64}
      : (tensor<1x12x24xf32>, tensor<2x24x16xf32>, tensor<16xf32>) -> tensor<1x6x16xf32>
  %p = attn.param "p" : tensor<1x6x16xf32>
  %ps = attn.stop_gradient %p : tensor<1x6x16xf32>
  %m = arith.mulf %ps, %p : tensor<1x6x16xf32>
  %s = arith.addf %a, %m : tensor<1x6x16xf32>
  %cut = tensor.extract_slice %s[0, 1, 0] [1, 4, 16] [1, 1, 1] : tensor<1x6x16xf32> to tensor<1x4x16xf32>
  %l1 = attn.softmax_cross_entropy %cut, %labels4 : (tensor<1x4x16xf32>, tensor<1x4xi32>) -> tensor<f32>
  %x4 = attn.param "x4" : tensor<1x8x16xf32>
  %w4 = attn.param "w4" : tensor<4x16x16xf32>
  %b4 = attn.param "b4" : tensor<16xf32>
  %c = attn.compress %x4, %w4, %b4 {rate = 4 : i64}
      : (tensor<1x8x16xf32>, tensor<4x16x16xf32>, tensor<16xf32>) -> tensor<1x2x16xf32>
  %l2 = attn.softmax_cross_entropy %c, %labels2 : (tensor<1x2x16xf32>, tensor<1x2xi32>) -> tensor<f32>
  %total = arith.addf %l1, %l2 : tensor<f32>
  return %total : tensor<f32>
}
