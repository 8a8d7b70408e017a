// A linear layer and softmax cross-entropy compiled for training with plain
// SGD, trained by lcc-train on one batch: the loss goes down over 20 steps,
// the JSON report has its fields, the checkpoint holds every parameter by
// name and runs with lcc-run --params, and bad data is refused by name.

// RUN: lcc %s --train --optimizer=sgd --lr=0.1 -o %t.lcm
// RUN: rm -rf %t.d && mkdir %t.d
// RUN: lcc-testdata --output=%t.d/x.npy --shape=4,8,16 --uniform=-1,1 --seed=1
// RUN: lcc-testdata --output=%t.d/labels.npy --shape=4,8 --dtype=i32 --uniform=0,10 --seed=2

// The artifact keeps the loss function and adds train_step, which takes its
// arguments.
// RUN: lcc-run %t.lcm --list | FileCheck %s --check-prefix=LIST
// LIST: function "loss"
// LIST-NEXT: input 0 "x": [4, 8, 16] f32
// LIST-NEXT: input 1 "labels": [4, 8] i32, values in [0, 9]
// LIST-NEXT: result 0 "{{[^"]*}}": [] f32
// LIST: function "train_step"
// LIST-NEXT: input 0 "x": [4, 8, 16] f32
// LIST-NEXT: input 1 "labels": [4, 8] i32
// LIST-NEXT: result 0 "{{[^"]*}}": [] f32
// LIST: "proj.weight": [16, 10] f32
// LIST: "proj.bias": [10] f32

// RUN: lcc-train %t.lcm --data=%t.d/x.npy --data=%t.d/labels.npy --steps=20 --eval-every=5 --checkpoint=%t.d/checkpoint.safetensors --report=json > %t.d/report.json 2> %t.d/progress.txt
// RUN: %python %S/Inputs/train-check.py report %t.d/report.json --steps=20 --evals=4 --decreasing | FileCheck %s --check-prefix=REPORT
// REPORT: report ok: 20 steps, 4 evaluations
// RUN: FileCheck %s --check-prefix=JSON --input-file=%t.d/report.json
// JSON: {"steps": 20, "loss": [{{[0-9.e, -]+}}], "lr": [0.1, 0.1{{(, 0.1)+}}], "eval_loss": [{{[0-9.e, -]+}}], "eval_steps": [5, 10, 15, 20], "ms_per_step": {{[0-9.e-]+}}, "peak_bytes": {{[1-9][0-9]*}}}
// RUN: FileCheck %s --check-prefix=PROGRESS --input-file=%t.d/progress.txt
// PROGRESS: step 1/20  loss {{[0-9]+\.[0-9]+}}  lr 1.00e-01  {{[0-9]+}} tokens/s  ETA
// PROGRESS: step 20/20  loss {{[0-9]+\.[0-9]+}}  eval {{[0-9]+\.[0-9]+}}  lr 1.00e-01  {{[0-9]+}} tokens/s  ETA 0:00

// RUN: %python %S/Inputs/train-check.py dump %t.d/checkpoint.safetensors | FileCheck %s --check-prefix=CHECKPOINT
// CHECKPOINT-DAG: proj.weight F32 [16, 10]
// CHECKPOINT-DAG: proj.bias F32 [10]
// RUN: lcc-run %t.lcm --function=loss --input=%t.d/x.npy --input=%t.d/labels.npy --params=%t.d/checkpoint.safetensors --output-dir=%t.d
// RUN: %python %S/Inputs/train-check.py same-loss %t.d/report.json %t.d/result0.npy | FileCheck %s --check-prefix=SAME
// SAME: same loss

// Resuming from the checkpoint continues from the trained weights.
// RUN: lcc-train %t.lcm --data=%t.d/x.npy,%t.d/labels.npy --params=%t.d/checkpoint.safetensors --steps=1 --report=json > %t.d/resumed.json
// RUN: %python %S/Inputs/train-check.py report %t.d/resumed.json --steps=1 --evals=1

// RUN: lcc-testdata --output=%t.d/labels-f32.npy --shape=4,8 --uniform=0,10
// RUN: not lcc-train %t.lcm --data=%t.d/x.npy,%t.d/labels-f32.npy 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: lcc-train: error: --data '{{.*}}labels-f32.npy' for argument 1 'labels': expected dtype i32, got f32
// RUN: lcc-testdata --output=%t.d/x-wide.npy --shape=4,8,17
// RUN: not lcc-train %t.lcm --data=%t.d/x-wide.npy,%t.d/labels.npy 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: lcc-train: error: --data '{{.*}}x-wide.npy' for argument 0 'x': expected shape [N, 8, 16] (the argument's [4, 8, 16] less its batch dimension), got [4, 8, 17]
// RUN: lcc-testdata --output=%t.d/x-nan.npy --shape=4,8,16 --fill=nan
// RUN: not lcc-train %t.lcm --data=%t.d/x-nan.npy,%t.d/labels.npy --steps=5 2>&1 | FileCheck %s --check-prefix=NAN
// NAN: lcc-train: error: loss is nan at step 1

func.func @loss(%x: tensor<4x8x16xf32>, %labels: tensor<4x8xi32>) -> tensor<f32> {
  %w = attn.param "proj.weight" : tensor<16x10xf32>
  %b = attn.param "proj.bias" : tensor<10xf32>
  %logits = attn.linear %x, %w, %b
      : (tensor<4x8x16xf32>, tensor<16x10xf32>, tensor<10xf32>) -> tensor<4x8x10xf32>
  %loss = attn.softmax_cross_entropy %logits, %labels
      : (tensor<4x8x10xf32>, tensor<4x8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
