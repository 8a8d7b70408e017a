// --emit-gradients adds loss_gradients: result 0 the loss, then the gradient
// of each parameter under that parameter's name, which lcc-run --results-file
// writes by name. With --optimizer=sgd --lr=1, one training step changes each
// parameter by exactly minus its gradient (docs/design.md §6).

// RUN: lcc %s --train --optimizer=sgd --lr=1 --emit-gradients -o %t.lcm
// RUN: rm -rf %t.d && mkdir %t.d
// RUN: lcc-testdata --output=%t.d/x.npy --shape=4,8,16 --uniform=-1,1 --seed=5
// RUN: lcc-testdata --output=%t.d/labels.npy --shape=4,8 --dtype=i32 --uniform=0,10 --seed=6
// RUN: lcc-run %t.lcm --init-params=%t.d/before.safetensors --seed=3

// RUN: lcc-run %t.lcm --function=loss_gradients --input=%t.d/x.npy --input=%t.d/labels.npy --params=%t.d/before.safetensors --output-dir=%t.d --results-file=%t.d/gradients.safetensors
// RUN: %python %S/Inputs/train-check.py dump %t.d/gradients.safetensors | FileCheck %s --check-prefix=GRADIENTS
// GRADIENTS: loss F32 []
// GRADIENTS-DAG: proj.weight F32 [16, 10]
// GRADIENTS-DAG: proj.bias F32 [10]

// RUN: lcc-train %t.lcm --data=%t.d/x.npy,%t.d/labels.npy --params=%t.d/before.safetensors --steps=1 --checkpoint=%t.d/after.safetensors
// RUN: %python %S/Inputs/train-check.py sgd-step %t.d/before.safetensors %t.d/gradients.safetensors %t.d/after.safetensors | FileCheck %s --check-prefix=STEP
// STEP: each parameter moved by minus its gradient

func.func @loss(%x: tensor<4x8x16xf32>, %labels: tensor<4x8xi32>) -> tensor<f32> {
  %w = attn.param "proj.weight" : tensor<16x10xf32>
  %b = attn.param "proj.bias" : tensor<10xf32>
  %logits = attn.linear %x, %w, %b
      : (tensor<4x8x16xf32>, tensor<16x10xf32>, tensor<10xf32>) -> tensor<4x8x10xf32>
  %loss = attn.softmax_cross_entropy %logits, %labels
      : (tensor<4x8x10xf32>, tensor<4x8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
