// Factorized LSH hashing (trax's n_buckets as a pair): seq 200 pads to 256
// = 8 buckets of 32, hashed as 2 x 4 (rotations of (2 + 4) / 2 = 3 columns
// per round, bucket = b1 + 2 * b2). The compiled result must equal the
// reference's factorized LSH attention to f32 rounding, causal with 4
// rounds; and at seq 512 (16 buckets, 4 x 4) non-causal with 2. It is not
// the plain hash: the same seed hashes differently.
// RUN: lcc %s -o %t.lcm
// RUN: lcc-testdata --output=%t.qk.npy --shape=1,2,200,16
// RUN: lcc-testdata --output=%t.v.npy --shape=1,2,200,16
// RUN: rm -rf %t.out && mkdir %t.out
// RUN: lcc-run %t.lcm --input=%t.qk.npy --input=%t.v.npy --output-dir=%t.out
// RUN: lcc-reference --op=lsh_attention --n-hashes=4 --bucket-size=32 --causal --seed=7 --factorized-hash --input=%t.qk.npy --input=%t.v.npy --output=%t.ref.npy
// RUN: lcc-compare %t.out/result0.npy %t.ref.npy --rtol=1e-5
// RUN: lcc-reference --op=lsh_attention --n-hashes=4 --bucket-size=32 --causal --seed=7 --input=%t.qk.npy --input=%t.v.npy --output=%t.plain.npy
// RUN: not lcc-compare %t.out/result0.npy %t.plain.npy --rtol=1e-3
// RUN: sed -e 's/200/512/g' -e 's/n_hashes = 4/n_hashes = 2/' -e 's/causal = true, //' %s > %t.512.mlir
// RUN: lcc %t.512.mlir -o %t.512.lcm
// RUN: lcc-testdata --output=%t.qk512.npy --shape=1,2,512,16
// RUN: lcc-testdata --output=%t.v512.npy --shape=1,2,512,16
// RUN: rm -rf %t.512 && mkdir %t.512
// RUN: lcc-run %t.512.lcm --input=%t.qk512.npy --input=%t.v512.npy --output-dir=%t.512
// RUN: lcc-reference --op=lsh_attention --n-hashes=2 --bucket-size=32 --seed=7 --factorized-hash --input=%t.qk512.npy --input=%t.v512.npy --output=%t.512.ref.npy
// RUN: lcc-compare %t.512/result0.npy %t.512.ref.npy --rtol=1e-5
func.func @forward(%qk: tensor<1x2x200x16xf32>, %v: tensor<1x2x200x16xf32>) -> tensor<1x2x200x16xf32> {
  %0 = attn.lsh_attention %qk, %v {n_hashes = 4 : i64, bucket_size = 32 : i64, causal = true, seed = 7 : i64, factorized_hash} : (tensor<1x2x200x16xf32>, tensor<1x2x200x16xf32>) -> tensor<1x2x200x16xf32>
  return %0 : tensor<1x2x200x16xf32>
}
