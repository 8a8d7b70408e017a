// LSH attention whose chunks fall into several workgroup groups: a
// workgroup attends up to eight consecutive chunks of one (row, round)
// from rows it gathers once, the chunk before its first included. Seq 360
// pads to 384 = 24 buckets of 16 (three groups of eight, the first looking
// back to the last chunk of the third), and seq 96 in buckets of 8 is 12
// buckets (three groups of four). Each must equal the reference's LSH
// attention (the same rotations, sort, chunks and rounds, in double) to
// f32 rounding, causal with 2 hash rounds and non-causal with 3.
// RUN: lcc %s -o %t.lcm
// RUN: lcc-testdata --output=%t.qk.npy --shape=1,2,360,16
// RUN: lcc-testdata --output=%t.v.npy --shape=1,2,360,16
// RUN: rm -rf %t.out && mkdir %t.out
// RUN: lcc-run %t.lcm --input=%t.qk.npy --input=%t.v.npy --output-dir=%t.out
// RUN: lcc-reference --op=lsh_attention --n-hashes=2 --bucket-size=16 --causal --seed=5 --input=%t.qk.npy --input=%t.v.npy --output=%t.ref.npy
// RUN: lcc-compare %t.out/result0.npy %t.ref.npy --rtol=1e-5
// RUN: sed -e 's/360/96/g' -e 's/n_hashes = 2/n_hashes = 3/' -e 's/bucket_size = 16/bucket_size = 8/' -e 's/causal = true, //' %s > %t.small.mlir
// RUN: lcc %t.small.mlir -o %t.small.lcm
// RUN: lcc-testdata --output=%t.sqk.npy --shape=1,2,96,16
// RUN: lcc-testdata --output=%t.sv.npy --shape=1,2,96,16
// RUN: rm -rf %t.small && mkdir %t.small
// RUN: lcc-run %t.small.lcm --input=%t.sqk.npy --input=%t.sv.npy --output-dir=%t.small
// RUN: lcc-reference --op=lsh_attention --n-hashes=3 --bucket-size=8 --seed=5 --input=%t.sqk.npy --input=%t.sv.npy --output=%t.small.ref.npy
// RUN: lcc-compare %t.small/result0.npy %t.small.ref.npy --rtol=1e-5
func.func @forward(%qk: tensor<1x2x360x16xf32>, %v: tensor<1x2x360x16xf32>) -> tensor<1x2x360x16xf32> {
  %0 = attn.lsh_attention %qk, %v {n_hashes = 2 : i64, bucket_size = 16 : i64, causal = true, seed = 5 : i64} : (tensor<1x2x360x16xf32>, tensor<1x2x360x16xf32>) -> tensor<1x2x360x16xf32>
  return %0 : tensor<1x2x360x16xf32>
}
