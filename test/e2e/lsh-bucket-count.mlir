// LSH attention with a bucket count of its own (n_buckets, Hugging Face's
// num_buckets): 160 tokens in chunks of 32 are 5 chunks a round (not padded:
// with n_buckets the sequence pads to a multiple of one chunk, not two),
// hashed into 12 buckets, 3 rounds whose sorted orders run end to end. The
// compiled result must equal the reference's (the same rotations, buckets,
// sort and chained chunks in double) to f32 rounding; factorized hashing
// of 16 buckets (4 x 4) too. Fresh inputs each run.
// RUN: lcc %s -o %t.lcm
// RUN: lcc-testdata --output=%t.qk.npy --shape=1,2,160,16
// RUN: lcc-testdata --output=%t.v.npy --shape=1,2,160,16
// RUN: rm -rf %t.out && mkdir %t.out
// RUN: lcc-run %t.lcm --input=%t.qk.npy --input=%t.v.npy --output-dir=%t.out
// RUN: lcc-reference --op=lsh_attention --n-hashes=3 --bucket-size=32 --n-buckets=12 --causal --seed=7 --input=%t.qk.npy --input=%t.v.npy --output=%t.ref.npy
// RUN: lcc-compare %t.out/result0.npy %t.ref.npy --rtol=1e-5
// RUN: sed -e 's/n_buckets = 12/n_buckets = 16/' -e 's/causal = true/factorized_hash/' %s > %t.factorized.mlir
// RUN: lcc %t.factorized.mlir -o %t.factorized.lcm
// RUN: rm -rf %t.f && mkdir %t.f
// RUN: lcc-run %t.factorized.lcm --input=%t.qk.npy --input=%t.v.npy --output-dir=%t.f
// RUN: lcc-reference --op=lsh_attention --n-hashes=3 --bucket-size=32 --n-buckets=16 --factorized-hash --seed=7 --input=%t.qk.npy --input=%t.v.npy --output=%t.f.ref.npy
// RUN: lcc-compare %t.f/result0.npy %t.f.ref.npy --rtol=1e-5
func.func @forward(%qk: tensor<1x2x160x16xf32>, %v: tensor<1x2x160x16xf32>) -> tensor<1x2x160x16xf32> {
  %0 = attn.lsh_attention %qk, %v {n_hashes = 3 : i64, bucket_size = 32 : i64, n_buckets = 12 : i64, causal = true, seed = 7 : i64} : (tensor<1x2x160x16xf32>, tensor<1x2x160x16xf32>) -> tensor<1x2x160x16xf32>
  return %0 : tensor<1x2x160x16xf32>
}
