// The backward of the forms' non-causal variants, against central finite
// differences of the double-precision reference on every entry, 64
// positions: Sparse Transformer strided attention (stride 8, blocks of 16;
// differentiated as the masked attention it equals), then LSH-2 with
// buckets of 64 (the sequence padded to two chunks: every round sorts the
// real tokens into its first, whose look-back is the previous round's
// padding), so that every token sees every other and it equals shared-QK
// attention.
// RUN: lcc %s --train --emit-gradients -o %t.lcm
// RUN: lcc-run %t.lcm --init-params=%t.w.safetensors --seed=19
// RUN: lcc-testdata --output=%t.x.npy --shape=1,64,8
// RUN: lcc-testdata --output=%t.labels.npy --shape=1,64 --dtype=i32 --uniform=0,6
// RUN: rm -rf %t.out && mkdir %t.out
// RUN: lcc-run %t.lcm --function=loss_gradients --input=%t.x.npy --input=%t.labels.npy --params=%t.w.safetensors --output-dir=%t.out --results-file=%t.g.safetensors
// RUN: lcc-reference --graph=%S/Inputs/noncausal-forms.json --params=%t.w.safetensors --input=%t.x.npy --input=%t.labels.npy --check-gradients=%t.g.safetensors --fd-entries=1000 --rtol=1e-5 | FileCheck %s
// CHECK: loss: compiled
// CHECK-DAG: sparse.wq: 64 of 64 entries
// CHECK-DAG: sparse.wk: 64 of 64 entries
// CHECK-DAG: lsh.wqk: 64 of 64 entries
// CHECK-DAG: lsh.wv: 64 of 64 entries
// CHECK: max relative error
func.func @loss(%x: tensor<1x64x8xf32>, %labels: tensor<1x64xi32>) -> tensor<f32> {
  %sq = attn.param "sparse.wq" : tensor<8x8xf32>
  %sk = attn.param "sparse.wk" : tensor<8x8xf32>
  %sv = attn.param "sparse.wv" : tensor<8x8xf32>
  %so = attn.param "sparse.wo" : tensor<8x8xf32>
  %h = attn.multi_head_attention %x, query %sq, key %sk, value %sv, output %so {heads = 2 : i64}
      : (tensor<1x64x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x64x8xf32> {
  ^bb0(%q: tensor<1x2x64x4xf32>, %k: tensor<1x2x64x4xf32>, %v: tensor<1x2x64x4xf32>):
    %o = attn.sparse_attention strided %q, %k, %v {block = 16 : i64, stride = 8 : i64}
        : (tensor<1x2x64x4xf32>, tensor<1x2x64x4xf32>, tensor<1x2x64x4xf32>) -> tensor<1x2x64x4xf32>
    attn.yield %o : tensor<1x2x64x4xf32>
  }
  %x1 = arith.addf %x, %h : tensor<1x64x8xf32>
  %lq = attn.param "lsh.wqk" : tensor<8x8xf32>
  %lv = attn.param "lsh.wv" : tensor<8x8xf32>
  %lo = attn.param "lsh.wo" : tensor<8x8xf32>
  %h2 = attn.multi_head_attention %x1, query %lq, value %lv, output %lo {heads = 2 : i64}
      : (tensor<1x64x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x64x8xf32> {
  ^bb0(%qk: tensor<1x2x64x4xf32>, %v: tensor<1x2x64x4xf32>):
    %o = attn.lsh_attention %qk, %v {n_hashes = 2 : i64, bucket_size = 64 : i64, seed = 5 : i64}
        : (tensor<1x2x64x4xf32>, tensor<1x2x64x4xf32>) -> tensor<1x2x64x4xf32>
    attn.yield %o : tensor<1x2x64x4xf32>
  }
  %x2 = arith.addf %x1, %h2 : tensor<1x64x8xf32>
  %hw = attn.param "head.w" : tensor<8x6xf32>
  %logits = attn.linear %x2, %hw : (tensor<1x64x8xf32>, tensor<8x6xf32>) -> tensor<1x64x6xf32>
  %l = attn.softmax_cross_entropy %logits, %labels : (tensor<1x64x6xf32>, tensor<1x64xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
