// RUN: lcc-opt %s --split-input-file --lcc-distribute-to-threads --canonicalize --verify-diagnostics | FileCheck %s
// RUN: lcc-opt %s --split-input-file --lcc-distribute-to-threads="block-size=256" --canonicalize --verify-diagnostics | FileCheck %s --check-prefix=B256

// An elementwise op: its two parallel loops become one loop over 8 * 32
// elements, thread t taking t, t + 128, ...; the column varies fastest, so
// neighbouring threads touch neighbouring elements. Barriers keep it apart
// from what came before and after.
// CHECK-LABEL: gpu.func @elementwise
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
// CHECK-DAG: %[[C128:.+]] = arith.constant 128 : index
// CHECK-DAG: %[[C256:.+]] = arith.constant 256 : index
// CHECK-DAG: %[[TID:.+]] = gpu.thread_id x
// CHECK: gpu.barrier
// CHECK: scf.for %[[L:.+]] = %[[TID]] to %[[C256]] step %[[C128]]
// CHECK: %[[IJ:.+]]:2 = affine.delinearize_index %[[L]] into (8, 32)
// CHECK: memref.load %{{.+}}[%[[IJ]]#0, %[[IJ]]#1]
// CHECK: arith.addf
// CHECK: memref.store %{{.+}}, %{{.+}}[%[[IJ]]#0, %[[IJ]]#1]
// CHECK: gpu.barrier
// CHECK-NEXT: gpu.return
// B256-LABEL: gpu.func @elementwise
// B256-SAME: known_block_size = array<i32: 256, 1, 1>
gpu.module @kernels {
  gpu.func @elementwise(%x: memref<8x32xf32>, %y: memref<8x32xf32>) kernel {
    linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                    iterator_types = ["parallel", "parallel"]}
        ins(%x : memref<8x32xf32>) outs(%y : memref<8x32xf32>) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %a : f32
      linalg.yield %s : f32
    }
    gpu.return
  }
}

// -----

// A row reduction: rows are shared by the threads, each thread reduces its
// row alone (the reduction loop stays inside).
// CHECK-LABEL: gpu.func @row_max
// CHECK: scf.for %[[ROW:.+]] = %{{.+}} to %c64 step %c128
// CHECK-NEXT: scf.for %[[COL:.+]] = %c0 to %c16 step %c1
// CHECK: memref.load %{{.+}}[%[[ROW]], %[[COL]]]
// CHECK: arith.maximumf
// CHECK: memref.store %{{.+}}, %{{.+}}[%[[ROW]]]
gpu.module @kernels {
  gpu.func @row_max(%x: memref<64x16xf32>, %y: memref<64xf32>) kernel {
    linalg.reduce ins(%x : memref<64x16xf32>) outs(%y : memref<64xf32>) dimensions = [1]
      (%a: f32, %b: f32) {
        %m = arith.maximumf %a, %b : f32
        linalg.yield %m : f32
      }
    gpu.return
  }
}

// -----

// A full reduction has no parallel loop: thread 0 does it.
// CHECK-LABEL: gpu.func @total
// CHECK: %[[TID:.+]] = gpu.thread_id x
// CHECK: %[[FIRST:.+]] = arith.cmpi eq, %[[TID]], %c0
// CHECK: gpu.barrier
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK-NEXT: scf.for
// CHECK: memref.store
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
gpu.module @kernels {
  gpu.func @total(%x: memref<64xf32>, %y: memref<f32>) kernel {
    linalg.reduce ins(%x : memref<64xf32>) outs(%y : memref<f32>) dimensions = [0]
      (%a: f32, %b: f32) {
        %s = arith.addf %a, %b : f32
        linalg.yield %s : f32
      }
    gpu.return
  }
}

// -----

// A serial loop of scalar stores (a counting sort's prefix sum) runs on
// thread 0; its result reaches every thread through a one-element buffer,
// read after a barrier. Loads alone stay in every thread.
// CHECK-LABEL: gpu.func @prefix_sum
// CHECK: %[[SLOT:.+]] = memref.alloc() : memref<1xi64>
// CHECK: gpu.barrier
// CHECK-NEXT: scf.if %{{.+}} {
// CHECK-NEXT: %[[SUM:.+]] = scf.for
// CHECK: memref.store
// CHECK: %[[WIDE:.+]] = arith.index_cast %[[SUM]] : index to i64
// CHECK-NEXT: memref.store %[[WIDE]], %[[SLOT]][%c0]
// CHECK: gpu.barrier
// CHECK-NEXT: %[[SHARED:.+]] = memref.load %[[SLOT]][%c0]
// CHECK-NEXT: %[[TOTAL:.+]] = arith.index_cast %[[SHARED]] : i64 to index
// CHECK: memref.store %{{.+}}, %{{.+}}[%[[TOTAL]]]
gpu.module @kernels {
  gpu.func @prefix_sum(%counts: memref<16xindex>, %offsets: memref<17xindex>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %total = scf.for %i = %c0 to %c16 step %c1 iter_args(%acc = %c0) -> index {
      memref.store %acc, %offsets[%i] : memref<17xindex>
      %n = memref.load %counts[%i] : memref<16xindex>
      %next = arith.addi %acc, %n : index
      scf.yield %next : index
    }
    memref.store %total, %offsets[%total] : memref<17xindex>
    gpu.return
  }
}

// -----

// Loops around linalg ops are run by every thread; the ops inside them are
// distributed.
// CHECK-LABEL: gpu.func @loop_of_ops
// CHECK: scf.for %{{.+}} = %c0 to %c4 step %c1 {
// CHECK: gpu.barrier
// CHECK: scf.for %{{.+}} = %{{.+}} to %c32 step %c128
// CHECK: gpu.barrier
gpu.module @kernels {
  gpu.func @loop_of_ops(%x: memref<32xf32>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %one = arith.constant 1.0 : f32
    scf.for %i = %c0 to %c4 step %c1 {
      linalg.generic {indexing_maps = [affine_map<(d) -> (d)>], iterator_types = ["parallel"]}
          outs(%x : memref<32xf32>) {
      ^bb0(%a: f32):
        %s = arith.addf %a, %one : f32
        linalg.yield %s : f32
      }
    }
    gpu.return
  }
}

// -----

gpu.module @kernels {
  gpu.func @memref_result(%x: memref<4xf32>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %one = arith.constant 1.0 : f32
    // expected-error @below {{writes memory and returns a 'memref<4xf32>', which one thread of a GPU block cannot share with the others}}
    %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%b = %x) -> memref<4xf32> {
      memref.store %one, %b[%i] : memref<4xf32>
      scf.yield %b : memref<4xf32>
    }
    gpu.return
  }
}
