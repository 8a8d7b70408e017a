// LSH attention where hashing matters: seq 200 pads to 256 = 8 buckets of
// 32, so each token sees only the two chunks of its sorted neighbourhood,
// chosen by the seeded rotations. The compiled result must equal the
// reference's LSH attention (the same rotations, buckets, sort, chunks and
// rounds in double) to f32 rounding: causal with 4 hash rounds, and
// non-causal with 1. Fresh inputs each run (lcc-testdata prints the seeds).
// A token within f32 rounding of a hash boundary could hash differently in
// f32 and fail the check; in 2300 draws of the causal case (3.7M hashes)
// none did, and the worst error was 2.3e-7.
// RUN: lcc %s -o %t.lcm
// RUN: lcc-testdata --output=%t.qk.npy --shape=1,2,200,16
// RUN: lcc-testdata --output=%t.v.npy --shape=1,2,200,16
// RUN: rm -rf %t.out && mkdir %t.out
// RUN: lcc-run %t.lcm --input=%t.qk.npy --input=%t.v.npy --output-dir=%t.out
// RUN: lcc-reference --op=lsh_attention --n-hashes=4 --bucket-size=32 --causal --seed=7 --input=%t.qk.npy --input=%t.v.npy --output=%t.ref.npy
// RUN: lcc-compare %t.out/result0.npy %t.ref.npy --rtol=1e-5
// Not dense attention: the hashes hide most keys.
// RUN: lcc-reference --op=attention --shared-qk --causal --input=%t.qk.npy --input=%t.v.npy --output=%t.dense.npy
// RUN: not lcc-compare %t.out/result0.npy %t.dense.npy --rtol=1e-2
// RUN: sed -e 's/n_hashes = 4/n_hashes = 1/' -e 's/causal = true/causal = false/' %s > %t.one.mlir
// RUN: lcc %t.one.mlir -o %t.one.lcm
// RUN: rm -rf %t.one && mkdir %t.one
// RUN: lcc-run %t.one.lcm --input=%t.qk.npy --input=%t.v.npy --output-dir=%t.one
// RUN: lcc-reference --op=lsh_attention --n-hashes=1 --bucket-size=32 --seed=7 --input=%t.qk.npy --input=%t.v.npy --output=%t.one.ref.npy
// RUN: lcc-compare %t.one/result0.npy %t.one.ref.npy --rtol=1e-5
func.func @forward(%qk: tensor<1x2x200x16xf32>, %v: tensor<1x2x200x16xf32>) -> tensor<1x2x200x16xf32> {
  %0 = attn.lsh_attention %qk, %v {n_hashes = 4 : i64, bucket_size = 32 : i64, causal = true, seed = 7 : i64} : (tensor<1x2x200x16xf32>, tensor<1x2x200x16xf32>) -> tensor<1x2x200x16xf32>
  return %0 : tensor<1x2x200x16xf32>
}
