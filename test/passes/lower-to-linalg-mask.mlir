// RUN: lcc-opt %s --split-input-file --attn-lower-to-linalg --verify-diagnostics | FileCheck %s

// A sliding window of 64 keys on each side at seq 256 in tiles of 64: the
// block table is a constant computed at compile time (0: hidden, 1: partly
// visible, 2: wholly visible); hidden key tiles are skipped by an scf.if
// around the tile's work, wholly visible ones take a second scf.if to the
// scores without the mask, the others have the mask inlined into their
// scores, and a query that sees no key gets zeros.
// CHECK-LABEL: func @sliding_window
// CHECK-DAG: %[[TABLE:.+]] = arith.constant dense<{{\[}}[2, 1, 0, 0], [1, 2, 1, 0], [0, 1, 2, 1], [0, 0, 1, 2]]> : tensor<4x4xi8>
// CHECK: scf.for
// CHECK: %[[ENTRY:.+]] = tensor.extract %[[TABLE]]
// CHECK: %[[VISIBLE:.+]] = arith.cmpi ne, %[[ENTRY]]
// CHECK: scf.if %[[VISIBLE]]
// CHECK: %[[FULL:.+]] = arith.cmpi eq, %{{.+}}, %c2_i8
// CHECK: scf.if %[[FULL]]
// CHECK: arith.maxsi
// CHECK: arith.cmpi slt
// CHECK: arith.cmpf oeq
func.func @sliding_window(%q: tensor<1x2x256x16xf32>) -> tensor<1x2x256x16xf32> {
  // The fraction of key tiles visited is measured from the table.
  // expected-remark@+1 {{mask visits 10 of 16 (query, key) tile pairs (62.5%), 4 of them unmasked}}
  %0 = attn.attention %q, %q, %q : (tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32>) -> tensor<1x2x256x16xf32>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %d = arith.subi %i, %j : index
        %e = arith.subi %j, %i : index
        %distance = arith.maxsi %d, %e : index
        %w = arith.constant 64 : index
        %near = arith.cmpi slt, %distance, %w : index
        attn.yield %near : i1
      }
  return %0 : tensor<1x2x256x16xf32>
}

// -----

// A mask that reads the head has one table per (batch, head): head 1 sees
// only the first 64 keys.
// CHECK-LABEL: func @per_head
// CHECK: arith.constant dense<{{\[}}[{{\[}}2, 2, 2, 2], [2, 2, 2, 2], [2, 2, 2, 2], [2, 2, 2, 2]], [{{\[}}2, 0, 0, 0], [2, 0, 0, 0], [2, 0, 0, 0], [2, 0, 0, 0]]]> : tensor<2x4x4xi8>
func.func @per_head(%q: tensor<1x2x256x16xf32>) -> tensor<1x2x256x16xf32> {
  // expected-remark@+1 {{mask visits 20 of 32 (query, key) tile pairs (62.5%), 20 of them unmasked}}
  %0 = attn.attention %q, %q, %q : (tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32>) -> tensor<1x2x256x16xf32>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %zero = arith.constant 0 : index
        %first = arith.cmpi eq, %h, %zero : index
        %c64 = arith.constant 64 : index
        %early = arith.cmpi slt, %j, %c64 : index
        %t = arith.ori %first, %early : i1
        attn.yield %t : i1
      }
  return %0 : tensor<1x2x256x16xf32>
}

// -----

// A mask that hides no whole tile and shows none wholly needs no table.
// CHECK-LABEL: func @no_hidden_tile
// CHECK-NOT: xi8>
// CHECK-NOT: scf.if
// CHECK: return
func.func @no_hidden_tile(%q: tensor<1x2x256x16xf32>) -> tensor<1x2x256x16xf32> {
  // expected-remark@+1 {{mask visits 16 of 16 (query, key) tile pairs (100.0%), 0 of them unmasked}}
  %0 = attn.attention %q, %q, %q : (tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32>) -> tensor<1x2x256x16xf32>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c2 = arith.constant 2 : index
        %r = arith.remui %j, %c2 : index
        %zero = arith.constant 0 : index
        %even = arith.cmpi eq, %r, %zero : index
        attn.yield %even : i1
      }
  return %0 : tensor<1x2x256x16xf32>
}

// -----

// A mask computed with floats has no table: every tile is visited, and a
// remark says why.
// CHECK-LABEL: func @float_mask
// CHECK-NOT: xi8>
func.func @float_mask(%q: tensor<1x2x256x16xf32>) -> tensor<1x2x256x16xf32> {
  // expected-remark@+1 {{every key tile is visited: its mask computes with 'arith.sitofp', which the tile table does not evaluate}}
  %0 = attn.attention %q, %q, %q : (tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32>) -> tensor<1x2x256x16xf32>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %i64 = arith.index_cast %i : index to i64
        %f = arith.sitofp %i64 : i64 to f32
        %half = arith.constant 100.0 : f32
        %t = arith.cmpf olt, %f, %half : f32
        attn.yield %t : i1
      }
  return %0 : tensor<1x2x256x16xf32>
}

// -----

// The score region is inlined where the scores are scaled, before masking.
// CHECK-LABEL: func @soft_cap
// CHECK: linalg.generic
// CHECK: arith.mulf
// CHECK: math.tanh
// CHECK: arith.select
func.func @soft_cap(%q: tensor<1x2x256x16xf32>) -> tensor<1x2x256x16xf32> {
  %0 = attn.attention %q, %q, %q {causal = true} : (tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32>) -> tensor<1x2x256x16xf32>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %cap = arith.constant 30.0 : f32
        %x = arith.divf %s, %cap : f32
        %t = math.tanh %x : f32
        %y = arith.mulf %t, %cap : f32
        attn.yield %y : f32
      }
  return %0 : tensor<1x2x256x16xf32>
}

// -----

// A block table is at most 2^22 entries: beyond, every tile is visited.
// CHECK-LABEL: func @huge_table
// CHECK-NOT: xi8>
func.func @huge_table(%q: tensor<1x1x262144x1xf32>) -> tensor<1x1x262144x1xf32> {
  // expected-remark@+1 {{every key tile is visited: its block table would have 16777216 entries, more than the 4194304 lcc embeds}}
  %0 = attn.attention %q, %q, %q : (tensor<1x1x262144x1xf32>, tensor<1x1x262144x1xf32>, tensor<1x1x262144x1xf32>) -> tensor<1x1x262144x1xf32>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %t = arith.cmpi ule, %j, %i : index
        attn.yield %t : i1
      }
  return %0 : tensor<1x1x262144x1xf32>
}
