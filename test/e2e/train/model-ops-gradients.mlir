// The gradient of every model op but attention, against central finite
// differences of the double-precision reference (test/reference): an
// embedding plus learned positions, a residual block of layer norm and a
// chunked GELU feed-forward (3 chunks of 12 positions: two of 5, one of 2),
// the upstream elementwise ops (tanh, mulf, subf, maximumf), a linear head
// and a cross-entropy weighted per position. Random weights and inputs, seeds
// printed; the relative error of each gradient is printed and bounded.
// RUN: lcc %s --train --emit-gradients -o %t.lcm
// RUN: lcc-run %t.lcm --init-params=%t.w.safetensors --seed=11
// RUN: lcc-testdata --output=%t.tokens.npy --shape=2,6 --dtype=i32 --uniform=0,7
// RUN: lcc-testdata --output=%t.labels.npy --shape=2,6 --dtype=i32 --uniform=0,5
// RUN: lcc-testdata --output=%t.weights.npy --shape=2,6 --uniform=0,1
// RUN: rm -rf %t.out && mkdir %t.out
// RUN: lcc-run %t.lcm --function=loss_gradients --input=%t.tokens.npy --input=%t.labels.npy --input=%t.weights.npy --params=%t.w.safetensors --output-dir=%t.out --results-file=%t.g.safetensors
// RUN: lcc-reference --graph=%S/Inputs/model-ops.json --params=%t.w.safetensors --input=%t.tokens.npy --input=%t.labels.npy --input=%t.weights.npy --check-gradients=%t.g.safetensors --fd-entries=1000 --rtol=1e-5 | FileCheck %s
// CHECK: loss: compiled {{.*}} relative error
// CHECK-DAG: embed.table: 56 of 56 entries
// CHECK-DAG: embed.positions: 96 of 96 entries
// CHECK-DAG: ff.w1: 96 of 96 entries
// CHECK-DAG: head.b: 5 of 5 entries
// CHECK-DAG: ln.g: 8 of 8 entries
// CHECK: max relative error
func.func @loss(%tokens: tensor<2x6xi32>, %labels: tensor<2x6xi32>,
                %weights: tensor<2x6xf32>) -> tensor<f32> {
  %table = attn.param "embed.table" : tensor<7x8xf32>
  %e = attn.embedding %tokens, %table : (tensor<2x6xi32>, tensor<7x8xf32>) -> tensor<2x6x8xf32>
  %pos = attn.param "embed.positions" : tensor<2x6x8xf32>
  %x = arith.addf %e, %pos : tensor<2x6x8xf32>
  %r = attn.residual %x : tensor<2x6x8xf32> {
  ^bb0(%a: tensor<2x6x8xf32>):
    %g = attn.param "ln.g" : tensor<8xf32>
    %b = attn.param "ln.b" : tensor<8xf32>
    %n = attn.layer_norm %a, %g, %b : (tensor<2x6x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x6x8xf32>
    %w1 = attn.param "ff.w1" : tensor<8x12xf32>
    %b1 = attn.param "ff.b1" : tensor<12xf32>
    %w2 = attn.param "ff.w2" : tensor<12x8xf32>
    %b2 = attn.param "ff.b2" : tensor<8xf32>
    %f = attn.feed_forward gelu %n, %w1, %b1, %w2, %b2 {chunks = 3 : i64}
        : (tensor<2x6x8xf32>, tensor<8x12xf32>, tensor<12xf32>, tensor<12x8xf32>, tensor<8xf32>) -> tensor<2x6x8xf32>
    attn.yield %f : tensor<2x6x8xf32>
  }
  %t = math.tanh %r : tensor<2x6x8xf32>
  %m = arith.mulf %t, %r : tensor<2x6x8xf32>
  %s = arith.subf %m, %x : tensor<2x6x8xf32>
  %mx = arith.maximumf %s, %r : tensor<2x6x8xf32>
  %hw = attn.param "head.w" : tensor<8x5xf32>
  %hb = attn.param "head.b" : tensor<5xf32>
  %logits = attn.linear %mx, %hw, %hb : (tensor<2x6x8xf32>, tensor<8x5xf32>, tensor<5xf32>) -> tensor<2x6x5xf32>
  %l = attn.softmax_cross_entropy %logits, %labels, %weights
      : (tensor<2x6x5xf32>, tensor<2x6xi32>, tensor<2x6xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
