// A model compiled without --train has no train_step for lcc-train to run.

// RUN: lcc %s -o %t.lcm
// RUN: lcc-testdata --output=%t.x.npy --shape=4,8,16
// RUN: lcc-testdata --output=%t.labels.npy --shape=4,8 --dtype=i32 --uniform=0,10
// RUN: not lcc-train %t.lcm --data=%t.x.npy,%t.labels.npy 2>%t.err
// RUN: FileCheck %s --input-file=%t.err
// RUN: count 1 < %t.err
// CHECK: lcc-train: error: {{.*}}.lcm has no train_step: compile it with lcc --train

func.func @loss(%x: tensor<4x8x16xf32>, %labels: tensor<4x8xi32>) -> tensor<f32> {
  %w = attn.param "proj.weight" : tensor<16x10xf32>
  %b = attn.param "proj.bias" : tensor<10xf32>
  %logits = attn.linear %x, %w, %b
      : (tensor<4x8x16xf32>, tensor<16x10xf32>, tensor<10xf32>) -> tensor<4x8x10xf32>
  %loss = attn.softmax_cross_entropy %logits, %labels
      : (tensor<4x8x10xf32>, tensor<4x8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
