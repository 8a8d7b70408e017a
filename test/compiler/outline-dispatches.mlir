// RUN: lcc-opt %s --split-input-file --lcc-outline-dispatches --verify-diagnostics | FileCheck %s

// A forall becomes a dispatch: its induction variables come from the block
// ids, its shared output is the last argument, its parallel_insert_slice an
// insert_slice, and the host calls it. The view of %x is cloned into the
// dispatch, so the dispatch receives %x itself.
// CHECK-LABEL: func @host
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK: %[[E:.+]] = tensor.empty() : tensor<2x8xf32>
// CHECK: %[[R:.+]] = call @host_dispatch_0(%[[X]], %[[E]]) : (tensor<4x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK: return %[[R]]
// CHECK: func.func private @host_dispatch_0(%[[A:.+]]: tensor<4x8xf32>, %[[OUT:.+]]: tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK-SAME: attributes {lcc.dispatch, lcc.workgroup_count = array<i64: 2, 1, 1>}
// CHECK-DAG: %[[VIEW:.+]] = tensor.extract_slice %[[A]][0, 0] [2, 8] [1, 1]
// CHECK-DAG: %[[ID:.+]] = gpu.block_id x
// CHECK: %[[I:.+]] = arith.muli %[[ID]], %{{.+}}
// CHECK: tensor.extract_slice %[[VIEW]]
// CHECK: %[[INS:.+]] = tensor.insert_slice %{{.+}} into %[[OUT]][%{{.+}}, 0] [1, 8] [1, 1]
// CHECK: return %[[INS]]
func.func @host(%x: tensor<4x8xf32>) -> tensor<2x8xf32> {
  %view = tensor.extract_slice %x[0, 0] [2, 8] [1, 1] : tensor<4x8xf32> to tensor<2x8xf32>
  %e = tensor.empty() : tensor<2x8xf32>
  %0 = scf.forall (%i) in (2) shared_outs(%o = %e) -> (tensor<2x8xf32>) {
    %s = tensor.extract_slice %view[%i, 0] [1, 8] [1, 1] : tensor<2x8xf32> to tensor<1x8xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %s into %o[%i, 0] [1, 8] [1, 1] : tensor<1x8xf32> into tensor<2x8xf32>
    }
  }
  return %0 : tensor<2x8xf32>
}

// -----

// An op with nothing to split is a dispatch of one workgroup.
// CHECK-LABEL: func @scalar
// CHECK: call @scalar_dispatch_0
// CHECK: func.func private @scalar_dispatch_0({{.*}}) -> tensor<f32> attributes {lcc.dispatch, lcc.workgroup_count = array<i64: 1, 1, 1>}
// CHECK: linalg.generic
func.func @scalar(%x: tensor<8xf32>, %acc: tensor<f32>) -> tensor<f32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%x : tensor<8xf32>) outs(%acc : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %o, %a : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// A workgroup grid has three dimensions.
func.func @four_dimensions(%x: tensor<2x2x2x2xf32>) -> tensor<2x2x2x2xf32> {
  // expected-error@+1 {{'scf.forall' op has 4 dimensions; a workgroup grid has at most 3}}
  %0 = scf.forall (%i, %j, %k, %l) in (2, 2, 2, 2) shared_outs(%o = %x) -> (tensor<2x2x2x2xf32>) {
    scf.forall.in_parallel {
    }
  }
  return %0 : tensor<2x2x2x2xf32>
}

// -----

// Anything else left on the host is an error, not silently dropped.
func.func @host_compute(%x: tensor<4xf32>) -> tensor<5xf32> {
  // expected-error@+1 {{'tensor.pad' op was left outside every dispatch}}
  %0 = tensor.pad %x low[1] high[0] {
  ^bb0(%i: index):
    %c = arith.constant 0.0 : f32
    tensor.yield %c : f32
  } : tensor<4xf32> to tensor<5xf32>
  return %0 : tensor<5xf32>
}
