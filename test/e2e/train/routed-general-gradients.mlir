// The backward of routed attention in general: 100 tokens (two tiles of
// sorted queries, the second padded), 4 trained centroids per head and
// windows of 24 keys, so a key may be in several windows or in none; a
// block not causal, then a causal one. Against central finite differences
// of the reference's routed attention (test/reference/RoutedAttention.cpp)
// with the same centroids. Routing is piecewise constant: an entry whose
// perturbation moves a query to another cluster, or a key into or out of a
// window, has no derivative there and --skip-kinks replaces it (the first
// block's weights, its values included, route the second); every other
// entry is checked, and the second block's values and output weights,
// which route nothing, have no kinks. The centroids get no gradient (the train step moves
// them by their moving average: test/tools/lcc-train/routed-centroids.mlir).
// RUN: lcc %s --train --emit-gradients -o %t.lcm
// RUN: lcc-run %t.lcm --init-params=%t.w.safetensors --seed=18
// RUN: lcc-testdata --output=%t.x.npy --shape=1,100,8
// RUN: lcc-testdata --output=%t.labels.npy --shape=1,100 --dtype=i32 --uniform=0,6
// RUN: rm -rf %t.out && mkdir %t.out
// RUN: lcc-run %t.lcm --function=loss_gradients --input=%t.x.npy --input=%t.labels.npy --params=%t.w.safetensors --output-dir=%t.out --results-file=%t.g.safetensors
// RUN: %python %S/../../tools/lcc-train/Inputs/train-check.py dump %t.g.safetensors | FileCheck %s --check-prefix=NAMES
// NAMES-NOT: centroids
// RUN: lcc-reference --graph=%S/Inputs/routed-general.json --params=%t.w.safetensors --input=%t.x.npy --input=%t.labels.npy --check-gradients=%t.g.safetensors --fd-entries=1000 --skip-kinks --rtol=1e-5 | FileCheck %s
// CHECK: loss: compiled
// CHECK-DAG: a.wq: {{[0-9]+}} of 64 entries
// CHECK-DAG: a.wk: {{[0-9]+}} of 64 entries
// CHECK-DAG: a.wv: {{[0-9]+}} of 64 entries
// CHECK-DAG: b.wq: {{[0-9]+}} of 64 entries
// CHECK-DAG: b.wk: {{[0-9]+}} of 64 entries
// CHECK-DAG: b.wv: 64 of 64 entries (0 at kinks skipped)
// CHECK-DAG: b.wo: 64 of 64 entries (0 at kinks skipped)
// CHECK: max relative error
func.func @loss(%x: tensor<1x100x8xf32>, %labels: tensor<1x100xi32>) -> tensor<f32> {
  %aq = attn.param "a.wq" : tensor<8x8xf32>
  %ak = attn.param "a.wk" : tensor<8x8xf32>
  %av = attn.param "a.wv" : tensor<8x8xf32>
  %ao = attn.param "a.wo" : tensor<8x8xf32>
  %ac = attn.param "a.centroids" : tensor<2x4x4xf32>
  %h = attn.multi_head_attention %x, query %aq, key %ak, value %av, output %ao {heads = 2 : i64}
      : (tensor<1x100x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x100x8xf32> {
  ^bb0(%q: tensor<1x2x100x4xf32>, %k: tensor<1x2x100x4xf32>, %v: tensor<1x2x100x4xf32>):
    %o = attn.routed_attention %q, %k, %v centroids %ac {clusters = 4 : i64, window = 24 : i64}
        : (tensor<1x2x100x4xf32>, tensor<1x2x100x4xf32>, tensor<1x2x100x4xf32>, tensor<2x4x4xf32>) -> tensor<1x2x100x4xf32>
    attn.yield %o : tensor<1x2x100x4xf32>
  }
  %x1 = arith.addf %x, %h : tensor<1x100x8xf32>
  %bq = attn.param "b.wq" : tensor<8x8xf32>
  %bk = attn.param "b.wk" : tensor<8x8xf32>
  %bv = attn.param "b.wv" : tensor<8x8xf32>
  %bo = attn.param "b.wo" : tensor<8x8xf32>
  %bc = attn.param "b.centroids" : tensor<2x4x4xf32>
  %h2 = attn.multi_head_attention %x1, query %bq, key %bk, value %bv, output %bo {heads = 2 : i64}
      : (tensor<1x100x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x100x8xf32> {
  ^bb0(%q: tensor<1x2x100x4xf32>, %k: tensor<1x2x100x4xf32>, %v: tensor<1x2x100x4xf32>):
    %o = attn.routed_attention %q, %k, %v centroids %bc {clusters = 4 : i64, window = 24 : i64, causal = true}
        : (tensor<1x2x100x4xf32>, tensor<1x2x100x4xf32>, tensor<1x2x100x4xf32>, tensor<2x4x4xf32>) -> tensor<1x2x100x4xf32>
    attn.yield %o : tensor<1x2x100x4xf32>
  }
  %x2 = arith.addf %x1, %h2 : tensor<1x100x8xf32>
  %hw = attn.param "head.w" : tensor<8x6xf32>
  %logits = attn.linear %x2, %hw : (tensor<1x100x8xf32>, tensor<8x6xf32>) -> tensor<1x100x6xf32>
  %l = attn.softmax_cross_entropy %logits, %labels : (tensor<1x100x6xf32>, tensor<1x100xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
