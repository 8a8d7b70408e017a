// RUN: lcc-opt %s --split-input-file --attn-insert-reversible --verify-diagnostics | FileCheck %s

// Two (attention, feed-forward) residual pairs become two reversible
// blocks: the input in both streams, the streams' mean at the end.
// CHECK-LABEL: func @two_layers
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<1x64x16xf32>
// CHECK: %[[Y1A:[a-z0-9_]+]], %[[Y2A:[a-z0-9_]+]] = attn.reversible %[[X]], %[[X]]
// CHECK: f {
// CHECK: attn.param "l0.attn.wq"
// CHECK: attn.multi_head_attention
// CHECK: } g {
// CHECK: attn.param "l0.ff.w1"
// CHECK: attn.feed_forward
// CHECK: %[[Y1B:[a-z0-9_]+]], %[[Y2B:[a-z0-9_]+]] = attn.reversible %[[Y1A]], %[[Y2A]]
// CHECK: attn.param "l1.attn.wq"
// CHECK: attn.param "l1.ff.w1"
// CHECK: %[[HALF:.+]] = arith.constant dense<5.000000e-01> : tensor<1x64x16xf32>
// CHECK: %[[SUM:.+]] = arith.addf %[[Y1B]], %[[Y2B]]
// CHECK: %[[MEAN:.+]] = arith.mulf %[[SUM]], %[[HALF]]
// CHECK: return %[[MEAN]]
// CHECK-NOT: attn.residual
func.func @two_layers(%x: tensor<1x64x16xf32>) -> tensor<1x64x16xf32> {
  // expected-remark@+1 {{residual stack of 4 blocks made reversible: 2 reversible blocks (attention, feed-forward), the input in both streams, merged by their mean}}
  %a0 = attn.residual %x : tensor<1x64x16xf32> {
  ^bb0(%a: tensor<1x64x16xf32>):
    %wq = attn.param "l0.attn.wq" : tensor<16x16xf32>
    %wv = attn.param "l0.attn.wv" : tensor<16x16xf32>
    %wo = attn.param "l0.attn.wo" : tensor<16x16xf32>
    %h = attn.multi_head_attention %a, query %wq, value %wv, output %wo {heads = 2 : i64}
        : (tensor<1x64x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<1x64x16xf32> {
    ^bb0(%qk: tensor<1x2x64x8xf32>, %v: tensor<1x2x64x8xf32>):
      %o = attn.attention %qk, %qk, %v {causal = true, shared_qk}
          : (tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32>
      attn.yield %o : tensor<1x2x64x8xf32>
    }
    attn.yield %h : tensor<1x64x16xf32>
  }
  %f0 = attn.residual %a0 : tensor<1x64x16xf32> {
  ^bb0(%a: tensor<1x64x16xf32>):
    %w1 = attn.param "l0.ff.w1" : tensor<16x32xf32>
    %b1 = attn.param "l0.ff.b1" : tensor<32xf32>
    %w2 = attn.param "l0.ff.w2" : tensor<32x16xf32>
    %b2 = attn.param "l0.ff.b2" : tensor<16xf32>
    %h = attn.feed_forward relu %a, %w1, %b1, %w2, %b2
        : (tensor<1x64x16xf32>, tensor<16x32xf32>, tensor<32xf32>, tensor<32x16xf32>, tensor<16xf32>) -> tensor<1x64x16xf32>
    attn.yield %h : tensor<1x64x16xf32>
  }
  %a1 = attn.residual %f0 : tensor<1x64x16xf32> {
  ^bb0(%a: tensor<1x64x16xf32>):
    %wq = attn.param "l1.attn.wq" : tensor<16x16xf32>
    %wv = attn.param "l1.attn.wv" : tensor<16x16xf32>
    %wo = attn.param "l1.attn.wo" : tensor<16x16xf32>
    %h = attn.multi_head_attention %a, query %wq, value %wv, output %wo {heads = 2 : i64}
        : (tensor<1x64x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<1x64x16xf32> {
    ^bb0(%qk: tensor<1x2x64x8xf32>, %v: tensor<1x2x64x8xf32>):
      %o = attn.lsh_attention %qk, %v {n_hashes = 2 : i64, bucket_size = 16 : i64, causal = true, seed = 3 : i64}
          : (tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32>
      attn.yield %o : tensor<1x2x64x8xf32>
    }
    attn.yield %h : tensor<1x64x16xf32>
  }
  %f1 = attn.residual %a1 : tensor<1x64x16xf32> {
  ^bb0(%a: tensor<1x64x16xf32>):
    %w1 = attn.param "l1.ff.w1" : tensor<16x32xf32>
    %b1 = attn.param "l1.ff.b1" : tensor<32xf32>
    %w2 = attn.param "l1.ff.w2" : tensor<32x16xf32>
    %b2 = attn.param "l1.ff.b2" : tensor<16xf32>
    %h = attn.feed_forward relu %a, %w1, %b1, %w2, %b2
        : (tensor<1x64x16xf32>, tensor<16x32xf32>, tensor<32xf32>, tensor<32x16xf32>, tensor<16xf32>) -> tensor<1x64x16xf32>
    attn.yield %h : tensor<1x64x16xf32>
  }
  return %f1 : tensor<1x64x16xf32>
}

// -----

// An attention block whose result is also used elsewhere (a skip to the
// output) cannot give its result to the feed-forward alone: both blocks
// stay, each with the reason.
// CHECK-LABEL: func @skip_connection
// CHECK-COUNT-2: attn.residual
// CHECK-NOT: attn.reversible
func.func @skip_connection(%x: tensor<1x64x16xf32>, %w1: tensor<16x32xf32>, %b1: tensor<32xf32>, %w2: tensor<32x16xf32>, %b2: tensor<16xf32>, %wq: tensor<16x16xf32>) -> tensor<1x64x16xf32> {
  // expected-remark@+1 {{residual stack of 1 block kept: its last attention block is not followed by a feed-forward block that alone takes its result; 'arith.addf' uses it; 'attn.residual' uses it}}
  %a0 = attn.residual %x : tensor<1x64x16xf32> {
  ^bb0(%a: tensor<1x64x16xf32>):
    %h = attn.multi_head_attention %a, query %wq, value %wq, output %wq {heads = 2 : i64}
        : (tensor<1x64x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<1x64x16xf32> {
    ^bb0(%qk: tensor<1x2x64x8xf32>, %v: tensor<1x2x64x8xf32>):
      %o = attn.attention %qk, %qk, %v {shared_qk}
          : (tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32>
      attn.yield %o : tensor<1x2x64x8xf32>
    }
    attn.yield %h : tensor<1x64x16xf32>
  }
  // expected-remark@+1 {{residual stack of 1 block kept: block 0 is not an attention block, and a reversible block pairs an attention block (F) with the feed-forward block after it (G)}}
  %f0 = attn.residual %a0 : tensor<1x64x16xf32> {
  ^bb0(%a: tensor<1x64x16xf32>):
    %h = attn.feed_forward relu %a, %w1, %b1, %w2, %b2
        : (tensor<1x64x16xf32>, tensor<16x32xf32>, tensor<32xf32>, tensor<32x16xf32>, tensor<16xf32>) -> tensor<1x64x16xf32>
    attn.yield %h : tensor<1x64x16xf32>
  }
  %y = arith.addf %f0, %a0 : tensor<1x64x16xf32>
  return %y : tensor<1x64x16xf32>
}

// -----

// Two attention blocks in a row: the second stops the pairing.
// CHECK-LABEL: func @attention_twice
// CHECK-NOT: attn.reversible
func.func @attention_twice(%x: tensor<1x64x16xf32>, %wq: tensor<16x16xf32>) -> tensor<1x64x16xf32> {
  %a0 = attn.residual %x : tensor<1x64x16xf32> {
  ^bb0(%a: tensor<1x64x16xf32>):
    %h = attn.multi_head_attention %a, query %wq, value %wq, output %wq {heads = 2 : i64}
        : (tensor<1x64x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<1x64x16xf32> {
    ^bb0(%qk: tensor<1x2x64x8xf32>, %v: tensor<1x2x64x8xf32>):
      %o = attn.attention %qk, %qk, %v {shared_qk}
          : (tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32>
      attn.yield %o : tensor<1x2x64x8xf32>
    }
    attn.yield %h : tensor<1x64x16xf32>
  }
  // expected-remark@+1 {{residual stack of 2 blocks kept: block 1 follows an attention block but is not a feed-forward block}}
  %a1 = attn.residual %a0 : tensor<1x64x16xf32> {
  ^bb0(%a: tensor<1x64x16xf32>):
    %h = attn.multi_head_attention %a, query %wq, value %wq, output %wq {heads = 2 : i64}
        : (tensor<1x64x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<1x64x16xf32> {
    ^bb0(%qk: tensor<1x2x64x8xf32>, %v: tensor<1x2x64x8xf32>):
      %o = attn.attention %qk, %qk, %v {shared_qk}
          : (tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32>
      attn.yield %o : tensor<1x2x64x8xf32>
    }
    attn.yield %h : tensor<1x64x16xf32>
  }
  return %a1 : tensor<1x64x16xf32>
}

// -----

// A block written reversible is kept as it is; nothing to warn about.
// CHECK-LABEL: func @written_reversible
// CHECK: attn.reversible %{{.+}}, %{{.+}} :
// CHECK-NOT: arith.mulf
func.func @written_reversible(%x: tensor<1x64x16xf32>, %w: tensor<16x16xf32>) -> tensor<1x64x16xf32> {
  %y:2 = attn.reversible %x, %x : tensor<1x64x16xf32>, tensor<1x64x16xf32>
  f {
  ^bb0(%a: tensor<1x64x16xf32>):
    %h = attn.linear %a, %w : (tensor<1x64x16xf32>, tensor<16x16xf32>) -> tensor<1x64x16xf32>
    attn.yield %h : tensor<1x64x16xf32>
  } g {
  ^bb0(%a: tensor<1x64x16xf32>):
    %h = attn.linear %a, %w : (tensor<1x64x16xf32>, tensor<16x16xf32>) -> tensor<1x64x16xf32>
    attn.yield %h : tensor<1x64x16xf32>
  }
  %s = arith.addf %y#0, %y#1 : tensor<1x64x16xf32>
  return %s : tensor<1x64x16xf32>
}

// -----

// Nothing to make reversible: a warning, the model as it was.
// CHECK-LABEL: func @no_blocks
// expected-warning@+1 {{attn-insert-reversible: the model has no residual or reversible block: its activations are stored as before}}
module {
  func.func @no_blocks(%x: tensor<1x64x16xf32>, %w: tensor<16x16xf32>) -> tensor<1x64x16xf32> {
    %h = attn.linear %x, %w : (tensor<1x64x16xf32>, tensor<16x16xf32>) -> tensor<1x64x16xf32>
    return %h : tensor<1x64x16xf32>
  }
}
