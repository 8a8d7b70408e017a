// The backward of attention whose first four queries score every key -inf
// (no mask region): their rows are zeros in the forward, so nothing of
// theirs reaches the loss and their gradients are 0, not NaN; every other
// gradient matches central finite differences of the double-precision
// reference, which applies the same rule (docs/masks.md).
// RUN: lcc %s --train --emit-gradients -o %t.lcm
// RUN: lcc-run %t.lcm --init-params=%t.w.safetensors --seed=17
// RUN: lcc-testdata --output=%t.x.npy --shape=1,80,8
// RUN: lcc-testdata --output=%t.labels.npy --shape=1,80 --dtype=i32 --uniform=0,6
// RUN: rm -rf %t.out && mkdir %t.out
// RUN: lcc-run %t.lcm --function=loss_gradients --input=%t.x.npy --input=%t.labels.npy --params=%t.w.safetensors --output-dir=%t.out --results-file=%t.g.safetensors
// RUN: lcc-reference --graph=%S/Inputs/empty-rows.json --params=%t.w.safetensors --input=%t.x.npy --input=%t.labels.npy --check-gradients=%t.g.safetensors --fd-entries=1000 --rtol=1e-5 | FileCheck %s
// CHECK: loss: compiled
// CHECK-DAG: attn.wq: 64 of 64 entries
// CHECK-DAG: attn.wk: 64 of 64 entries
// CHECK-DAG: attn.wv: 64 of 64 entries
// CHECK: max relative error
func.func @loss(%x: tensor<1x80x8xf32>, %labels: tensor<1x80xi32>) -> tensor<f32> {
  %wq = attn.param "attn.wq" : tensor<8x8xf32>
  %wk = attn.param "attn.wk" : tensor<8x8xf32>
  %wv = attn.param "attn.wv" : tensor<8x8xf32>
  %wo = attn.param "attn.wo" : tensor<8x8xf32>
  %h = attn.multi_head_attention %x, query %wq, key %wk, value %wv, output %wo {heads = 2 : i64}
      : (tensor<1x80x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x80x8xf32> {
  ^bb0(%q: tensor<1x2x80x4xf32>, %k: tensor<1x2x80x4xf32>, %v: tensor<1x2x80x4xf32>):
    %o = attn.attention %q, %k, %v : (tensor<1x2x80x4xf32>, tensor<1x2x80x4xf32>, tensor<1x2x80x4xf32>) -> tensor<1x2x80x4xf32>
      score {
      ^bb0(%s: f32, %b: index, %hd: index, %i: index, %j: index):
        %c4 = arith.constant 4 : index
        %early = arith.cmpi slt, %i, %c4 : index
        %ninf = arith.constant 0xFF800000 : f32
        %t = arith.select %early, %ninf, %s : f32
        attn.yield %t : f32
      }
    attn.yield %o : tensor<1x2x80x4xf32>
  }
  %x1 = arith.addf %x, %h : tensor<1x80x8xf32>
  %hw = attn.param "head.w" : tensor<8x6xf32>
  %logits = attn.linear %x1, %hw : (tensor<1x80x8xf32>, tensor<8x6xf32>) -> tensor<1x80x6xf32>
  %l = attn.softmax_cross_entropy %logits, %labels : (tensor<1x80x6xf32>, tensor<1x80xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
