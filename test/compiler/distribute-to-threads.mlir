// RUN: lcc-opt %s --split-input-file --lcc-distribute-to-threads --canonicalize --verify-diagnostics | FileCheck %s
// RUN: lcc-opt %s --split-input-file --lcc-distribute-to-threads="block-size=256" --canonicalize --verify-diagnostics | FileCheck %s --check-prefix=B256
// RUN: lcc-opt %s --split-input-file --lcc-distribute-to-threads="block-size=40" --canonicalize --verify-diagnostics | FileCheck %s --check-prefix=B40
// RUN: not lcc-opt %s --split-input-file --lcc-distribute-to-threads="block-size=2048" 2>&1 | FileCheck %s --check-prefix=WIDEST
// WIDEST: error: lcc-distribute-to-threads: expected block-size <= 1024, got 2048

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

// A row reduction over a row's neighbouring elements, with fewer rows than
// half the threads: two lanes share each of the 64 rows, lane l folding
// elements l, l + 2, ...; one butterfly shuffle combines them and lane 0
// folds the result into the output. Threads beyond the rows take part in
// the shuffle only.
// CHECK-LABEL: gpu.func @row_max
// CHECK: %[[TID:.+]] = gpu.thread_id x
// CHECK: %[[ROW:.+]] = arith.divui %[[TID]], %c2
// CHECK: %[[LANE:.+]] = arith.remui %[[TID]], %c2
// CHECK: %[[ACTIVE:.+]] = arith.cmpi ult, %[[ROW]], %c64
// CHECK: %[[END:.+]] = arith.select %[[ACTIVE]], %c16, %c0
// CHECK: %[[R:.+]] = arith.minui %[[ROW]], %c63
// CHECK: %[[PART:.+]] = scf.for %[[COL:.+]] = %[[LANE]] to %[[END]] step %c2 iter_args
// CHECK: memref.load %{{.+}}[%[[R]], %[[COL]]]
// CHECK: arith.maximumf
// CHECK: %[[OTHER:.+]], %{{.+}} = gpu.shuffle xor %[[PART]], %c1_i32, %c32_i32 : f32
// CHECK-NEXT: %[[BOTH:.+]] = arith.maximumf %[[PART]], %[[OTHER]]
// CHECK-NOT: gpu.shuffle
// CHECK: scf.if
// CHECK-NEXT: %[[OLD:.+]] = memref.load %{{.+}}[%[[R]]]
// CHECK-NEXT: %[[NEW:.+]] = arith.maximumf %[[OLD]], %[[BOTH]]
// CHECK-NEXT: memref.store %[[NEW]], %{{.+}}[%[[R]]]
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

// A reduction written outside its parallel loop (the flash attention's
// maximum over a [keys, queries] tile of scores) is interchanged: the
// queries are shared by the threads, each folds the keys in the same order
// as before (it had run on thread 0 alone). Lanes do not share a query
// here: threads of neighbouring queries read neighbouring words. Each
// thread's maximum is carried in a register: loaded once before the keys,
// stored once after them (lcc::carryAccumulatorsInRegisters), not once a
// key.
// CHECK-LABEL: gpu.func @max_over_keys
// CHECK-NOT: scf.if
// CHECK: scf.for %[[Q:.+]] = %{{.+}} to %c64 step %c128
// CHECK: %[[INIT:.+]] = memref.load %{{.+}}[%[[Q]]] : memref<64xf32>
// CHECK-NEXT: %[[MAX:.+]] = scf.for %[[K:.+]] = %c0 to %c32 step %c1 iter_args(%[[ACC:.+]] = %[[INIT]]) -> (f32) {
// CHECK-NEXT: memref.load %{{.+}}[%[[K]], %[[Q]]]
// CHECK-NEXT: arith.maximumf %{{.+}}, %[[ACC]]
// CHECK-NEXT: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[MAX]], %{{.+}}[%[[Q]]]
gpu.module @kernels {
  gpu.func @max_over_keys(%s: memref<32x64xf32>, %m: memref<64xf32>) kernel {
    linalg.generic {indexing_maps = [affine_map<(k, q) -> (k, q)>, affine_map<(k, q) -> (q)>],
                    iterator_types = ["reduction", "parallel"]}
        ins(%s : memref<32x64xf32>) outs(%m : memref<64xf32>) {
    ^bb0(%a: f32, %b: f32):
      %x = arith.maximumf %a, %b : f32
      linalg.yield %x : f32
    }
    gpu.return
  }
}

// -----

// A product whose reduction sits between its parallel loops ([queries,
// keys, values]): both parallel loops are shared, 64 * 16 elements over the
// block (only the 64 rows had been), each a sum over the keys.
// CHECK-LABEL: gpu.func @scores_times_values
// CHECK: scf.for %[[L:.+]] = %{{.+}} to %c1024 step %c128
// CHECK: %[[QV:.+]]:2 = affine.delinearize_index %[[L]] into (64, 16)
// CHECK: scf.for %[[K:.+]] = %c0 to %c32 step %c1 iter_args
// CHECK: memref.load %{{.+}}[%[[QV]]#0, %[[K]]]
// CHECK: memref.load %{{.+}}[%[[K]], %[[QV]]#1]
gpu.module @kernels {
  gpu.func @scores_times_values(%p: memref<64x32xf32>, %v: memref<32x16xf32>, %o: memref<64x16xf32>) kernel {
    linalg.generic {indexing_maps = [affine_map<(q, k, d) -> (q, k)>, affine_map<(q, k, d) -> (k, d)>, affine_map<(q, k, d) -> (q, d)>],
                    iterator_types = ["parallel", "reduction", "parallel"]}
        ins(%p, %v : memref<64x32xf32>, memref<32x16xf32>) outs(%o : memref<64x16xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32):
      %x = arith.mulf %a, %b : f32
      %y = arith.addf %c, %x : f32
      linalg.yield %y : f32
    }
    gpu.return
  }
}

// -----

// A reduction to one value is shared by the block: thread t sums elements
// t, t + 128, ...; each warp combines its lanes' sums by butterfly
// shuffles; lane 0 of each of the 4 warps leaves its sum, and after a
// barrier thread 0 adds them to the output.
// CHECK-LABEL: gpu.func @total
// CHECK: %[[TID:.+]] = gpu.thread_id x
// CHECK: %[[FIRST:.+]] = arith.cmpi eq, %[[TID]], %c0
// CHECK: gpu.barrier
// CHECK: %[[PART:.+]] = scf.for %[[K:.+]] = %[[TID]] to %c64 step %c128 iter_args(%[[ACC:.+]] = %cst)
// CHECK: %[[X:.+]] = memref.load %{{.+}}[%[[K]]]
// CHECK: arith.addf %[[X]], %[[ACC]]
// CHECK: gpu.shuffle xor %[[PART]], %c16_i32, %c32_i32 : f32
// CHECK: gpu.shuffle xor %{{.+}}, %c8_i32, %c32_i32 : f32
// CHECK: gpu.shuffle xor %{{.+}}, %c4_i32, %c32_i32 : f32
// CHECK: gpu.shuffle xor %{{.+}}, %c2_i32, %c32_i32 : f32
// CHECK: gpu.shuffle xor %{{.+}}, %c1_i32, %c32_i32 : f32
// CHECK: scf.if
// CHECK-NEXT: memref.store %{{.+}}, %[[PARTS:.+]][
// CHECK: gpu.barrier
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK-COUNT-4: memref.load %[[PARTS]]
// CHECK: memref.load %{{.+}}[] : memref<f32>
// CHECK: memref.store
// CHECK: gpu.barrier
// A block that is not whole warps (40 threads) leaves it to thread 0.
// B40-LABEL: gpu.func @total
// B40: %[[TID:.+]] = gpu.thread_id x
// B40: %[[FIRST:.+]] = arith.cmpi eq, %[[TID]], %c0
// B40: gpu.barrier
// B40-NEXT: scf.if %[[FIRST]] {
// B40-NEXT: scf.for
// B40: memref.store
// B40-NEXT: }
// B40-NEXT: }
// B40-NEXT: gpu.barrier
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

// Over several reduction loops (a loss over [batch, positions]) the
// threads stride over all their elements together.
// CHECK-LABEL: gpu.func @total_2d
// CHECK: scf.for %[[L:.+]] = %{{.+}} to %c128 step %c128 iter_args
// CHECK-NEXT: %[[BP:.+]]:2 = affine.delinearize_index %[[L]] into (2, 64)
// CHECK-NEXT: memref.load %{{.+}}[%[[BP]]#0, %[[BP]]#1]
// CHECK-COUNT-5: gpu.shuffle xor
gpu.module @kernels {
  gpu.func @total_2d(%x: memref<2x64xf32>, %y: memref<f32>) kernel {
    linalg.generic {indexing_maps = [affine_map<(b, p) -> (b, p)>, affine_map<(b, p) -> ()>],
                    iterator_types = ["reduction", "reduction"]}
        ins(%x : memref<2x64xf32>) outs(%y : memref<f32>) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %b, %a : f32
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

// -----

// A column maximum whose output is a row of its own input (a buffer
// updated in place): the accumulator stays in memory, each step reading
// what the last wrote.
// CHECK-LABEL: gpu.func @aliased_accumulator
// CHECK: scf.for %{{.+}} = %c0 to %c64 step %c1 {
// CHECK: memref.store
gpu.module @kernels {
  gpu.func @aliased_accumulator(%s: memref<64x64xf32>) kernel {
    %row = memref.subview %s[0, 0] [1, 64] [1, 1] : memref<64x64xf32> to memref<64xf32, strided<[1]>>
    linalg.generic {indexing_maps = [affine_map<(k, i) -> (k, i)>, affine_map<(k, i) -> (i)>],
                    iterator_types = ["reduction", "parallel"]}
        ins(%s : memref<64x64xf32>) outs(%row : memref<64xf32, strided<[1]>>) {
    ^bb0(%x: f32, %acc: f32):
      %r = arith.maximumf %x, %acc : f32
      linalg.yield %r : f32
    }
    gpu.return
  }
}
