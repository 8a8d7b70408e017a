// RUN: lcc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(lcc-vectorize-contractions))' | FileCheck %s
// RUN: lcc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(lcc-vectorize-contractions{vector-bits=512 vector-registers=32}))' | FileCheck %s --check-prefix=AVX512
// RUN: not lcc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(lcc-vectorize-contractions{vector-bits=512 vector-registers=32 tile-n=48}))' 2>&1 | FileCheck %s --check-prefix=TILE-N
// A row of B that is no power of two (3 vectors) is refused: it is no
// legal LLVM vector, and made dense attention 15x slower.
// TILE-N: error: lcc-vectorize-contractions: tile-n must be a power of two (a row of B is one LLVM vector), got 48

// C[m, n] += A[m, k] * B[k, n] on AVX2 (the default, 16 registers of 8
// lanes): 6 x 16 blocks of C (12 accumulators, 2 vectors of B, a broadcast
// element of A), k innermost; the block is read before the k loop and
// written after it, and each step is one FMA per row and vector. AVX-512
// (32 registers of 16 lanes) takes 8 x 32 blocks (a step reads A down a
// column: at most 16 accumulators), the last 4 rows a block of 4 x 32.
// CHECK-LABEL: func @matmul
// CHECK: scf.for %[[M:.+]] = %c0 to %c12 step %c6
// CHECK: scf.for %[[N:.+]] = %c0 to %c32 step %c16
// CHECK: %[[CTILE:.+]] = memref.subview %arg2[%[[M]], %[[N]]] [6, 16]
// CHECK: %[[INIT:.+]] = vector.transfer_read %[[CTILE]]{{.*}} vector<6x16xf32>
// CHECK: %[[SUM:.+]] = scf.for %{{.+}} = %c0 to %c16 step %c1 iter_args(%[[ACC:.+]] = %[[INIT]]) -> (vector<6x16xf32>)
// CHECK: vector.transfer_read {{.*}} vector<1x16xf32>
// CHECK: vector.fma {{.*}} : vector<16xf32>
// CHECK: scf.yield
// CHECK: vector.transfer_write %[[SUM]], %[[CTILE]]
// CHECK-NOT: linalg.matmul
// AVX512-LABEL: func @matmul
// AVX512: memref.subview %arg2[0, 0] [8, 32]
// AVX512: vector.fma {{.*}} : vector<32xf32>
// AVX512: memref.subview %arg2[8, 0] [4, 32]
// AVX512: vector.fma {{.*}} : vector<32xf32>
func.func @matmul(%a: memref<12x16xf32>, %b: memref<16x32xf32>, %c: memref<12x32xf32>) {
  linalg.matmul ins(%a, %b : memref<12x16xf32>, memref<16x32xf32>) outs(%c : memref<12x32xf32>)
  return
}

// -----

// Rows the block does not divide (64 = 10 x 6 + 4) are a contraction of
// their own, in one block of 4 rows.
// CHECK-LABEL: func @rows_left_over
// CHECK: memref.subview %arg2[0, 0] [60, 16]
// CHECK: scf.for %{{.+}} = %c0 to %c60 step %c6
// CHECK: vector<6x16xf32>
// CHECK: memref.subview %arg2[60, 0] [4, 16]
// CHECK: scf.for %{{.+}} = %c0 to %c4 step %c4
// CHECK: vector<4x16xf32>
// CHECK-NOT: linalg.matmul
func.func @rows_left_over(%a: memref<64x8xf32>, %b: memref<8x16xf32>, %c: memref<64x16xf32>) {
  linalg.matmul ins(%a, %b : memref<64x8xf32>, memref<8x16xf32>) outs(%c : memref<64x16xf32>)
  return
}

// -----

// A generic q·kᵀ reads B as (n, k), with no row of B to load as a vector:
// B is transposed into a temporary (on the stack: it is small) and the
// product becomes a register-tiled matmul. A C whose
// columns are not a multiple of the vector lanes is left to the loop
// lowering. The transpose goes in blocks of lanes x lanes: on AVX (the
// default, 8 lanes) eight row reads, 24 shuffles (unpacks, in-lane
// shuffles, 128-bit permutes) and eight row writes; on AVX-512 a 16 x 16
// vector read, MLIR's shuffle network and a vector write.
// CHECK-LABEL: func @left_alone
// CHECK: %[[BT:.+]] = memref.alloca() {alignment = 64 : i64} : memref<16x64xf32>
// CHECK: scf.for %[[ROW:.+]] = %c0 to %c64 step %c8
// CHECK: scf.for %[[COL:.+]] = %c0 to %c16 step %c8
// CHECK: vector.transfer_read %arg1[%[[ROW]], %[[COL]]]{{.*}} vector<8xf32>
// CHECK-COUNT-7: vector.transfer_read %arg1[%{{.+}}, %[[COL]]]{{.*}} vector<8xf32>
// CHECK: vector.shuffle {{.*}} [0, 8, 1, 9, 4, 12, 5, 13]
// CHECK: vector.shuffle {{.*}} [2, 10, 3, 11, 6, 14, 7, 15]
// CHECK-COUNT-6: vector.shuffle {{.*}} [{{[0-9, ]+}}]
// CHECK: vector.shuffle {{.*}} [0, 1, 8, 9, 4, 5, 12, 13]
// CHECK: vector.shuffle {{.*}} [2, 3, 10, 11, 6, 7, 14, 15]
// CHECK-COUNT-6: vector.shuffle {{.*}} [{{[0-9, ]+}}]
// CHECK: vector.shuffle {{.*}} [0, 1, 2, 3, 8, 9, 10, 11]
// CHECK: vector.shuffle {{.*}} [4, 5, 6, 7, 12, 13, 14, 15]
// CHECK-COUNT-6: vector.shuffle {{.*}} [{{[0-9, ]+}}]
// CHECK-NOT: vector.shuffle
// CHECK: vector.transfer_write %{{.+}}, %[[BT]][%[[COL]], %[[ROW]]]{{.*}} vector<8xf32>
// CHECK-COUNT-7: vector.transfer_write %{{.+}}, %[[BT]][%{{.+}}, %[[ROW]]]{{.*}} vector<8xf32>
// CHECK-NOT: linalg.transpose
// CHECK: memref.subview %[[BT]]
// CHECK: vector.fma {{.*}} : vector<16xf32>
// CHECK-NOT: memref.dealloc
// CHECK: linalg.matmul ins(%arg0, %arg3
// AVX512-LABEL: func @left_alone
// AVX512: %[[BT:.+]] = memref.alloca() {alignment = 64 : i64} : memref<16x64xf32>
// AVX512: scf.for %[[ROW:.+]] = %c0 to %c64 step %c16
// AVX512: scf.for %[[COL:.+]] = %c0 to %c16 step %c16
// AVX512: vector.transfer_read %arg1[%[[ROW]], %[[COL]]]{{.*}} vector<16x16xf32>
// AVX512-NOT: vector.transpose
// AVX512: vector.shuffle
// AVX512: vector.transfer_write %{{.+}}, %[[BT]][%[[COL]], %[[ROW]]]{{.*}} vector<16x16xf32>
// AVX512-NOT: linalg.transpose
// AVX512: memref.subview %[[BT]]
func.func @left_alone(%a: memref<6x16xf32>, %b: memref<64x16xf32>, %c: memref<6x64xf32>,
                      %d: memref<16x12xf32>, %e: memref<6x12xf32>) {
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<6x16xf32>, memref<64x16xf32>) outs(%c : memref<6x64xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %z, %p : f32
    linalg.yield %s : f32
  }
  linalg.matmul ins(%a, %d : memref<6x16xf32>, memref<16x12xf32>) outs(%e : memref<6x12xf32>)
  return
}

// -----

// A transposed B whose sizes the lanes do not divide (k = 12) is copied
// element by element.
// CHECK-LABEL: func @transposed_b_element_by_element
// CHECK: %[[BT:.+]] = memref.alloca() {alignment = 64 : i64} : memref<12x16xf32>
// CHECK-NOT: vector.shuffle
// CHECK: linalg.transpose ins(%arg1 : memref<16x12xf32>) outs(%[[BT]] : memref<12x16xf32>) permutation = [1, 0]
// CHECK: vector.fma {{.*}} : vector<16xf32>
func.func @transposed_b_element_by_element(%a: memref<6x12xf32>, %b: memref<16x12xf32>, %c: memref<6x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<6x12xf32>, memref<16x12xf32>) outs(%c : memref<6x16xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %z, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Inside a loop an alloca would grow the stack every iteration: the
// transposed B is one stack buffer made at the function's entry, which
// every iteration reuses.
// CHECK-LABEL: func @transposed_b_in_loop
// CHECK: %[[BT:.+]] = memref.alloca() {alignment = 64 : i64} : memref<16x64xf32>
// CHECK: scf.for
// CHECK-NOT: memref.alloc
// CHECK: vector.transfer_write %{{.+}}, %[[BT]]
// CHECK: vector.fma {{.*}} : vector<16xf32>
// CHECK-NOT: memref.dealloc
func.func @transposed_b_in_loop(%a: memref<6x16xf32>, %b: memref<64x16xf32>, %c: memref<6x64xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>],
                    iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%a, %b : memref<6x16xf32>, memref<64x16xf32>) outs(%c : memref<6x64xf32>) {
    ^bb0(%x: f32, %y: f32, %z: f32):
      %p = arith.mulf %x, %y : f32
      %s = arith.addf %z, %p : f32
      linalg.yield %s : f32
    }
  }
  return
}

// -----

// pᵀ·v reads A as (k, m): no copy, each step of k reads the block's 6
// elements of A from one row of it, each by a scalar load that LLVM folds
// into its broadcast (a vector<6> load would be split into 4 + 2 and the
// pair broadcast through shuffles).
// CHECK-LABEL: func @transposed_a
// CHECK-NOT: memref.alloc
// CHECK: scf.for %{{.+}} = %c0 to %c6 step %c6
// CHECK: vector<6x16xf32>
// CHECK: %[[AROW:.+]] = memref.subview %arg0[%{{.+}}, %{{.+}}] [1, 6]
// CHECK-NOT: vector.transfer_read %[[AROW]]
// CHECK: memref.load %[[AROW]][%c0, %c0]
// CHECK: vector.fma {{.*}} : vector<16xf32>
// CHECK: memref.load %[[AROW]][%c0, %c5]
// CHECK: vector.fma {{.*}} : vector<16xf32>
// CHECK-NOT: linalg.generic
func.func @transposed_a(%p: memref<32x6xf32>, %v: memref<32x16xf32>, %o: memref<6x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(m, k, n) -> (k, m)>, affine_map<(m, k, n) -> (k, n)>, affine_map<(m, k, n) -> (m, n)>],
                  iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%p, %v : memref<32x6xf32>, memref<32x16xf32>) outs(%o : memref<6x16xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %z, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A step of pᵀ·v reads its elements of A side by side: the widest row of B
// that still fits 6 rows. AVX2: 2 vectors (4 would leave 2 rows), 6 x 16;
// AVX-512: 4 vectors, 6 x 64, so V's rows are loaded whole.
// CHECK-LABEL: func @transposed_a_wide
// CHECK: scf.for %{{.+}} = %c0 to %c12 step %c6
// CHECK: vector<6x16xf32>
// AVX512-LABEL: func @transposed_a_wide
// AVX512: scf.for %{{.+}} = %c0 to %c12 step %c6
// AVX512: vector<6x64xf32>
// AVX512: vector.fma {{.*}} : vector<64xf32>
func.func @transposed_a_wide(%p: memref<32x12xf32>, %v: memref<32x64xf32>, %o: memref<12x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(m, k, n) -> (k, m)>, affine_map<(m, k, n) -> (k, n)>, affine_map<(m, k, n) -> (m, n)>],
                  iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%p, %v : memref<32x12xf32>, memref<32x64xf32>) outs(%o : memref<12x64xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %z, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// C just filled with zeros: the blocks start from zeros (no read of C) and
// the fill goes; the sum still runs through the k loop's accumulator. A C
// filled with another value keeps its fill and its reads.
// CHECK-LABEL: func @zero_filled
// CHECK: %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : vector<6x16xf32>
// CHECK-NOT: linalg.fill
// CHECK: scf.for %{{.+}} = %c0 to %c12 step %c6
// CHECK: scf.for
// CHECK-NOT: vector.transfer_read %{{.+}} vector<6x16xf32>
// CHECK: %[[SUM:.+]] = scf.for %{{.+}} iter_args(%[[ACC:.+]] = %[[ZERO]]) -> (vector<6x16xf32>)
// CHECK: vector.fma %{{.+}}, %{{.+}}, %{{.+}} : vector<16xf32>
// CHECK: scf.yield
// CHECK: vector.transfer_write %[[SUM]]
// CHECK-LABEL: func @one_filled
// CHECK: linalg.fill
// CHECK: vector.transfer_read %{{.+}} vector<6x16xf32>
func.func @zero_filled(%a: memref<12x16xf32>, %b: memref<16x32xf32>, %c: memref<12x32xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<12x32xf32>)
  linalg.matmul ins(%a, %b : memref<12x16xf32>, memref<16x32xf32>) outs(%c : memref<12x32xf32>)
  return
}
func.func @one_filled(%a: memref<12x16xf32>, %b: memref<16x32xf32>, %c: memref<12x32xf32>) {
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%c : memref<12x32xf32>)
  linalg.matmul ins(%a, %b : memref<12x16xf32>, memref<16x32xf32>) outs(%c : memref<12x32xf32>)
  return
}

// -----

// A projection of a batch of one, as the dispatches of attn.linear on
// [1, rows, d] and the lm_head are: four loops, the batch loop and m
// before k, n last. The batch runs once, so the product is the three-loop
// one on rank-reduced views of the operands, register-tiled as any other.
// A batch of two is a batched product and stays as it is.
// CHECK-LABEL: func @batch_of_one
// CHECK-DAG: %[[A:.+]] = memref.subview %arg0[0, 0, 0] [1, 12, 16] [1, 1, 1] : memref<1x12x16xf32, strided<[8192, 16, 1], offset: ?>> to memref<12x16xf32, strided<[16, 1], offset: ?>>
// CHECK-DAG: %[[C:.+]] = memref.subview %arg2[0, 0, 0] [1, 12, 32] [1, 1, 1] : memref<1x12x32xf32, strided<[16384, 32, 1], offset: ?>> to memref<12x32xf32, strided<[32, 1], offset: ?>>
// CHECK: scf.for %{{.+}} = %c0 to %c12 step %c6
// CHECK: vector.fma {{.*}} : vector<16xf32>
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "reduction", "parallel"]
// CHECK-SAME: ins(%arg3, %arg1 : memref<2x12x16xf32>, memref<16x32xf32>)
func.func @batch_of_one(%a: memref<1x12x16xf32, strided<[8192, 16, 1], offset: ?>>, %b: memref<16x32xf32>,
                        %c: memref<1x12x32xf32, strided<[16384, 32, 1], offset: ?>>,
                        %a2: memref<2x12x16xf32>, %c2: memref<2x12x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(b, m, k, n) -> (b, m, k)>, affine_map<(b, m, k, n) -> (k, n)>, affine_map<(b, m, k, n) -> (b, m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<1x12x16xf32, strided<[8192, 16, 1], offset: ?>>, memref<16x32xf32>)
      outs(%c : memref<1x12x32xf32, strided<[16384, 32, 1], offset: ?>>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %z, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(b, m, k, n) -> (b, m, k)>, affine_map<(b, m, k, n) -> (k, n)>, affine_map<(b, m, k, n) -> (b, m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%a2, %b : memref<2x12x16xf32>, memref<16x32xf32>) outs(%c2 : memref<2x12x32xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %z, %p : f32
    linalg.yield %s : f32
  }
  return
}
