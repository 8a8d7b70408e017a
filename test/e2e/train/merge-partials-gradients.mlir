// The backward of attn.merge_partials and of attention through its
// logsumexp (what ring attention's merge reads) against central finite
// differences of the double-precision reference's plain attention: a
// multi-head block whose attention is written as its two halves of the
// keys attended apart, each with its logsumexp, merged, and merged again
// with a third block the gate closes (it must change nothing, forward or
// backward). 80 positions, 40 keys a half. Every parameter's gradient is
// checked on every entry.
// RUN: lcc %s --train --emit-gradients -o %t.lcm
// RUN: lcc-run %t.lcm --init-params=%t.w.safetensors --seed=12
// RUN: lcc-testdata --output=%t.x.npy --shape=1,80,8
// RUN: lcc-testdata --output=%t.labels.npy --shape=1,80 --dtype=i32 --uniform=0,6
// RUN: rm -rf %t.out && mkdir %t.out
// RUN: lcc-run %t.lcm --function=loss_gradients --input=%t.x.npy --input=%t.labels.npy --params=%t.w.safetensors --output-dir=%t.out --results-file=%t.g.safetensors
// RUN: lcc-reference --graph=%S/Inputs/merge-partials.json --params=%t.w.safetensors --input=%t.x.npy --input=%t.labels.npy --check-gradients=%t.g.safetensors --fd-entries=1000 --rtol=1e-5 | FileCheck %s
// CHECK: loss: compiled
// CHECK-DAG: dense.wq: 64 of 64 entries
// CHECK-DAG: dense.wk: 64 of 64 entries
// CHECK-DAG: dense.wv: 64 of 64 entries
// CHECK-DAG: dense.wo: 64 of 64 entries
// CHECK: max relative error
func.func @loss(%x: tensor<1x80x8xf32>, %labels: tensor<1x80xi32>) -> tensor<f32> {
  %wq = attn.param "dense.wq" : tensor<8x8xf32>
  %wk = attn.param "dense.wk" : tensor<8x8xf32>
  %wv = attn.param "dense.wv" : tensor<8x8xf32>
  %wo = attn.param "dense.wo" : tensor<8x8xf32>
  %h = attn.multi_head_attention %x, query %wq, key %wk, value %wv, output %wo {heads = 2 : i64}
      : (tensor<1x80x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x80x8xf32> {
  ^bb0(%q: tensor<1x2x80x4xf32>, %k: tensor<1x2x80x4xf32>, %v: tensor<1x2x80x4xf32>):
    %k1 = tensor.extract_slice %k[0, 0, 0, 0] [1, 2, 40, 4] [1, 1, 1, 1] : tensor<1x2x80x4xf32> to tensor<1x2x40x4xf32>
    %k2 = tensor.extract_slice %k[0, 0, 40, 0] [1, 2, 40, 4] [1, 1, 1, 1] : tensor<1x2x80x4xf32> to tensor<1x2x40x4xf32>
    %v1 = tensor.extract_slice %v[0, 0, 0, 0] [1, 2, 40, 4] [1, 1, 1, 1] : tensor<1x2x80x4xf32> to tensor<1x2x40x4xf32>
    %v2 = tensor.extract_slice %v[0, 0, 40, 0] [1, 2, 40, 4] [1, 1, 1, 1] : tensor<1x2x80x4xf32> to tensor<1x2x40x4xf32>
    %o1, %l1 = attn.attention %q, %k1, %v1 : (tensor<1x2x80x4xf32>, tensor<1x2x40x4xf32>, tensor<1x2x40x4xf32>) -> (tensor<1x2x80x4xf32>, tensor<1x2x80xf32>)
    %o2, %l2 = attn.attention %q, %k2, %v2 : (tensor<1x2x80x4xf32>, tensor<1x2x40x4xf32>, tensor<1x2x40x4xf32>) -> (tensor<1x2x80x4xf32>, tensor<1x2x80xf32>)
    %o3, %l3 = attn.attention %q, %k1, %v2 : (tensor<1x2x80x4xf32>, tensor<1x2x40x4xf32>, tensor<1x2x40x4xf32>) -> (tensor<1x2x80x4xf32>, tensor<1x2x80xf32>)
    %open = arith.constant dense<1.0> : tensor<1xf32>
    %closed = arith.constant dense<0.0> : tensor<1xf32>
    %m, %ml = attn.merge_partials %o1, %l1, %o2, %l2 gate %open
        : (tensor<1x2x80x4xf32>, tensor<1x2x80xf32>, tensor<1x2x80x4xf32>, tensor<1x2x80xf32>, tensor<1xf32>) -> (tensor<1x2x80x4xf32>, tensor<1x2x80xf32>)
    %o, %ol = attn.merge_partials %m, %ml, %o3, %l3 gate %closed
        : (tensor<1x2x80x4xf32>, tensor<1x2x80xf32>, tensor<1x2x80x4xf32>, tensor<1x2x80xf32>, tensor<1xf32>) -> (tensor<1x2x80x4xf32>, tensor<1x2x80xf32>)
    attn.yield %o : tensor<1x2x80x4xf32>
  }
  %x1 = arith.addf %x, %h : tensor<1x80x8xf32>
  %hw = attn.param "head.w" : tensor<8x6xf32>
  %logits = attn.linear %x1, %hw : (tensor<1x80x8xf32>, tensor<8x6xf32>) -> tensor<1x80x6xf32>
  %l = attn.softmax_cross_entropy %logits, %labels : (tensor<1x80x6xf32>, tensor<1x80xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
