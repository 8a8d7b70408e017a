// Reversible blocks, differentiated: F = layer norm + shared-QK causal
// multi-head attention, G = layer norm + ReLU feed-forward, both streams
// starting from the input and summed before the head, against central
// finite differences of the double-precision reference on every entry.
// The inputs are random, so a ReLU input now and then lies within the
// difference step of zero, the loss has no derivative there along the
// entries feeding it (g.w1, g.b1 most often, any parameter before G in
// principle), and --skip-kinks leaves such entries out.
// RUN: lcc %s --train --emit-gradients -o %t.lcm
// RUN: lcc-run %t.lcm --init-params=%t.w.safetensors --seed=14
// RUN: lcc-testdata --output=%t.x.npy --shape=1,80,8
// RUN: lcc-testdata --output=%t.labels.npy --shape=1,80 --dtype=i32 --uniform=0,6
// RUN: rm -rf %t.out && mkdir %t.out
// RUN: lcc-run %t.lcm --function=loss_gradients --input=%t.x.npy --input=%t.labels.npy --params=%t.w.safetensors --output-dir=%t.out --results-file=%t.g.safetensors
// RUN: lcc-reference --graph=%S/Inputs/reversible.json --params=%t.w.safetensors --input=%t.x.npy --input=%t.labels.npy --check-gradients=%t.g.safetensors --fd-entries=1000 --fd-step=1e-5 --skip-kinks --rtol=1e-5 | FileCheck %s
// CHECK: loss: compiled
// CHECK-DAG: f.wq: {{[0-9]+}} of 64 entries
// CHECK-DAG: g.b1: {{[0-9]+}} of 16 entries
// CHECK: max relative error
func.func @loss(%x: tensor<1x80x8xf32>, %labels: tensor<1x80xi32>) -> tensor<f32> {
  %y:2 = attn.reversible %x, %x : tensor<1x80x8xf32>, tensor<1x80x8xf32>
  f {
  ^bb0(%a: tensor<1x80x8xf32>):
    %g = attn.param "f.g" : tensor<8xf32>
    %b = attn.param "f.b" : tensor<8xf32>
    %n = attn.layer_norm %a, %g, %b : (tensor<1x80x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x80x8xf32>
    %wq = attn.param "f.wq" : tensor<8x8xf32>
    %wv = attn.param "f.wv" : tensor<8x8xf32>
    %wo = attn.param "f.wo" : tensor<8x8xf32>
    %h = attn.multi_head_attention %n, query %wq, value %wv, output %wo {heads = 2 : i64}
        : (tensor<1x80x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x80x8xf32> {
    ^bb0(%qk: tensor<1x2x80x4xf32>, %v: tensor<1x2x80x4xf32>):
      %o = attn.attention %qk, %qk, %v {causal = true, shared_qk} : (tensor<1x2x80x4xf32>, tensor<1x2x80x4xf32>, tensor<1x2x80x4xf32>) -> tensor<1x2x80x4xf32>
      attn.yield %o : tensor<1x2x80x4xf32>
    }
    attn.yield %h : tensor<1x80x8xf32>
  } g {
  ^bb0(%a: tensor<1x80x8xf32>):
    %g = attn.param "g.g" : tensor<8xf32>
    %b = attn.param "g.b" : tensor<8xf32>
    %n = attn.layer_norm %a, %g, %b : (tensor<1x80x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x80x8xf32>
    %w1 = attn.param "g.w1" : tensor<8x16xf32>
    %b1 = attn.param "g.b1" : tensor<16xf32>
    %w2 = attn.param "g.w2" : tensor<16x8xf32>
    %b2 = attn.param "g.b2" : tensor<8xf32>
    %f = attn.feed_forward relu %n, %w1, %b1, %w2, %b2 : (tensor<1x80x8xf32>, tensor<8x16xf32>, tensor<16xf32>, tensor<16x8xf32>, tensor<8xf32>) -> tensor<1x80x8xf32>
    attn.yield %f : tensor<1x80x8xf32>
  }
  %m = arith.addf %y#0, %y#1 : tensor<1x80x8xf32>
  %hw = attn.param "head.w" : tensor<8x6xf32>
  %logits = attn.linear %m, %hw : (tensor<1x80x8xf32>, tensor<8x6xf32>) -> tensor<1x80x6xf32>
  %l = attn.softmax_cross_entropy %logits, %labels : (tensor<1x80x6xf32>, tensor<1x80xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
