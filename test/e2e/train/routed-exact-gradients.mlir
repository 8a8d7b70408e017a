// The backward of routed attention where it equals dense attention (one
// cluster whose window is every key), so its gradient equals exact
// attention's: a block not causal, then a causal one, on 80 positions (two
// tiles of sorted queries, the second padded), the centroids from the
// compiled k-means (the routing is recomputed in the backward and is not
// differentiated). Checked against central finite differences of the
// reference's dense attention on every entry.
// RUN: lcc %s --train --emit-gradients -o %t.lcm
// RUN: lcc-run %t.lcm --init-params=%t.w.safetensors --seed=17
// RUN: lcc-testdata --output=%t.x.npy --shape=1,80,8
// RUN: lcc-testdata --output=%t.labels.npy --shape=1,80 --dtype=i32 --uniform=0,6
// RUN: rm -rf %t.out && mkdir %t.out
// RUN: lcc-run %t.lcm --function=loss_gradients --input=%t.x.npy --input=%t.labels.npy --params=%t.w.safetensors --output-dir=%t.out --results-file=%t.g.safetensors
// RUN: lcc-reference --graph=%S/Inputs/routed-exact.json --params=%t.w.safetensors --input=%t.x.npy --input=%t.labels.npy --check-gradients=%t.g.safetensors --fd-entries=1000 --rtol=1e-5 | FileCheck %s
// CHECK: loss: compiled
// CHECK-DAG: a.wq: 64 of 64 entries
// CHECK-DAG: a.wk: 64 of 64 entries
// CHECK-DAG: a.wv: 64 of 64 entries
// CHECK-DAG: b.wq: 64 of 64 entries
// CHECK-DAG: b.wk: 64 of 64 entries
// CHECK-DAG: b.wo: 64 of 64 entries
// CHECK: max relative error
func.func @loss(%x: tensor<1x80x8xf32>, %labels: tensor<1x80xi32>) -> tensor<f32> {
  %aq = attn.param "a.wq" : tensor<8x8xf32>
  %ak = attn.param "a.wk" : tensor<8x8xf32>
  %av = attn.param "a.wv" : tensor<8x8xf32>
  %ao = attn.param "a.wo" : tensor<8x8xf32>
  %h = attn.multi_head_attention %x, query %aq, key %ak, value %av, output %ao {heads = 2 : i64}
      : (tensor<1x80x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x80x8xf32> {
  ^bb0(%q: tensor<1x2x80x4xf32>, %k: tensor<1x2x80x4xf32>, %v: tensor<1x2x80x4xf32>):
    %o = attn.routed_attention %q, %k, %v {clusters = 1 : i64, window = 80 : i64, seed = 2 : i64}
        : (tensor<1x2x80x4xf32>, tensor<1x2x80x4xf32>, tensor<1x2x80x4xf32>) -> tensor<1x2x80x4xf32>
    attn.yield %o : tensor<1x2x80x4xf32>
  }
  %x1 = arith.addf %x, %h : tensor<1x80x8xf32>
  %bq = attn.param "b.wq" : tensor<8x8xf32>
  %bk = attn.param "b.wk" : tensor<8x8xf32>
  %bv = attn.param "b.wv" : tensor<8x8xf32>
  %bo = attn.param "b.wo" : tensor<8x8xf32>
  %h2 = attn.multi_head_attention %x1, query %bq, key %bk, value %bv, output %bo {heads = 2 : i64}
      : (tensor<1x80x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x80x8xf32> {
  ^bb0(%q: tensor<1x2x80x4xf32>, %k: tensor<1x2x80x4xf32>, %v: tensor<1x2x80x4xf32>):
    %o = attn.routed_attention %q, %k, %v {clusters = 1 : i64, window = 80 : i64, causal = true}
        : (tensor<1x2x80x4xf32>, tensor<1x2x80x4xf32>, tensor<1x2x80x4xf32>) -> tensor<1x2x80x4xf32>
    attn.yield %o : tensor<1x2x80x4xf32>
  }
  %x2 = arith.addf %x1, %h2 : tensor<1x80x8xf32>
  %hw = attn.param "head.w" : tensor<8x6xf32>
  %logits = attn.linear %x2, %hw : (tensor<1x80x8xf32>, tensor<8x6xf32>) -> tensor<1x80x6xf32>
  %l = attn.softmax_cross_entropy %logits, %labels : (tensor<1x80x6xf32>, tensor<1x80xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
