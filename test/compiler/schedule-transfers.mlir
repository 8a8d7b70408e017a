// RUN: lcc-opt %s --lcc-schedule-transfers --split-input-file | FileCheck %s
// RUN: lcc-opt %s --lcc-schedule-transfers --split-input-file --lcc-print-host-plan | FileCheck %s --check-prefix=PLAN

// Ulysses: the queries' all-to-all is written next to its reader. The
// values' projection and their all-to-all move before that reader, and so
// does later work that needs no transfer; what reads the queries' reader
// stays after it, and the window ends at the values' all-to-all (the work
// after it is that transfer's to schedule, and it needs the values).
// CHECK-LABEL: func.func @ulysses
// CHECK: %[[Q:.+]] = call @project(%arg0)
// CHECK: %[[QH:.+]] = attn.all_to_all %[[Q]]
// CHECK: %[[V:.+]] = call @project(%arg1)
// CHECK: %[[VH:.+]] = attn.all_to_all %[[V]]
// CHECK: %[[QR:.+]] = call @scale(%[[QH]])
// CHECK: %[[QS:.+]] = call @scale(%[[QR]])
// CHECK: call @combine(%[[QS]], %[[VH]])
// PLAN-LABEL: host plan of @ulysses
// PLAN: dispatch project
// PLAN-NEXT: all_to_all
// PLAN: dispatch project
// PLAN-NEXT: all_to_all
// PLAN: dispatch scale
func.func private @project(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> attributes {lcc.dispatch, lcc.workgroup_count = array<i64: 1, 1, 1>}
func.func private @scale(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> attributes {lcc.dispatch, lcc.workgroup_count = array<i64: 1, 1, 1>}
func.func private @combine(%x: tensor<2x4x8xf32>, %y: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> attributes {lcc.dispatch, lcc.workgroup_count = array<i64: 1, 1, 1>}
func.func @ulysses(%x: tensor<2x4x8xf32>, %y: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %q = call @project(%x) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %qh = attn.all_to_all %q : tensor<2x4x8xf32>
  %qr = call @scale(%qh) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %qs = call @scale(%qr) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %v = call @project(%y) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %vh = attn.all_to_all %v : tensor<2x4x8xf32>
  %o = call @combine(%qs, %vh) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// Two gradient buckets' all-reduces, read in the order they started: the
// second's reader needs a transfer, so it never moves ahead of the
// first's (a wait is not moved earlier); the loss's narrowing, which needs
// none and ends a wider tensor's life, does.
// CHECK-LABEL: func.func @buckets
// CHECK: attn.all_reduce
// CHECK: attn.all_reduce
// CHECK: %[[L:.+]] = call @narrow(%{{.+}})
// CHECK: call @step(%{{.+}})
// CHECK: call @step(%{{.+}})
// CHECK: return %{{.+}}, %{{.+}}, %[[L]]
func.func private @step(%x: tensor<8xf32>) -> tensor<8xf32> attributes {lcc.dispatch, lcc.workgroup_count = array<i64: 1, 1, 1>}
func.func private @widen(%x: tensor<8xf32>) -> tensor<512xf32> attributes {lcc.dispatch, lcc.workgroup_count = array<i64: 1, 1, 1>}
func.func private @narrow(%x: tensor<512xf32>) -> tensor<8xf32> attributes {lcc.dispatch, lcc.workgroup_count = array<i64: 1, 1, 1>}
func.func @buckets(%a: tensor<8xf32>, %b: tensor<8xf32>, %loss: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %wide = call @widen(%loss) : (tensor<8xf32>) -> tensor<512xf32>
  %ra = attn.all_reduce mean %a : tensor<8xf32>
  %rb = attn.all_reduce mean %b : tensor<8xf32>
  %ua = call @step(%ra) : (tensor<8xf32>) -> tensor<8xf32>
  %ub = call @step(%rb) : (tensor<8xf32>) -> tensor<8xf32>
  %l = call @narrow(%wide) : (tensor<512xf32>) -> tensor<8xf32>
  return %ua, %ub, %l : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// Work that would hold its bytes longer stays where it is: moved before
// the reader, the widening's result would be alive beside both steps'.
// CHECK-LABEL: func.func @costly
// CHECK: attn.all_reduce
// CHECK: call @step(
// CHECK: call @widen(
func.func private @step(%x: tensor<8xf32>) -> tensor<8xf32> attributes {lcc.dispatch, lcc.workgroup_count = array<i64: 1, 1, 1>}
func.func private @widen(%x: tensor<8xf32>) -> tensor<512xf32> attributes {lcc.dispatch, lcc.workgroup_count = array<i64: 1, 1, 1>}
func.func @costly(%a: tensor<8xf32>, %loss: tensor<8xf32>) -> (tensor<8xf32>, tensor<512xf32>) {
  %ra = attn.all_reduce mean %a : tensor<8xf32>
  %ua = call @step(%ra) : (tensor<8xf32>) -> tensor<8xf32>
  %w = call @widen(%loss) : (tensor<8xf32>) -> tensor<512xf32>
  return %ua, %w : tensor<8xf32>, tensor<512xf32>
}

// -----

// A ring: each shift passes on the block the last one brought, so the
// first reader of a shift is the next shift, and nothing moves.
// CHECK-LABEL: func.func @ring
// CHECK: %[[S1:.+]] = attn.ring_shift %arg0
// CHECK: %[[A0:.+]] = call @attend(%arg0)
// CHECK: %[[S2:.+]] = attn.ring_shift %[[S1]]
// CHECK: %[[A1:.+]] = call @attend(%[[S1]])
// CHECK: call @attend(%[[S2]])
func.func private @attend(%x: tensor<2x8xf32>) -> tensor<2x8xf32> attributes {lcc.dispatch, lcc.workgroup_count = array<i64: 1, 1, 1>}
func.func @ring(%k: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) {
  %s1 = attn.ring_shift %k by 1 : tensor<2x8xf32>
  %a0 = call @attend(%k) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %s2 = attn.ring_shift %s1 by 1 : tensor<2x8xf32>
  %a1 = call @attend(%s1) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %a2 = call @attend(%s2) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %a0, %a1, %a2 : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>
}
