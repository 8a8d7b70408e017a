// LSH hashing: "auto" (the default) hashes factorized from 256 buckets
// (16K tokens in buckets of 64) and plainly below; "factorized" and
// "plain" say so for every op; factorized hashing of buckets that are not
// a multiple of 4 is one error naming them.
// RUN: lcc-opt %s --split-input-file --attn-dense-to-lsh --verify-diagnostics | FileCheck %s --check-prefix=AUTO
// RUN: lcc-opt %s --split-input-file --attn-dense-to-lsh="hash=plain" | FileCheck %s --check-prefix=PLAIN
// RUN: not lcc-opt %s --split-input-file --attn-dense-to-lsh="hash=factorized" 2>&1 | FileCheck %s --check-prefix=FACTORIZED

// AUTO-LABEL: func @long
// AUTO: attn.lsh_attention {{.*}}factorized_hash
// PLAIN-LABEL: func @long
// PLAIN-NOT: factorized_hash
func.func @long(%qk: tensor<1x1x16384x8xf32>) -> tensor<1x1x16384x8xf32> {
  // expected-remark@+1 {{'attn.attention' rewritten to LSH attention (4 hashes, bucket 64, seed 0, factorized hash)}}
  %0 = attn.attention %qk, %qk, %qk {shared_qk} : (tensor<1x1x16384x8xf32>, tensor<1x1x16384x8xf32>, tensor<1x1x16384x8xf32>) -> tensor<1x1x16384x8xf32>
  return %0 : tensor<1x1x16384x8xf32>
}

// -----

// AUTO-LABEL: func @short
// AUTO-NOT: factorized_hash
// FACTORIZED: error: 'attn.attention' cannot become LSH attention: factorized LSH hashing needs n_buckets (padded seq / bucket size) a multiple of 4, got 6
func.func @short(%qk: tensor<1x1x384x8xf32>) -> tensor<1x1x384x8xf32> {
  // expected-remark@+1 {{'attn.attention' rewritten to LSH attention (4 hashes, bucket 64, seed 0)}}
  %0 = attn.attention %qk, %qk, %qk {shared_qk} : (tensor<1x1x384x8xf32>, tensor<1x1x384x8xf32>, tensor<1x1x384x8xf32>) -> tensor<1x1x384x8xf32>
  return %0 : tensor<1x1x384x8xf32>
}
