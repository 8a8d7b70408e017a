// RUN: lcc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(lcc-vectorize-contractions))' | FileCheck %s

// C[m, n] += A[m, k] * B[k, n]: 4 x 32 blocks of C, k innermost; the block
// is read before the k loop and written after it, and each step is one FMA
// per row: a broadcast element of A times a row of B.
// CHECK-LABEL: func @matmul
// CHECK: scf.for %[[M:.+]] = %c0 to %c8 step %c4
// CHECK: scf.for %[[N:.+]] = %c0 to %c64 step %c32
// CHECK: %[[CTILE:.+]] = memref.subview %arg2[%[[M]], %[[N]]] [4, 32]
// CHECK: %[[INIT:.+]] = vector.transfer_read %[[CTILE]]{{.*}} vector<4x32xf32>
// CHECK: %[[SUM:.+]] = scf.for %{{.+}} = %c0 to %c16 step %c1 iter_args(%[[ACC:.+]] = %[[INIT]]) -> (vector<4x32xf32>)
// CHECK: vector.transfer_read {{.*}} vector<1x32xf32>
// CHECK: vector.fma {{.*}} : vector<32xf32>
// CHECK: scf.yield
// CHECK: vector.transfer_write %[[SUM]], %[[CTILE]]
// CHECK-NOT: linalg.matmul
func.func @matmul(%a: memref<8x16xf32>, %b: memref<16x64xf32>, %c: memref<8x64xf32>) {
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x64xf32>) outs(%c : memref<8x64xf32>)
  return
}

// -----

// A generic q·kᵀ reads B as (n, k), with no row of B to load as a vector:
// B is transposed into a temporary (freed after) and the product becomes a
// register-tiled matmul. A C whose columns are not a multiple of 32 is left
// to the loop lowering.
// CHECK-LABEL: func @left_alone
// CHECK: %[[BT:.+]] = memref.alloc() {alignment = 64 : i64} : memref<16x64xf32>
// CHECK: linalg.transpose ins(%arg1 : memref<64x16xf32>) outs(%[[BT]] : memref<16x64xf32>) permutation = [1, 0]
// CHECK: scf.for
// CHECK: memref.subview %[[BT]]
// CHECK: vector.fma {{.*}} : vector<32xf32>
// CHECK: memref.dealloc %[[BT]]
// CHECK-NEXT: linalg.matmul ins(%arg0, %arg3
func.func @left_alone(%a: memref<8x16xf32>, %b: memref<64x16xf32>, %c: memref<8x64xf32>,
                      %d: memref<16x48xf32>, %e: memref<8x48xf32>) {
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x16xf32>, memref<64x16xf32>) outs(%c : memref<8x64xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %z, %p : f32
    linalg.yield %s : f32
  }
  linalg.matmul ins(%a, %d : memref<8x16xf32>, memref<16x48xf32>) outs(%e : memref<8x48xf32>)
  return
}
