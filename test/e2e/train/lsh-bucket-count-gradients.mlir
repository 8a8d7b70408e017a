// The backward of LSH attention with a bucket count of its own: 160
// tokens in 5 chunks of 32 a round, hashed into 12 buckets, 3 rounds whose
// sorted orders run end to end (a round's first chunk looks back at the
// previous round's last, so its gradient flows into that round's keys),
// causal, against central finite differences of the reference's LSH
// attention with the same rotations. Entries whose perturbation moves a
// token to another bucket have no derivative (--skip-kinks).
// RUN: lcc %s --train --emit-gradients -o %t.lcm
// RUN: lcc-run %t.lcm --init-params=%t.w.safetensors --seed=17
// RUN: lcc-testdata --output=%t.x.npy --shape=1,160,8
// RUN: lcc-testdata --output=%t.labels.npy --shape=1,160 --dtype=i32 --uniform=0,6
// RUN: rm -rf %t.out && mkdir %t.out
// RUN: lcc-run %t.lcm --function=loss_gradients --input=%t.x.npy --input=%t.labels.npy --params=%t.w.safetensors --output-dir=%t.out --results-file=%t.g.safetensors
// RUN: lcc-reference --graph=%S/Inputs/lsh-bucket-count.json --params=%t.w.safetensors --input=%t.x.npy --input=%t.labels.npy --check-gradients=%t.g.safetensors --fd-entries=1000 --skip-kinks --rtol=1e-5 | FileCheck %s
// CHECK: loss: compiled
// CHECK-DAG: wqk: {{[0-9]+}} of 64 entries
// CHECK-DAG: wv: 64 of 64 entries (0 at kinks skipped)
// CHECK: max relative error
func.func @loss(%x: tensor<1x160x8xf32>, %labels: tensor<1x160xi32>) -> tensor<f32> {
  %wq = attn.param "wqk" : tensor<8x8xf32>
  %wv = attn.param "wv" : tensor<8x8xf32>
  %wo = attn.param "wo" : tensor<8x8xf32>
  %h = attn.multi_head_attention %x, query %wq, value %wv, output %wo {heads = 2 : i64}
      : (tensor<1x160x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x160x8xf32> {
  ^bb0(%qk: tensor<1x2x160x4xf32>, %v: tensor<1x2x160x4xf32>):
    %o = attn.lsh_attention %qk, %v {n_hashes = 3 : i64, bucket_size = 32 : i64, n_buckets = 12 : i64, causal = true, seed = 7 : i64}
        : (tensor<1x2x160x4xf32>, tensor<1x2x160x4xf32>) -> tensor<1x2x160x4xf32>
    attn.yield %o : tensor<1x2x160x4xf32>
  }
  %x1 = arith.addf %x, %h : tensor<1x160x8xf32>
  %hw = attn.param "head.w" : tensor<8x6xf32>
  %logits = attn.linear %x1, %hw : (tensor<1x160x8xf32>, tensor<8x6xf32>) -> tensor<1x160x6xf32>
  %l = attn.softmax_cross_entropy %logits, %labels : (tensor<1x160x6xf32>, tensor<1x160xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
