// The flash backward of dense attention against central finite differences
// of the double-precision reference: a multi-head block with its own key
// projection (not causal), then a Reformer block (shared-QK, causal), on
// 80 positions, so attention runs in two tiles of 64 with a padded second
// one. Every parameter's gradient is checked on every entry; the relative
// errors are printed and bounded.
// RUN: lcc %s --train --emit-gradients -o %t.lcm
// RUN: lcc-run %t.lcm --init-params=%t.w.safetensors --seed=12
// RUN: lcc-testdata --output=%t.x.npy --shape=1,80,8
// RUN: lcc-testdata --output=%t.labels.npy --shape=1,80 --dtype=i32 --uniform=0,6
// RUN: rm -rf %t.out && mkdir %t.out
// RUN: lcc-run %t.lcm --function=loss_gradients --input=%t.x.npy --input=%t.labels.npy --params=%t.w.safetensors --output-dir=%t.out --results-file=%t.g.safetensors
// RUN: lcc-reference --graph=%S/Inputs/attention.json --params=%t.w.safetensors --input=%t.x.npy --input=%t.labels.npy --check-gradients=%t.g.safetensors --fd-entries=1000 --rtol=1e-5 | FileCheck %s
// CHECK: loss: compiled
// CHECK-DAG: dense.wq: 64 of 64 entries
// CHECK-DAG: dense.wk: 64 of 64 entries
// CHECK-DAG: dense.wv: 64 of 64 entries
// CHECK-DAG: reformer.wqk: 64 of 64 entries
// CHECK-DAG: reformer.wo: 64 of 64 entries
// CHECK: max relative error
func.func @loss(%x: tensor<1x80x8xf32>, %labels: tensor<1x80xi32>) -> tensor<f32> {
  %wq = attn.param "dense.wq" : tensor<8x8xf32>
  %wk = attn.param "dense.wk" : tensor<8x8xf32>
  %wv = attn.param "dense.wv" : tensor<8x8xf32>
  %wo = attn.param "dense.wo" : tensor<8x8xf32>
  %h = attn.multi_head_attention %x, query %wq, key %wk, value %wv, output %wo {heads = 2 : i64}
      : (tensor<1x80x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x80x8xf32> {
  ^bb0(%q: tensor<1x2x80x4xf32>, %k: tensor<1x2x80x4xf32>, %v: tensor<1x2x80x4xf32>):
    %o = attn.attention %q, %k, %v : (tensor<1x2x80x4xf32>, tensor<1x2x80x4xf32>, tensor<1x2x80x4xf32>) -> tensor<1x2x80x4xf32>
    attn.yield %o : tensor<1x2x80x4xf32>
  }
  %x1 = arith.addf %x, %h : tensor<1x80x8xf32>
  %rqk = attn.param "reformer.wqk" : tensor<8x8xf32>
  %rv = attn.param "reformer.wv" : tensor<8x8xf32>
  %ro = attn.param "reformer.wo" : tensor<8x8xf32>
  %h2 = attn.multi_head_attention %x1, query %rqk, value %rv, output %ro {heads = 2 : i64}
      : (tensor<1x80x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x80x8xf32> {
  ^bb0(%qk: tensor<1x2x80x4xf32>, %v: tensor<1x2x80x4xf32>):
    %o = attn.attention %qk, %qk, %v {causal = true, shared_qk} : (tensor<1x2x80x4xf32>, tensor<1x2x80x4xf32>, tensor<1x2x80x4xf32>) -> tensor<1x2x80x4xf32>
    attn.yield %o : tensor<1x2x80x4xf32>
  }
  %x2 = arith.addf %x1, %h2 : tensor<1x80x8xf32>
  %hw = attn.param "head.w" : tensor<8x6xf32>
  %logits = attn.linear %x2, %hw : (tensor<1x80x8xf32>, tensor<8x6xf32>) -> tensor<1x80x6xf32>
  %l = attn.softmax_cross_entropy %logits, %labels : (tensor<1x80x6xf32>, tensor<1x80xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
