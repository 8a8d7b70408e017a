// Gradient accumulation: a module compiled with --accumulate-gradients at
// batch 2, trained with --accumulate=2, takes the steps the same model at
// batch 4 takes: each step sums two batches' gradients on the device
// (accumulate_step, then train_step) and updates once with their mean, so
// the parameters, the Adam state and the losses (the mean of the two
// batches' mean losses) agree with the batch-4 run's, clipping included.

// RUN: rm -rf %t.d && mkdir %t.d
// RUN: sed 's/2x8/4x8/g' %s > %t.d/batch4.mlir
// RUN: lcc %s --train --optimizer=adam --lr=0.01 --accumulate-gradients -o %t.d/b2.lcm
// RUN: lcc %t.d/batch4.mlir --train --optimizer=adam --lr=0.01 -o %t.d/b4.lcm
// RUN: lcc-testdata --output=%t.d/x.npy --shape=8,8,16 --uniform=-1,1 --seed=5
// RUN: lcc-testdata --output=%t.d/labels.npy --shape=8,8 --dtype=i32 --uniform=0,10 --seed=6
// RUN: lcc-run %t.d/b4.lcm --init-params=%t.d/init.safetensors --seed=3

// RUN: lcc-run %t.d/b2.lcm --list | FileCheck %s --check-prefix=LIST
// LIST: function "accumulate_step"
// LIST-NEXT: input 0 "x": [2, 8, 16] f32
// LIST: "optimizer.accumulated.proj.weight": [16, 10] f32, optimizer state
// LIST: "optimizer.gradient_scale": [] f32, optimizer state, constant(1)

// Three steps (rows 0-3, 4-7, 0-3), then two resumed from a checkpoint.
// RUN: lcc-train %t.d/b2.lcm --data=%t.d/x.npy,%t.d/labels.npy --params=%t.d/init.safetensors --steps=3 --accumulate=2 --grad-clip=0.5 --checkpoint=%t.d/b2.safetensors --report=json > %t.d/b2.json 2> %t.d/progress.txt
// RUN: lcc-train %t.d/b4.lcm --data=%t.d/x.npy,%t.d/labels.npy --params=%t.d/init.safetensors --steps=3 --grad-clip=0.5 --checkpoint=%t.d/b4.safetensors --report=json > %t.d/b4.json
// RUN: %python %S/Inputs/train-check.py same-params %t.d/b2.safetensors %t.d/b4.safetensors | FileCheck %s --check-prefix=SAME
// SAME: same 7 tensors
// RUN: %python %S/Inputs/train-check.py same-losses %t.d/b2.json %t.d/b4.json | FileCheck %s --check-prefix=LOSSES
// LOSSES: same 3 losses
// RUN: FileCheck %s --check-prefix=PROGRESS --input-file=%t.d/progress.txt
// A step's tokens are both batches'.
// PROGRESS: step 1/3  loss {{[0-9.]+}}  lr 1.00e-02  {{[0-9]+}} tokens/s
// RUN: lcc-train %t.d/b2.lcm --data=%t.d/x.npy,%t.d/labels.npy --params=%t.d/b2.safetensors --steps=2 --accumulate=2 --grad-clip=0.5 --checkpoint=%t.d/b2-more.safetensors
// RUN: lcc-train %t.d/b4.lcm --data=%t.d/x.npy,%t.d/labels.npy --params=%t.d/b4.safetensors --steps=2 --grad-clip=0.5 --checkpoint=%t.d/b4-more.safetensors
// RUN: %python %S/Inputs/train-check.py same-params %t.d/b2-more.safetensors %t.d/b4-more.safetensors | FileCheck %s --check-prefix=SAME

// Without --accumulate the same module trains a batch of 2 a step, also
// when resumed from a checkpoint of --accumulate=2, which holds its scale
// of 1/2: lcc-train sets the scale whatever the checkpoint holds. One pass
// over 8 rows is 4 steps, and with --accumulate=2 it is 2.
// RUN: %python %S/Inputs/train-check.py dump %t.d/b2.safetensors | FileCheck %s --check-prefix=HALF
// HALF: optimizer.gradient_scale F32 [] 0.5
// RUN: lcc-train %t.d/b2.lcm --data=%t.d/x.npy,%t.d/labels.npy --params=%t.d/b2.safetensors --steps=1 --checkpoint=%t.d/one.safetensors
// RUN: %python %S/Inputs/train-check.py dump %t.d/one.safetensors | FileCheck %s --check-prefix=WHOLE
// WHOLE: optimizer.gradient_scale F32 [] 1
// RUN: lcc-train %t.d/b2.lcm --data=%t.d/x.npy,%t.d/labels.npy --params=%t.d/init.safetensors --report=json | FileCheck %s --check-prefix=PASS1
// PASS1: {"steps": 4,
// RUN: lcc-train %t.d/b2.lcm --data=%t.d/x.npy,%t.d/labels.npy --params=%t.d/init.safetensors --accumulate=2 --report=json | FileCheck %s --check-prefix=PASS2
// PASS2: {"steps": 2,

// RUN: not lcc-train %t.d/b4.lcm --data=%t.d/x.npy,%t.d/labels.npy --accumulate=2 2>&1 | FileCheck %s --check-prefix=NOACC
// NOACC: lcc-train: error: --accumulate: {{.*}}b4.lcm has no accumulate_step: compile it with lcc --train --accumulate-gradients
// RUN: not lcc-train %t.d/b2.lcm --data=%t.d/x.npy,%t.d/labels.npy --accumulate=0 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: lcc-train: error: --accumulate must be at least 1
// RUN: not lcc --accumulate-gradients %s -o %t.d/x.lcm 2>&1 | FileCheck %s --check-prefix=NOTRAIN
// NOTRAIN: lcc: error: --accumulate-gradients configures the train step: add --train

func.func @loss(%x: tensor<2x8x16xf32>, %labels: tensor<2x8xi32>) -> tensor<f32> {
  %w = attn.param "proj.weight" : tensor<16x10xf32>
  %b = attn.param "proj.bias" : tensor<10xf32>
  %logits = attn.linear %x, %w, %b
      : (tensor<2x8x16xf32>, tensor<16x10xf32>, tensor<10xf32>) -> tensor<2x8x10xf32>
  %loss = attn.softmax_cross_entropy %logits, %labels
      : (tensor<2x8x10xf32>, tensor<2x8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
