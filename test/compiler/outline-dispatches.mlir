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
// CHECK-SAME: attributes {lcc.dispatch, lcc.location = "{{.*}}outline-dispatches.mlir:{{[0-9]+}}:{{[0-9]+}}", lcc.workgroup_count = array<i64: 2, 1, 1>}
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

// A forall whose op has a source name (lcc names each model op after its
// parameters, e.g. layers.1.ff) makes a dispatch named after it: a symbol
// any object file or PTX can hold, the name and source position reports show.
// CHECK-LABEL: func @named
// CHECK: call @named_0_layers_1_ff(
// CHECK: func.func private @named_0_layers_1_ff({{.*}}) -> tensor<2x8xf32> attributes {lcc.dispatch, lcc.location = "model.mlir:12:8", lcc.name = "named_0_layers.1.ff", lcc.workgroup_count = array<i64: 2, 1, 1>}
func.func @named(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %e = tensor.empty() : tensor<2x8xf32>
  %0 = scf.forall (%i) in (2) shared_outs(%o = %e) -> (tensor<2x8xf32>) {
    %s = tensor.extract_slice %x[%i, 0] [1, 8] [1, 1] : tensor<2x8xf32> to tensor<1x8xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %s into %o[%i, 0] [1, 8] [1, 1] : tensor<1x8xf32> into tensor<2x8xf32>
    }
  } loc("layers.1.ff"("model.mlir":12:8))
  return %0 : tensor<2x8xf32>
}

// -----

// An op with nothing to split is a dispatch of one workgroup.
// CHECK-LABEL: func @scalar
// CHECK: call @scalar_dispatch_0
// CHECK: func.func private @scalar_dispatch_0({{.*}}) -> tensor<f32> attributes {lcc.dispatch, lcc.location = {{.*}}, lcc.workgroup_count = array<i64: 1, 1, 1>}
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

// Any other op that computes a tensor (here a pad that was not tiled) is a
// dispatch of one workgroup, with a fresh output: nothing is left on the
// host or dropped.
// CHECK-LABEL: func @host_compute
// CHECK: %[[E:.+]] = tensor.empty() : tensor<5xf32>
// CHECK: %[[R:.+]] = call @host_compute_dispatch_0(%{{.+}}, %[[E]])
// CHECK: return %[[R]]
// CHECK: func.func private @host_compute_dispatch_0({{.*}}) -> tensor<5xf32> attributes {lcc.dispatch, lcc.location = {{.*}}, lcc.workgroup_count = array<i64: 1, 1, 1>}
// CHECK: tensor.pad
func.func @host_compute(%x: tensor<4xf32>) -> tensor<5xf32> {
  %0 = tensor.pad %x low[1] high[0] {
  ^bb0(%i: index):
    %c = arith.constant 0.0 : f32
    tensor.yield %c : f32
  } : tensor<4xf32> to tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// A loop over tensors left at the top level (a one-iteration forall folded
// away) is a dispatch of one workgroup; a scalar it also yields travels as a
// 0-d tensor (an index as i64) that the dispatches using it read back.
// CHECK-LABEL: func @host_loop
// CHECK: %[[R:.+]]:2 = call @host_loop_dispatch_0(
// CHECK-SAME: -> (tensor<4xf32>, tensor<i64>)
// CHECK: call @host_loop_dispatch_1(%[[R]]#0, %[[R]]#1,
// CHECK: func.func private @host_loop_dispatch_0({{.*}}) -> (tensor<4xf32>, tensor<i64>)
// CHECK: scf.for
// CHECK: %[[C:.+]] = arith.index_cast %{{.+}} : index to i64
// CHECK: tensor.from_elements %[[C]] : tensor<i64>
// CHECK: func.func private @host_loop_dispatch_1
// CHECK: %[[N:.+]] = tensor.extract %{{.+}}[] : tensor<i64>
// CHECK: arith.index_cast %[[N]] : i64 to index
func.func @host_loop(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %0:2 = scf.for %i = %c0 to %c3 step %c1 iter_args(%t = %x, %n = %c0) -> (tensor<4xf32>, index) {
    %y = arith.addf %t, %t : tensor<4xf32>
    %m = arith.addi %n, %c1 : index
    scf.yield %y, %m : tensor<4xf32>, index
  }
  %e = tensor.empty() : tensor<4xf32>
  %1 = scf.forall (%j) in (4) shared_outs(%o = %e) -> (tensor<4xf32>) {
    %v = tensor.extract %0#0[%0#1] : tensor<4xf32>
    %s = tensor.from_elements %v : tensor<1xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %s into %o[%j] [1] [1] : tensor<1xf32> into tensor<4xf32>
    }
  }
  return %0#0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// What a dispatch cannot hand back to the host is an error, not silently
// dropped.
func.func @host_memref() -> memref<4xf32> {
  // expected-error@+1 {{'memref.alloc' op has a result of type 'memref<4xf32>', which a dispatch cannot return to the host program}}
  %0 = memref.alloc() : memref<4xf32>
  return %0 : memref<4xf32>
}

// -----

// A constant tensor of 1 KiB or more that is not one value repeated (an LSH
// layer's rotations) is passed to each dispatch reading it, computed just
// before it by a dispatch of its own, instead of built into the kernel: two
// layers with different rotations then share one hashing kernel. A smaller
// one stays built in.
// CHECK-LABEL: func @passed_constant
// CHECK: %[[T1:.+]] = call @passed_constant_dispatch_2(%{{.+}}) : (tensor<256xi32>) -> tensor<256xi32>
// CHECK: call @passed_constant_dispatch_0(%[[T1]], %{{.+}})
// CHECK: %[[T2:.+]] = call @passed_constant_dispatch_3(%{{.+}}) : (tensor<256xi32>) -> tensor<256xi32>
// CHECK: call @passed_constant_dispatch_1(%[[T2]], %{{.+}}, %{{.+}})
// CHECK: func.func private @passed_constant_dispatch_0(%{{.+}}: tensor<256xi32>, %{{.+}}: tensor<2xi32>)
// CHECK-NOT: dense<"0x
// CHECK: func.func private @passed_constant_dispatch_1(%{{.+}}: tensor<256xi32>, %{{.+}}: tensor<2xi32>, %{{.+}}: tensor<2xi32>)
// CHECK: arith.constant dense<[7, 9]> : tensor<2xi32>
// CHECK: func.func private @passed_constant_dispatch_2(%{{.+}}: tensor<256xi32>)
// CHECK: %[[C:.+]] = arith.constant dense<"0x000000000100000002000000
// CHECK: return %[[C]]
// CHECK: func.func private @passed_constant_dispatch_3(
func.func @passed_constant(%x: tensor<2xi32>) -> (tensor<2xi32>, tensor<2xi32>) {
  %table = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127, 128, 129, 130, 131, 132, 133, 134, 135, 136, 137, 138, 139, 140, 141, 142, 143, 144, 145, 146, 147, 148, 149, 150, 151, 152, 153, 154, 155, 156, 157, 158, 159, 160, 161, 162, 163, 164, 165, 166, 167, 168, 169, 170, 171, 172, 173, 174, 175, 176, 177, 178, 179, 180, 181, 182, 183, 184, 185, 186, 187, 188, 189, 190, 191, 192, 193, 194, 195, 196, 197, 198, 199, 200, 201, 202, 203, 204, 205, 206, 207, 208, 209, 210, 211, 212, 213, 214, 215, 216, 217, 218, 219, 220, 221, 222, 223, 224, 225, 226, 227, 228, 229, 230, 231, 232, 233, 234, 235, 236, 237, 238, 239, 240, 241, 242, 243, 244, 245, 246, 247, 248, 249, 250, 251, 252, 253, 254, 255]> : tensor<256xi32>
  %small = arith.constant dense<[7, 9]> : tensor<2xi32>
  %e = tensor.empty() : tensor<2xi32>
  %0 = scf.forall (%i) in (2) shared_outs(%o = %e) -> (tensor<2xi32>) {
    %s = tensor.extract_slice %table[%i] [1] [1] : tensor<256xi32> to tensor<1xi32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %s into %o[%i] [1] [1] : tensor<1xi32> into tensor<2xi32>
    }
  }
  %1 = scf.forall (%i) in (2) shared_outs(%o = %e) -> (tensor<2xi32>) {
    %s = tensor.extract_slice %table[%i] [1] [1] : tensor<256xi32> to tensor<1xi32>
    %t = tensor.extract_slice %small[%i] [1] [1] : tensor<2xi32> to tensor<1xi32>
    %u = tensor.extract_slice %x[%i] [1] [1] : tensor<2xi32> to tensor<1xi32>
    %v = arith.addi %s, %t : tensor<1xi32>
    %w = arith.addi %v, %u : tensor<1xi32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %w into %o[%i] [1] [1] : tensor<1xi32> into tensor<2xi32>
    }
  }
  return %0, %1 : tensor<2xi32>, tensor<2xi32>
}

// -----

// A copy of an op already outlined (a layer's copy: the same ops, reading
// other values of the same kinds) calls the first one's dispatch, with the
// names of what it computes, instead of being outlined again; its passed
// constant reaches the dispatch as a copy made before the call, as the
// first's did. Not copies: an op that reads one value where the first read
// two, one whose cloned-in constant differs, and one that reads an argument
// where the first read a passed constant.
// CHECK-LABEL: func @copies
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2xi32>, %[[Y:[^:]+]]: tensor<2xi32>, %[[Z:[^:]+]]: tensor<256xi32>)
// CHECK: %[[T0:.+]] = call @copies_dispatch_5(
// CHECK: call @copies_0_layers_0_ff(%[[T0]], %[[X]], %[[Y]], %[[E:[^)]+]]) :
// CHECK: %[[T1:.+]] = call @copies_dispatch_6(
// CHECK: call @copies_0_layers_0_ff(%[[T1]], %[[Y]], %[[X]], %[[E]]) {lcc.location = "model.mlir:20:3", lcc.name = "copies_1_layers.1.ff"} :
// CHECK: call @copies_2_layers_2_ff(%{{.+}}, %[[X]], %[[E]]) :
// CHECK: call @copies_3_layers_3_ff(%{{.+}}, %[[Y]], %[[X]], %[[E]]) :
// CHECK: call @copies_4_layers_4_ff(%[[Z]], %[[Y]], %[[X]], %[[E]]) :
// CHECK-NOT: func.func private @copies_1_layers_1_ff
// CHECK: func.func private @copies_0_layers_0_ff(
// CHECK-NOT: func.func private @copies_1_layers_1_ff
// CHECK: func.func private @copies_2_layers_2_ff(
// CHECK: func.func private @copies_3_layers_3_ff(
// CHECK: arith.constant dense<4> : tensor<1xi32>
// CHECK: func.func private @copies_4_layers_4_ff(
func.func @copies(%x: tensor<2xi32>, %y: tensor<2xi32>, %z: tensor<256xi32>) -> (tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) {
  %table0 = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127, 128, 129, 130, 131, 132, 133, 134, 135, 136, 137, 138, 139, 140, 141, 142, 143, 144, 145, 146, 147, 148, 149, 150, 151, 152, 153, 154, 155, 156, 157, 158, 159, 160, 161, 162, 163, 164, 165, 166, 167, 168, 169, 170, 171, 172, 173, 174, 175, 176, 177, 178, 179, 180, 181, 182, 183, 184, 185, 186, 187, 188, 189, 190, 191, 192, 193, 194, 195, 196, 197, 198, 199, 200, 201, 202, 203, 204, 205, 206, 207, 208, 209, 210, 211, 212, 213, 214, 215, 216, 217, 218, 219, 220, 221, 222, 223, 224, 225, 226, 227, 228, 229, 230, 231, 232, 233, 234, 235, 236, 237, 238, 239, 240, 241, 242, 243, 244, 245, 246, 247, 248, 249, 250, 251, 252, 253, 254, 255]> : tensor<256xi32>
  %table1 = arith.constant dense<[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127, 128, 129, 130, 131, 132, 133, 134, 135, 136, 137, 138, 139, 140, 141, 142, 143, 144, 145, 146, 147, 148, 149, 150, 151, 152, 153, 154, 155, 156, 157, 158, 159, 160, 161, 162, 163, 164, 165, 166, 167, 168, 169, 170, 171, 172, 173, 174, 175, 176, 177, 178, 179, 180, 181, 182, 183, 184, 185, 186, 187, 188, 189, 190, 191, 192, 193, 194, 195, 196, 197, 198, 199, 200, 201, 202, 203, 204, 205, 206, 207, 208, 209, 210, 211, 212, 213, 214, 215, 216, 217, 218, 219, 220, 221, 222, 223, 224, 225, 226, 227, 228, 229, 230, 231, 232, 233, 234, 235, 236, 237, 238, 239, 240, 241, 242, 243, 244, 245, 246, 247, 248, 249, 250, 251, 252, 253, 254, 255, 256]> : tensor<256xi32>
  %three = arith.constant dense<3> : tensor<1xi32>
  %four = arith.constant dense<4> : tensor<1xi32>
  %e = tensor.empty() : tensor<2xi32>
  %0 = scf.forall (%i) in (2) shared_outs(%o = %e) -> (tensor<2xi32>) {
    %s = tensor.extract_slice %table0[%i] [1] [1] : tensor<256xi32> to tensor<1xi32>
    %u = tensor.extract_slice %x[%i] [1] [1] : tensor<2xi32> to tensor<1xi32>
    %v = tensor.extract_slice %y[%i] [1] [1] : tensor<2xi32> to tensor<1xi32>
    %a = arith.addi %s, %u : tensor<1xi32>
    %b = arith.subi %a, %v : tensor<1xi32>
    %c = arith.muli %b, %three : tensor<1xi32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %c into %o[%i] [1] [1] : tensor<1xi32> into tensor<2xi32>
    }
  } loc("layers.0.ff"("model.mlir":10:3))
  %1 = scf.forall (%i) in (2) shared_outs(%o = %e) -> (tensor<2xi32>) {
    %s = tensor.extract_slice %table1[%i] [1] [1] : tensor<256xi32> to tensor<1xi32>
    %u = tensor.extract_slice %y[%i] [1] [1] : tensor<2xi32> to tensor<1xi32>
    %v = tensor.extract_slice %x[%i] [1] [1] : tensor<2xi32> to tensor<1xi32>
    %a = arith.addi %s, %u : tensor<1xi32>
    %b = arith.subi %a, %v : tensor<1xi32>
    %c = arith.muli %b, %three : tensor<1xi32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %c into %o[%i] [1] [1] : tensor<1xi32> into tensor<2xi32>
    }
  } loc("layers.1.ff"("model.mlir":20:3))
  %2 = scf.forall (%i) in (2) shared_outs(%o = %e) -> (tensor<2xi32>) {
    %s = tensor.extract_slice %table1[%i] [1] [1] : tensor<256xi32> to tensor<1xi32>
    %u = tensor.extract_slice %x[%i] [1] [1] : tensor<2xi32> to tensor<1xi32>
    %v = tensor.extract_slice %x[%i] [1] [1] : tensor<2xi32> to tensor<1xi32>
    %a = arith.addi %s, %u : tensor<1xi32>
    %b = arith.subi %a, %v : tensor<1xi32>
    %c = arith.muli %b, %three : tensor<1xi32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %c into %o[%i] [1] [1] : tensor<1xi32> into tensor<2xi32>
    }
  } loc("layers.2.ff"("model.mlir":30:3))
  %3 = scf.forall (%i) in (2) shared_outs(%o = %e) -> (tensor<2xi32>) {
    %s = tensor.extract_slice %table1[%i] [1] [1] : tensor<256xi32> to tensor<1xi32>
    %u = tensor.extract_slice %y[%i] [1] [1] : tensor<2xi32> to tensor<1xi32>
    %v = tensor.extract_slice %x[%i] [1] [1] : tensor<2xi32> to tensor<1xi32>
    %a = arith.addi %s, %u : tensor<1xi32>
    %b = arith.subi %a, %v : tensor<1xi32>
    %c = arith.muli %b, %four : tensor<1xi32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %c into %o[%i] [1] [1] : tensor<1xi32> into tensor<2xi32>
    }
  } loc("layers.3.ff"("model.mlir":40:3))
  %4 = scf.forall (%i) in (2) shared_outs(%o = %e) -> (tensor<2xi32>) {
    %s = tensor.extract_slice %z[%i] [1] [1] : tensor<256xi32> to tensor<1xi32>
    %u = tensor.extract_slice %y[%i] [1] [1] : tensor<2xi32> to tensor<1xi32>
    %v = tensor.extract_slice %x[%i] [1] [1] : tensor<2xi32> to tensor<1xi32>
    %a = arith.addi %s, %u : tensor<1xi32>
    %b = arith.subi %a, %v : tensor<1xi32>
    %c = arith.muli %b, %three : tensor<1xi32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %c into %o[%i] [1] [1] : tensor<1xi32> into tensor<2xi32>
    }
  } loc("layers.4.ff"("model.mlir":50:3))
  return %0, %1, %2, %3, %4 : tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>
}
