// lcc-train --plot draws the loss of every step and the eval loss of every
// evaluation against the step (and the tokens trained) as one SVG file,
// rewritten after each evaluation: well-formed XML with a point per step
// and per evaluation. A resumed run's steps count on from the
// checkpoint's. The path is checked before training like --checkpoint's.

// RUN: lcc %s --train --optimizer=sgd --lr=0.1 -o %t.lcm
// RUN: rm -rf %t.d && mkdir %t.d
// RUN: lcc-testdata --output=%t.d/x.npy --shape=4,8,16 --uniform=-1,1 --seed=1
// RUN: lcc-testdata --output=%t.d/labels.npy --shape=4,8 --dtype=i32 --uniform=0,10 --seed=2
// RUN: lcc-train %t.lcm --data=%t.d/x.npy,%t.d/labels.npy --steps=20 --eval-every=5 --plot=%t.d/loss.svg --checkpoint=%t.d/c.safetensors
// RUN: %python %S/Inputs/train-check.py plot %t.d/loss.svg --steps=20 --evals=4 | FileCheck %s --check-prefix=PLOT
// PLOT: plot ok: 20 loss points (steps 1-20), 4 eval points
// RUN: FileCheck %s --check-prefix=SVG --input-file=%t.d/loss.svg
// SVG: <svg xmlns="http://www.w3.org/2000/svg"
// SVG: plot.mlir.tmp.lcm: loss (blue) and eval loss (orange), 20 steps
// SVG: step (tokens trained below it)
// RUN: lcc-train %t.lcm --data=%t.d/x.npy,%t.d/labels.npy --params=%t.d/c.safetensors --steps=10 --eval-every=5 --plot=%t.d/more.svg
// RUN: %python %S/Inputs/train-check.py plot %t.d/more.svg --steps=10 --evals=2 --first=21 | FileCheck %s --check-prefix=MORE
// MORE: plot ok: 10 loss points (steps 21-30), 2 eval points

// RUN: not lcc-train %t.lcm --data=%t.d/x.npy,%t.d/labels.npy --plot=%t.d/x.npy 2>&1 | FileCheck %s --check-prefix=INPUT
// INPUT: lcc-train: error: --plot
// RUN: not lcc-train %t.lcm --data=%t.d/x.npy,%t.d/labels.npy --plot=%t.d/missing/loss.svg 2>&1 | FileCheck %s --check-prefix=FOLDER
// FOLDER: lcc-train: error: --plot: {{.*}}missing

func.func @loss(%x: tensor<4x8x16xf32>, %labels: tensor<4x8xi32>) -> tensor<f32> {
  %w = attn.param "proj.weight" : tensor<16x10xf32>
  %logits = attn.linear %x, %w
      : (tensor<4x8x16xf32>, tensor<16x10xf32>) -> tensor<4x8x10xf32>
  %loss = attn.softmax_cross_entropy %logits, %labels
      : (tensor<4x8x10xf32>, tensor<4x8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
