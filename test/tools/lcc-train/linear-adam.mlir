// The same model with Adam: its moments and step count are optimizer state,
// which a fresh weights file lacks and a checkpoint holds, so training 10
// steps, then 10 more from the checkpoint, ends exactly where 20 steps do.

// RUN: lcc %s --train --optimizer=adam --lr=0.01 -o %t.lcm
// RUN: rm -rf %t.d && mkdir %t.d
// RUN: lcc-testdata --output=%t.d/x.npy --shape=4,8,16 --uniform=-1,1 --seed=3
// RUN: lcc-testdata --output=%t.d/labels.npy --shape=4,8 --dtype=i32 --uniform=0,10 --seed=4

// RUN: lcc-run %t.lcm --list | FileCheck %s --check-prefix=LIST
// LIST: 7 parameters (5 optimizer state), 680 bytes to bind from --params
// LIST: "proj.weight": [16, 10] f32
// LIST: optimizer state
// RUN: lcc-run %t.lcm --init-params=%t.d/init.safetensors --seed=9
// RUN: %python %S/Inputs/train-check.py dump %t.d/init.safetensors | count 2

// RUN: lcc-train %t.lcm --data=%t.d/x.npy,%t.d/labels.npy --params=%t.d/init.safetensors --steps=20 --threads=1 --checkpoint=%t.d/twenty.safetensors --report=json > %t.d/twenty.json
// RUN: %python %S/Inputs/train-check.py report %t.d/twenty.json --steps=20 --evals=1 --decreasing
// RUN: lcc-train %t.lcm --data=%t.d/x.npy,%t.d/labels.npy --params=%t.d/init.safetensors --steps=10 --threads=1 --checkpoint=%t.d/ten.safetensors
// RUN: %python %S/Inputs/train-check.py dump %t.d/ten.safetensors | count 7
// RUN: lcc-train %t.lcm --data=%t.d/x.npy,%t.d/labels.npy --params=%t.d/ten.safetensors --steps=10 --threads=1 --checkpoint=%t.d/ten+ten.safetensors
// RUN: cmp %t.d/twenty.safetensors %t.d/ten+ten.safetensors

func.func @loss(%x: tensor<4x8x16xf32>, %labels: tensor<4x8xi32>) -> tensor<f32> {
  %w = attn.param "proj.weight" : tensor<16x10xf32>
  %b = attn.param "proj.bias" : tensor<10xf32>
  %logits = attn.linear %x, %w, %b
      : (tensor<4x8x16xf32>, tensor<16x10xf32>, tensor<10xf32>) -> tensor<4x8x10xf32>
  %loss = attn.softmax_cross_entropy %logits, %labels
      : (tensor<4x8x10xf32>, tensor<4x8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
