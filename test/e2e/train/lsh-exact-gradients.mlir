// The backward of LSH attention where every neighbourhood lies in one
// chunk (50 tokens in chunks of 50, padded to 100: every round sorts the
// real tokens into its first chunk, which looks back at the previous
// round's padding), so its gradient equals exact shared-QK attention's: checked against central finite differences of the
// reference's causal shared-QK attention on every entry, two hash rounds
// (the logsumexp combine's backward) and padding included.
// RUN: lcc %s --train --emit-gradients -o %t.lcm
// RUN: lcc-run %t.lcm --init-params=%t.w.safetensors --seed=15
// RUN: lcc-testdata --output=%t.x.npy --shape=1,50,8
// RUN: lcc-testdata --output=%t.labels.npy --shape=1,50 --dtype=i32 --uniform=0,6
// RUN: rm -rf %t.out && mkdir %t.out
// RUN: lcc-run %t.lcm --function=loss_gradients --input=%t.x.npy --input=%t.labels.npy --params=%t.w.safetensors --output-dir=%t.out --results-file=%t.g.safetensors
// RUN: lcc-reference --graph=%S/Inputs/lsh-exact.json --params=%t.w.safetensors --input=%t.x.npy --input=%t.labels.npy --check-gradients=%t.g.safetensors --fd-entries=1000 --rtol=1e-5 | FileCheck %s
// CHECK: loss: compiled
// CHECK-DAG: wqk: 64 of 64 entries
// CHECK-DAG: wv: 64 of 64 entries
// CHECK: max relative error
func.func @loss(%x: tensor<1x50x8xf32>, %labels: tensor<1x50xi32>) -> tensor<f32> {
  %wq = attn.param "wqk" : tensor<8x8xf32>
  %wv = attn.param "wv" : tensor<8x8xf32>
  %wo = attn.param "wo" : tensor<8x8xf32>
  %h = attn.multi_head_attention %x, query %wq, value %wv, output %wo {heads = 2 : i64}
      : (tensor<1x50x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x50x8xf32> {
  ^bb0(%qk: tensor<1x2x50x4xf32>, %v: tensor<1x2x50x4xf32>):
    %o = attn.lsh_attention %qk, %v {n_hashes = 2 : i64, bucket_size = 50 : i64, causal = true, seed = 3 : i64}
        : (tensor<1x2x50x4xf32>, tensor<1x2x50x4xf32>) -> tensor<1x2x50x4xf32>
    attn.yield %o : tensor<1x2x50x4xf32>
  }
  %x1 = arith.addf %x, %h : tensor<1x50x8xf32>
  %hw = attn.param "head.w" : tensor<8x6xf32>
  %logits = attn.linear %x1, %hw : (tensor<1x50x8xf32>, tensor<8x6xf32>) -> tensor<1x50x6xf32>
  %l = attn.softmax_cross_entropy %logits, %labels : (tensor<1x50x6xf32>, tensor<1x50xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
