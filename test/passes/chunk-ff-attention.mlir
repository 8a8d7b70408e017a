// RUN: lcc-opt %s --attn-chunk-ff=attention-chunks=2 --verify-diagnostics | FileCheck %s

// attention-chunks: every LSH attention runs over its batch x heads rows
// in that many groups; the feed-forwards stay as written (chunks = 0: no
// feed-forward option given).
// CHECK-LABEL: func @lsh_rows
// CHECK: attn.lsh_attention {{.+}}chunks = 2 : i64
// CHECK: attn.feed_forward relu {{.+}} {chunks = 3 : i64}
func.func @lsh_rows(%qk: tensor<2x2x64x8xf32>, %v: tensor<2x2x64x8xf32>, %x: tensor<1x64x16xf32>, %w1: tensor<16x32xf32>, %b1: tensor<32xf32>, %w2: tensor<32x16xf32>, %b2: tensor<16xf32>) -> (tensor<2x2x64x8xf32>, tensor<1x64x16xf32>) {
  %o = attn.lsh_attention %qk, %v {n_hashes = 2 : i64, bucket_size = 16 : i64}
      : (tensor<2x2x64x8xf32>, tensor<2x2x64x8xf32>) -> tensor<2x2x64x8xf32>
  %y = attn.feed_forward relu %x, %w1, %b1, %w2, %b2 {chunks = 3 : i64}
      : (tensor<1x64x16xf32>, tensor<16x32xf32>, tensor<32xf32>, tensor<32x16xf32>, tensor<16xf32>) -> tensor<1x64x16xf32>
  return %o, %y : tensor<2x2x64x8xf32>, tensor<1x64x16xf32>
}
