// RUN: lcc-opt %s --lcc-deduplicate-dispatches | FileCheck %s
// RUN: lcc-opt %s --lcc-deduplicate-dispatches --lcc-print-host-plan | FileCheck %s --check-prefix=PLAN
// The printing options of the command line do not change what is equal:
// elided constants are still different, locations still do not count.
// RUN: lcc-opt %s --lcc-deduplicate-dispatches --mlir-elide-elementsattrs-if-larger=2 --mlir-print-debuginfo | FileCheck %s

// Three dispatches with the body of @layer0 (one differs only in its names
// and value names, one has no names at all), one with the same body but
// another workgroup count, one with another constant, two whose constant
// tables differ in their last element; a difference, its copy, the same
// with its operands swapped, and two copies that read at other indices.
// The copies are erased and their calls call @layer0 (or @difference),
// keeping the names of what they compute; the others stay.
// CHECK-LABEL: func.func @forward
// CHECK: call @layer0(%{{.+}}) :
// CHECK: call @layer0(%{{.+}}) {lcc.location = "model.mlir:7:3", lcc.name = "forward_1_layers.1.norm"} :
// CHECK: call @layer0(%{{.+}}) {lcc.name = "forward_dispatch_2"} :
// CHECK: call @wide(%{{.+}}) :
// CHECK: call @other_constant(%{{.+}}) :
// CHECK: call @table(%{{.+}}) :
// CHECK: call @other_table(%{{.+}}) :
// CHECK: call @difference(%{{.+}}, %{{.+}}) :
// CHECK: call @difference(%{{.+}}, %{{.+}}) {lcc.name = "difference_copy"} :
// CHECK: call @swapped(%{{.+}}, %{{.+}}) :
// CHECK: call @forward_copy(%{{.+}}, %{{.+}}) :
// CHECK: call @reversed_copy(%{{.+}}, %{{.+}}) :
// A call that names what it computes (outlining pointed it at a copy's
// first dispatch, or an earlier run did) keeps its names.
// CHECK: call @layer0(%{{.+}}) {lcc.location = "model.mlir:9:3", lcc.name = "forward_12_layers.2.norm"} :
// CHECK-NOT: func.func private @layer1
// CHECK-NOT: func.func private @forward_dispatch_2
// CHECK-DAG: func.func private @layer0(
// CHECK-DAG: func.func private @wide(
// CHECK-DAG: func.func private @other_constant(
// CHECK-DAG: func.func private @table(
// CHECK-DAG: func.func private @other_table(
// CHECK-DAG: func.func private @difference(
// CHECK-DAG: func.func private @swapped(
// CHECK-DAG: func.func private @forward_copy(
// CHECK-DAG: func.func private @reversed_copy(
// CHECK-NOT: func.func private @difference_copy

// The host plan's commands keep the names of the calls.
// PLAN: : dispatch forward_0_layers.0.norm [
// PLAN: : dispatch forward_1_layers.1.norm [
// PLAN: : dispatch forward_dispatch_2 [
// PLAN: : dispatch wide [
// PLAN: : dispatch other_constant [
// PLAN: : dispatch table [
// PLAN: : dispatch other_table [
// PLAN: : dispatch forward_12_layers.2.norm [
func.func @forward(%x: tensor<16xf32>) -> tensor<16xf32> {
  %0 = call @layer0(%x) : (tensor<16xf32>) -> tensor<16xf32>
  %1 = call @layer1(%0) : (tensor<16xf32>) -> tensor<16xf32>
  %2 = call @forward_dispatch_2(%1) : (tensor<16xf32>) -> tensor<16xf32>
  %3 = call @wide(%2) : (tensor<16xf32>) -> tensor<16xf32>
  %4 = call @other_constant(%3) : (tensor<16xf32>) -> tensor<16xf32>
  %5 = call @table(%4) : (tensor<16xf32>) -> tensor<16xf32>
  %6 = call @other_table(%5) : (tensor<16xf32>) -> tensor<16xf32>
  %7 = call @difference(%x, %6) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %8 = call @difference_copy(%x, %7) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %9 = call @swapped(%x, %8) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %10 = call @forward_copy(%x, %9) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %11 = call @reversed_copy(%x, %10) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %12 = call @layer1(%11) {lcc.location = "model.mlir:9:3", lcc.name = "forward_12_layers.2.norm"} : (tensor<16xf32>) -> tensor<16xf32>
  return %12 : tensor<16xf32>
}

func.func private @layer0(%out: tensor<16xf32>) -> tensor<16xf32>
    attributes {lcc.dispatch, lcc.location = "model.mlir:5:3",
                lcc.name = "forward_0_layers.0.norm",
                lcc.workgroup_count = array<i64: 1, 1, 1>} {
  %c = arith.constant 2.0 : f32
  %r = linalg.fill ins(%c : f32) outs(%out : tensor<16xf32>) -> tensor<16xf32>
  return %r : tensor<16xf32>
}

func.func private @layer1(%o: tensor<16xf32>) -> tensor<16xf32>
    attributes {lcc.dispatch, lcc.location = "model.mlir:7:3",
                lcc.name = "forward_1_layers.1.norm",
                lcc.workgroup_count = array<i64: 1, 1, 1>} {
  %two = arith.constant 2.0 : f32 loc("elsewhere.mlir":1:1)
  %filled = linalg.fill ins(%two : f32) outs(%o : tensor<16xf32>) -> tensor<16xf32>
  return %filled : tensor<16xf32>
}

func.func private @forward_dispatch_2(%out: tensor<16xf32>) -> tensor<16xf32>
    attributes {lcc.dispatch, lcc.workgroup_count = array<i64: 1, 1, 1>} {
  %c = arith.constant 2.0 : f32
  %r = linalg.fill ins(%c : f32) outs(%out : tensor<16xf32>) -> tensor<16xf32>
  return %r : tensor<16xf32>
}

func.func private @wide(%out: tensor<16xf32>) -> tensor<16xf32>
    attributes {lcc.dispatch, lcc.workgroup_count = array<i64: 2, 1, 1>} {
  %c = arith.constant 2.0 : f32
  %r = linalg.fill ins(%c : f32) outs(%out : tensor<16xf32>) -> tensor<16xf32>
  return %r : tensor<16xf32>
}

func.func private @other_constant(%out: tensor<16xf32>) -> tensor<16xf32>
    attributes {lcc.dispatch, lcc.workgroup_count = array<i64: 1, 1, 1>} {
  %c = arith.constant 3.0 : f32
  %r = linalg.fill ins(%c : f32) outs(%out : tensor<16xf32>) -> tensor<16xf32>
  return %r : tensor<16xf32>
}

func.func private @table(%out: tensor<16xf32>) -> tensor<16xf32>
    attributes {lcc.dispatch, lcc.workgroup_count = array<i64: 1, 1, 1>} {
  %t = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0]> : tensor<16xf32>
  %r = linalg.copy ins(%t : tensor<16xf32>) outs(%out : tensor<16xf32>) -> tensor<16xf32>
  return %r : tensor<16xf32>
}

func.func private @other_table(%out: tensor<16xf32>) -> tensor<16xf32>
    attributes {lcc.dispatch, lcc.workgroup_count = array<i64: 1, 1, 1>} {
  %t = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 17.0]> : tensor<16xf32>
  %r = linalg.copy ins(%t : tensor<16xf32>) outs(%out : tensor<16xf32>) -> tensor<16xf32>
  return %r : tensor<16xf32>
}

func.func private @difference(%a: tensor<16xf32>, %out: tensor<16xf32>) -> tensor<16xf32>
    attributes {lcc.dispatch, lcc.workgroup_count = array<i64: 1, 1, 1>} {
  %r = linalg.sub ins(%a, %out : tensor<16xf32>, tensor<16xf32>) outs(%out : tensor<16xf32>) -> tensor<16xf32>
  return %r : tensor<16xf32>
}

func.func private @difference_copy(%x: tensor<16xf32>, %y: tensor<16xf32>) -> tensor<16xf32>
    attributes {lcc.dispatch, lcc.workgroup_count = array<i64: 1, 1, 1>} {
  %d = linalg.sub ins(%x, %y : tensor<16xf32>, tensor<16xf32>) outs(%y : tensor<16xf32>) -> tensor<16xf32>
  return %d : tensor<16xf32>
}

func.func private @swapped(%a: tensor<16xf32>, %out: tensor<16xf32>) -> tensor<16xf32>
    attributes {lcc.dispatch, lcc.workgroup_count = array<i64: 1, 1, 1>} {
  %r = linalg.sub ins(%out, %a : tensor<16xf32>, tensor<16xf32>) outs(%out : tensor<16xf32>) -> tensor<16xf32>
  return %r : tensor<16xf32>
}

func.func private @forward_copy(%a: tensor<16xf32>, %out: tensor<16xf32>) -> tensor<16xf32>
    attributes {lcc.dispatch, lcc.workgroup_count = array<i64: 1, 1, 1>} {
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a : tensor<16xf32>) outs(%out : tensor<16xf32>) {
  ^bb0(%in: f32, %acc: f32):
    linalg.yield %in : f32
  } -> tensor<16xf32>
  return %r : tensor<16xf32>
}

func.func private @reversed_copy(%a: tensor<16xf32>, %out: tensor<16xf32>) -> tensor<16xf32>
    attributes {lcc.dispatch, lcc.workgroup_count = array<i64: 1, 1, 1>} {
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (15 - d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a : tensor<16xf32>) outs(%out : tensor<16xf32>) {
  ^bb0(%in: f32, %acc: f32):
    linalg.yield %in : f32
  } -> tensor<16xf32>
  return %r : tensor<16xf32>
}
