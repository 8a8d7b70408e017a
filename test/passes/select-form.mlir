// RUN: lcc-opt %s --split-input-file --attn-select-form --verify-diagnostics | FileCheck %s
// RUN: lcc-opt %s --split-input-file --attn-select-form="memory-budget=100000000" 2>&1 | FileCheck %s --check-prefix=BUDGET
// RUN: lcc-opt %s --split-input-file --attn-select-form="lsh-hash=factorized" 2>&1 | FileCheck %s --check-prefix=FACTORIZED
// RUN: not lcc-opt %s --split-input-file --attn-select-form="lsh-hash=bogus" 2>&1 | FileCheck %s --check-prefix=BOGUS
// BOGUS: error: attn-select-form: unknown lsh-hash value 'bogus'; expected one of 'plain', 'factorized', 'auto'

// Long shared-QK attention becomes LSH; the remark gives the estimates.
// CHECK-LABEL: func @long_shared_qk
// CHECK: attn.lsh_attention %{{.+}}, %{{.+}} {bucket_size = 64 : i64, causal = true, n_hashes = 4 : i64}
// BUDGET: 'attn.attention' kept dense (68.72 GFLOP, 0.07 GB): LSH would need 0.12 GB, over the memory budget of 0.10 GB
// The LSH it builds hashes as asked (auto: plainly at 128 buckets).
// CHECK-NOT: factorized_hash
// FACTORIZED: rewritten to LSH attention (4 hashes, bucket 64, seed 0, factorized hash)
// FACTORIZED: attn.lsh_attention {{.*}}factorized_hash
func.func @long_shared_qk(%qk: tensor<1x8x8192x64xf32>, %v: tensor<1x8x8192x64xf32>) -> tensor<1x8x8192x64xf32> {
  // expected-remark@+1 {{'attn.attention' rewritten to LSH attention (4 hashes, bucket 64, seed 0): 10.74 GFLOP and 0.12 GB against dense 68.72 GFLOP}}
  %0 = attn.attention %qk, %qk, %v {causal = true, shared_qk}
      : (tensor<1x8x8192x64xf32>, tensor<1x8x8192x64xf32>, tensor<1x8x8192x64xf32>) -> tensor<1x8x8192x64xf32>
  return %0 : tensor<1x8x8192x64xf32>
}

// -----

// Short sequences stay dense.
// CHECK-LABEL: func @short
// CHECK: attn.attention
func.func @short(%s: tensor<1x8x1024x64xf32>) -> tensor<1x8x1024x64xf32> {
  // expected-remark@+1 {{'attn.attention' kept dense (2.15 GFLOP, 0.01 GB): seq 1024 is below the LSH threshold 4096}}
  %0 = attn.attention %s, %s, %s {shared_qk}
      : (tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>) -> tensor<1x8x1024x64xf32>
  return %0 : tensor<1x8x1024x64xf32>
}

// -----

// Attention with distinct queries and keys has no automatic form.
// CHECK-LABEL: func @distinct_keys
// CHECK: attn.attention
func.func @distinct_keys(%q: tensor<1x8x8192x64xf32>, %v: tensor<1x8x8192x64xf32>) -> tensor<1x8x8192x64xf32> {
  // expected-remark@+1 {{'attn.attention' kept dense (137.44 GFLOP, 0.07 GB): only shared-QK attention has an automatic long-context form (LSH)}}
  %0 = attn.attention %q, %v, %v
      : (tensor<1x8x8192x64xf32>, tensor<1x8x8192x64xf32>, tensor<1x8x8192x64xf32>) -> tensor<1x8x8192x64xf32>
  return %0 : tensor<1x8x8192x64xf32>
}

// -----

// A shared-QK attention long enough for LSH stays dense when it has a
// mask: only dense (flash) attention honours it.
// CHECK-LABEL: func @keeps_masked_attention
// CHECK: attn.attention
func.func @keeps_masked_attention(%q: tensor<1x2x4096x16xf32>, %v: tensor<1x2x4096x16xf32>) -> tensor<1x2x4096x16xf32> {
  // Costed by the tile pairs its block table visits, not as dense's 1.07
  // GFLOP: the diagonal tiles and those just below it.
  // expected-remark@+1 {{'attn.attention' kept dense (0.07 GFLOP for the 127 of 4096 64x64 tile pairs its mask visits, 0.00 GB): its mask or score region is honoured by dense (flash) attention only}}
  %0 = attn.attention %q, %q, %v {causal = true, shared_qk} : (tensor<1x2x4096x16xf32>, tensor<1x2x4096x16xf32>, tensor<1x2x4096x16xf32>) -> tensor<1x2x4096x16xf32>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c8 = arith.constant 8 : index
        %d = arith.subi %i, %j : index
        %near = arith.cmpi ult, %d, %c8 : index
        attn.yield %near : i1
      }
  return %0 : tensor<1x2x4096x16xf32>
}
