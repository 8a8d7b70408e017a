// RUN: lcc-opt %s --split-input-file --attn-chunk-ff=chunks=4 --verify-diagnostics | FileCheck %s

// Every feed-forward, nested in a block or not, runs in 4 chunks; one
// written with another count says so.
// CHECK-LABEL: func @feed_forwards
// CHECK: attn.feed_forward relu {{.+}} {chunks = 4 : i64}
// CHECK: attn.feed_forward gelu {{.+}} {chunks = 4 : i64}
func.func @feed_forwards(%x: tensor<1x64x16xf32>, %w1: tensor<16x32xf32>, %b1: tensor<32xf32>, %w2: tensor<32x16xf32>, %b2: tensor<16xf32>) -> tensor<1x64x16xf32> {
  %r = attn.residual %x : tensor<1x64x16xf32> {
  ^bb0(%a: tensor<1x64x16xf32>):
    %h = attn.feed_forward relu %a, %w1, %b1, %w2, %b2
        : (tensor<1x64x16xf32>, tensor<16x32xf32>, tensor<32xf32>, tensor<32x16xf32>, tensor<16xf32>) -> tensor<1x64x16xf32>
    attn.yield %h : tensor<1x64x16xf32>
  }
  // expected-remark@+1 {{'attn.feed_forward' written with 2 chunks now runs in 4}}
  %y = attn.feed_forward gelu %r, %w1, %b1, %w2, %b2 {chunks = 2 : i64}
      : (tensor<1x64x16xf32>, tensor<16x32xf32>, tensor<32xf32>, tensor<32x16xf32>, tensor<16xf32>) -> tensor<1x64x16xf32>
  return %y : tensor<1x64x16xf32>
}

// -----

// More chunks than positions is an error.
func.func @short_sequence(%x: tensor<1x3x16xf32>, %w1: tensor<16x32xf32>, %b1: tensor<32xf32>, %w2: tensor<32x16xf32>, %b2: tensor<16xf32>) -> tensor<1x3x16xf32> {
  // expected-error@+1 {{'attn.feed_forward' cannot run in 4 chunks: its sequence has only 3 positions; give at most 3}}
  %y = attn.feed_forward relu %x, %w1, %b1, %w2, %b2
      : (tensor<1x3x16xf32>, tensor<16x32xf32>, tensor<32xf32>, tensor<32x16xf32>, tensor<16xf32>) -> tensor<1x3x16xf32>
  return %y : tensor<1x3x16xf32>
}

// -----

// No feed-forward: a warning.
// expected-warning@+1 {{attn-chunk-ff: the model has no attn.feed_forward to chunk}}
module {
  func.func @none(%x: tensor<1x64x16xf32>) -> tensor<1x64x16xf32> {
    return %x : tensor<1x64x16xf32>
  }
}

