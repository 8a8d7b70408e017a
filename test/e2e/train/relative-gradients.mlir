// The flash backward of Transformer-XL attention against central finite
// differences of the double-precision reference. Every operand of three
// relative attentions is a parameter: no memory (M = 0), a memory as long
// as the segment with clamp_len, and one twice as long with same_length.
// The finite differences check the build with 16 x 20 tiles, whose queries
// and keys are padded, whose memories end mid-tile and whose bands of
// distances start mid-tile, and which same_length makes skip tiles; the
// build with the default tiles (one tile each) must agree with it. A
// fourth attention has one head and, in both builds, one key tile: its
// kernels are single workgroups, whose diagonal reads stay untiled.
// RUN: lcc %s --train --emit-gradients --query-tile=16 --key-tile=20 -o %t.small.lcm
// RUN: lcc %s --train --emit-gradients -o %t.lcm
// RUN: lcc-run %t.lcm --init-params=%t.w.safetensors --seed=21
// RUN: lcc-testdata --output=%t.labels.npy --shape=1,2,24 --dtype=i32 --uniform=0,8
// RUN: lcc-testdata --output=%t.labels1.npy --shape=1,1,8 --dtype=i32 --uniform=0,8
// RUN: rm -rf %t.out && mkdir %t.out
// RUN: lcc-run %t.small.lcm --function=loss_gradients --input=%t.labels.npy --input=%t.labels1.npy --params=%t.w.safetensors --output-dir=%t.out --results-file=%t.small.safetensors
// RUN: lcc-reference --graph=%S/Inputs/relative.json --params=%t.w.safetensors --input=%t.labels.npy --input=%t.labels1.npy --check-gradients=%t.small.safetensors --fd-entries=200 --rtol=1e-5 | FileCheck %s
// RUN: lcc-run %t.lcm --function=loss_gradients --input=%t.labels.npy --input=%t.labels1.npy --params=%t.w.safetensors --output-dir=%t.out --results-file=%t.g.safetensors
// RUN: lcc-compare %t.g.safetensors %t.small.safetensors --rtol=1e-5
// CHECK: loss: compiled
// CHECK-DAG: none.q: 200 of 384 entries
// CHECK-DAG: clamped.k: 200 of 768 entries
// CHECK-DAG: clamped.pos: 200 of 768 entries
// CHECK-DAG: none.u: 16 of 16 entries
// CHECK-DAG: same_length.v: 200 of 1152 entries
// CHECK-DAG: same_length.w: 16 of 16 entries
// CHECK-DAG: one_head.pos: 128 of 128 entries
// CHECK: max relative error
func.func @loss(%labels: tensor<1x2x24xi32>, %labels1: tensor<1x1x8xi32>) -> tensor<f32> {
  %none_q = attn.param "none.q" : tensor<1x2x24x8xf32>
  %none_k = attn.param "none.k" : tensor<1x2x24x8xf32>
  %none_v = attn.param "none.v" : tensor<1x2x24x8xf32>
  %none_pos = attn.param "none.pos" : tensor<2x24x8xf32>
  %none_u = attn.param "none.u" : tensor<2x8xf32>
  %none_w = attn.param "none.w" : tensor<2x8xf32>
  %none_o = attn.relative_attention %none_q, %none_k, %none_v, %none_pos, %none_u, %none_w
      : (tensor<1x2x24x8xf32>, tensor<1x2x24x8xf32>, tensor<1x2x24x8xf32>, tensor<2x24x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<1x2x24x8xf32>
  %none_loss = attn.softmax_cross_entropy %none_o, %labels : (tensor<1x2x24x8xf32>, tensor<1x2x24xi32>) -> tensor<f32>
  %clamped_q = attn.param "clamped.q" : tensor<1x2x24x8xf32>
  %clamped_k = attn.param "clamped.k" : tensor<1x2x48x8xf32>
  %clamped_v = attn.param "clamped.v" : tensor<1x2x48x8xf32>
  %clamped_pos = attn.param "clamped.pos" : tensor<2x48x8xf32>
  %clamped_u = attn.param "clamped.u" : tensor<2x8xf32>
  %clamped_w = attn.param "clamped.w" : tensor<2x8xf32>
  %clamped_o = attn.relative_attention %clamped_q, %clamped_k, %clamped_v, %clamped_pos, %clamped_u, %clamped_w {clamp_len = 30 : i64}
      : (tensor<1x2x24x8xf32>, tensor<1x2x48x8xf32>, tensor<1x2x48x8xf32>, tensor<2x48x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<1x2x24x8xf32>
  %clamped_loss = attn.softmax_cross_entropy %clamped_o, %labels : (tensor<1x2x24x8xf32>, tensor<1x2x24xi32>) -> tensor<f32>
  %same_length_q = attn.param "same_length.q" : tensor<1x2x24x8xf32>
  %same_length_k = attn.param "same_length.k" : tensor<1x2x72x8xf32>
  %same_length_v = attn.param "same_length.v" : tensor<1x2x72x8xf32>
  %same_length_pos = attn.param "same_length.pos" : tensor<2x72x8xf32>
  %same_length_u = attn.param "same_length.u" : tensor<2x8xf32>
  %same_length_w = attn.param "same_length.w" : tensor<2x8xf32>
  %same_length_o = attn.relative_attention %same_length_q, %same_length_k, %same_length_v, %same_length_pos, %same_length_u, %same_length_w {same_length = 36 : i64}
      : (tensor<1x2x24x8xf32>, tensor<1x2x72x8xf32>, tensor<1x2x72x8xf32>, tensor<2x72x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<1x2x24x8xf32>
  %same_length_loss = attn.softmax_cross_entropy %same_length_o, %labels : (tensor<1x2x24x8xf32>, tensor<1x2x24xi32>) -> tensor<f32>
  %one_head_q = attn.param "one_head.q" : tensor<1x1x8x8xf32>
  %one_head_k = attn.param "one_head.k" : tensor<1x1x16x8xf32>
  %one_head_v = attn.param "one_head.v" : tensor<1x1x16x8xf32>
  %one_head_pos = attn.param "one_head.pos" : tensor<1x16x8xf32>
  %one_head_u = attn.param "one_head.u" : tensor<1x8xf32>
  %one_head_w = attn.param "one_head.w" : tensor<1x8xf32>
  %one_head_o = attn.relative_attention %one_head_q, %one_head_k, %one_head_v, %one_head_pos, %one_head_u, %one_head_w
      : (tensor<1x1x8x8xf32>, tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>, tensor<1x16x8xf32>, tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x1x8x8xf32>
  %one_head_loss = attn.softmax_cross_entropy %one_head_o, %labels1 : (tensor<1x1x8x8xf32>, tensor<1x1x8xi32>) -> tensor<f32>
  %sum0 = arith.addf %none_loss, %one_head_loss : tensor<f32>
  %sum = arith.addf %sum0, %clamped_loss : tensor<f32>
  %total = arith.addf %sum, %same_length_loss : tensor<f32>
  return %total : tensor<f32>
}
