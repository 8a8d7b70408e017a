// The same model with Adam: its moments and step count are optimizer state,
// which a fresh weights file lacks and a checkpoint holds (with the place
// in the data), so training 10 steps, then 10 more from the checkpoint,
// ends exactly where 20 steps do.

// RUN: lcc %s --train --optimizer=adam --lr=0.01 -o %t.lcm
// RUN: rm -rf %t.d && mkdir %t.d
// RUN: lcc-testdata --output=%t.d/x.npy --shape=4,8,16 --uniform=-1,1 --seed=3
// RUN: lcc-testdata --output=%t.d/labels.npy --shape=4,8 --dtype=i32 --uniform=0,10 --seed=4

// (The state: Adam's moments and step, and the six hyper-parameters.)
// RUN: lcc-run %t.lcm --list | FileCheck %s --check-prefix=LIST
// LIST: 13 parameters (11 optimizer state), 680 bytes to bind from --params
// LIST: "proj.weight": [16, 10] f32
// LIST: optimizer state
// RUN: lcc-run %t.lcm --init-params=%t.d/init.safetensors --seed=9
// RUN: %python %S/Inputs/train-check.py dump %t.d/init.safetensors | count 2

// RUN: lcc-train %t.lcm --data=%t.d/x.npy,%t.d/labels.npy --params=%t.d/init.safetensors --steps=20 %one_thread --checkpoint=%t.d/twenty.safetensors --report=json > %t.d/twenty.json
// RUN: %python %S/Inputs/train-check.py report %t.d/twenty.json --steps=20 --evals=1 --decreasing
// RUN: lcc-train %t.lcm --data=%t.d/x.npy,%t.d/labels.npy --params=%t.d/init.safetensors --steps=10 %one_thread --checkpoint=%t.d/ten.safetensors
// RUN: %python %S/Inputs/train-check.py dump %t.d/ten.safetensors | count 13
// RUN: lcc-train %t.lcm --data=%t.d/x.npy,%t.d/labels.npy --params=%t.d/ten.safetensors --steps=10 %one_thread --checkpoint=%t.d/ten+ten.safetensors
// RUN: cmp %t.d/twenty.safetensors %t.d/ten+ten.safetensors

// On data of several batches (14 rows in batches of 4) the checkpoint also
// holds the place in the data: 30 steps and 30 resumed ones are the 60 of
// one run, bit for bit, in order and with --shuffle (30 steps stop at row
// 8 of a pass: restarting at row 0 had given another run).
// RUN: lcc-testdata --output=%t.d/x14.npy --shape=14,8,16 --uniform=-1,1 --seed=5
// RUN: lcc-testdata --output=%t.d/labels14.npy --shape=14,8 --dtype=i32 --uniform=0,10 --seed=6
// RUN: lcc-train %t.lcm --data=%t.d/x14.npy,%t.d/labels14.npy --params=%t.d/init.safetensors --steps=60 %one_thread --checkpoint=%t.d/sixty.safetensors --report=json > %t.d/sixty.json
// RUN: lcc-train %t.lcm --data=%t.d/x14.npy,%t.d/labels14.npy --params=%t.d/init.safetensors --steps=30 %one_thread --checkpoint=%t.d/thirty.safetensors
// RUN: lcc-train %t.lcm --data=%t.d/x14.npy,%t.d/labels14.npy --params=%t.d/thirty.safetensors --steps=30 %one_thread --checkpoint=%t.d/thirty+thirty.safetensors --report=json > %t.d/second.json
// RUN: cmp %t.d/sixty.safetensors %t.d/thirty+thirty.safetensors
// RUN: %python %S/Inputs/train-check.py continues %t.d/second.json %t.d/sixty.json
// RUN: lcc-train %t.lcm --data=%t.d/x14.npy,%t.d/labels14.npy --params=%t.d/init.safetensors --shuffle --seed=8 --steps=60 %one_thread --checkpoint=%t.d/shuffled60.safetensors
// RUN: lcc-train %t.lcm --data=%t.d/x14.npy,%t.d/labels14.npy --params=%t.d/init.safetensors --shuffle --seed=8 --steps=30 %one_thread --checkpoint=%t.d/shuffled30.safetensors
// RUN: lcc-train %t.lcm --data=%t.d/x14.npy,%t.d/labels14.npy --params=%t.d/shuffled30.safetensors --shuffle --steps=30 %one_thread --checkpoint=%t.d/shuffled30+30.safetensors
// RUN: cmp %t.d/shuffled60.safetensors %t.d/shuffled30+30.safetensors
// RUN: not cmp -s %t.d/shuffled60.safetensors %t.d/sixty.safetensors

func.func @loss(%x: tensor<4x8x16xf32>, %labels: tensor<4x8xi32>) -> tensor<f32> {
  %w = attn.param "proj.weight" : tensor<16x10xf32>
  %b = attn.param "proj.bias" : tensor<10xf32>
  %logits = attn.linear %x, %w, %b
      : (tensor<4x8x16xf32>, tensor<16x10xf32>, tensor<10xf32>) -> tensor<4x8x10xf32>
  %loss = attn.softmax_cross_entropy %logits, %labels
      : (tensor<4x8x10xf32>, tensor<4x8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
