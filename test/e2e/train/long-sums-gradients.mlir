// Gradients that are sums over 4096 positions: a layer norm's gain and
// bias, a linear's bias, and the loss, the mean over the positions. Summed
// in one running float32 sum, they were 1e-6 to 2e-6 off the double
// reference's central differences (the weight, a contraction, 1e-7); as a
// float32 framework's cascaded reductions do, lcc sums blocks of about
// sqrt(positions) terms and then the blocks (summationBlock in
// passes/LowerToLinalg/TensorOps.h): every one now within 3e-7 on
// random draws, the bound below 8e-7. A smooth model (no ReLU), so the
// differences are exact to far below it. On the GPU path (the emulator)
// each thread summed the weight's gradient over the 4096 positions in one
// running sum, 1e-6 to 2.1e-6 off; lcc-block-loop-sums sums it in blocks
// too (1.3e-7 to 2e-7).
// RUN: lcc %s --train --emit-gradients -o %t.lcm
// RUN: lcc-run %t.lcm --init-params=%t.w.safetensors --seed=8
// RUN: lcc-testdata --output=%t.x.npy --shape=1,4096,64
// RUN: lcc-testdata --output=%t.labels.npy --shape=1,4096 --dtype=i32 --uniform=0,16
// RUN: rm -rf %t.out && mkdir %t.out
// RUN: lcc-run %t.lcm --function=loss_gradients --input=%t.x.npy --input=%t.labels.npy --params=%t.w.safetensors --output-dir=%t.out --results-file=%t.g.safetensors
// RUN: lcc-reference --graph=%S/Inputs/long-sums.json --params=%t.w.safetensors --input=%t.x.npy --input=%t.labels.npy --check-gradients=%t.g.safetensors --fd-entries=64 --fd-step=1e-4 --rtol=8e-7 | FileCheck %s
// CHECK: loss: compiled
// CHECK-DAG: norm.g: 64 of 64 entries
// CHECK-DAG: norm.b: 64 of 64 entries
// CHECK-DAG: head.b: 16 of 16 entries
// CHECK: max relative error

func.func @loss(%x: tensor<1x4096x64xf32>, %labels: tensor<1x4096xi32>) -> tensor<f32> {
  %g = attn.param "norm.g" : tensor<64xf32>
  %b = attn.param "norm.b" : tensor<64xf32>
  %n = attn.layer_norm %x, %g, %b : (tensor<1x4096x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x4096x64xf32>
  %hw = attn.param "head.w" : tensor<64x16xf32>
  %hb = attn.param "head.b" : tensor<16xf32>
  %logits = attn.linear %n, %hw, %hb : (tensor<1x4096x64xf32>, tensor<64x16xf32>, tensor<16xf32>) -> tensor<1x4096x16xf32>
  %l = attn.softmax_cross_entropy %logits, %labels : (tensor<1x4096x16xf32>, tensor<1x4096xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
