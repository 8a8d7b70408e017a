// RUN: lcc-opt %s --split-input-file --lcc-stage-operand-tiles | FileCheck %s
// RUN: lcc-opt %s --split-input-file --lcc-stage-operand-tiles="max-bytes=1024" | FileCheck %s --check-prefix=SMALL

// q·kᵀ of one tile: both inputs are views of kernel arguments nothing
// writes, so each is copied, where its view is made, into a buffer whose
// rows are padded by one element; the contraction reads the copies.
// CHECK-LABEL: gpu.func @qk
// CHECK: %[[Q:.+]] = memref.subview %arg0
// CHECK-NEXT: %[[QBUF:.+]] = memref.alloc() : memref<64x17xf32>
// CHECK-NEXT: %[[QT:.+]] = memref.subview %[[QBUF]][0, 0] [64, 16] [1, 1] : memref<64x17xf32> to memref<64x16xf32, strided<[17, 1]>>
// CHECK-NEXT: linalg.copy ins(%[[Q]] : {{.*}}) outs(%[[QT]] : {{.*}})
// CHECK: %[[K:.+]] = memref.subview %arg1
// CHECK-NEXT: %[[KBUF:.+]] = memref.alloc() : memref<64x17xf32>
// CHECK-NEXT: %[[KT:.+]] = memref.subview %[[KBUF]]
// CHECK-NEXT: linalg.copy ins(%[[K]] : {{.*}}) outs(%[[KT]] : {{.*}})
// CHECK: linalg.generic {{.*}} ins(%[[QT]], %[[KT]] : {{.*}}) outs(%arg2 : memref<64x64xf32>)
// Over 1024 bytes, nothing is copied.
// SMALL-LABEL: gpu.func @qk
// SMALL-NOT: linalg.copy
gpu.module @kernels {
  gpu.func @qk(%q: memref<4x64x16xf32>, %k: memref<4x64x16xf32>, %s: memref<64x64xf32>) kernel {
    %bid = gpu.block_id x
    %qt = memref.subview %q[%bid, 0, 0] [1, 64, 16] [1, 1, 1] : memref<4x64x16xf32> to memref<64x16xf32, strided<[16, 1], offset: ?>>
    %kt = memref.subview %k[%bid, 0, 0] [1, 64, 16] [1, 1, 1] : memref<4x64x16xf32> to memref<64x16xf32, strided<[16, 1], offset: ?>>
    linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (j, k)>, affine_map<(i, j, k) -> (i, j)>],
                    iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%qt, %kt : memref<64x16xf32, strided<[16, 1], offset: ?>>, memref<64x16xf32, strided<[16, 1], offset: ?>>) outs(%s : memref<64x64xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32):
      %m = arith.mulf %a, %b : f32
      %r = arith.addf %c, %m : f32
      linalg.yield %r : f32
    }
    gpu.return
  }
}

// -----

// Elementwise ops read each element once: nothing to gain. An argument the
// kernel writes may change under a copy: not copied either.
// CHECK-LABEL: gpu.func @not_staged
// CHECK-NOT: linalg.copy
gpu.module @kernels {
  gpu.func @not_staged(%x: memref<64x16xf32>, %y: memref<64x16xf32>, %acc: memref<64xf32>) kernel {
    linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                    iterator_types = ["parallel", "parallel"]}
        ins(%x : memref<64x16xf32>) outs(%y : memref<64x16xf32>) {
    ^bb0(%a: f32, %b: f32):
      linalg.yield %a : f32
    }
    linalg.reduce ins(%y : memref<64x16xf32>) outs(%acc : memref<64xf32>) dimensions = [1]
      (%a: f32, %b: f32) {
        %s = arith.addf %a, %b : f32
        linalg.yield %s : f32
      }
    gpu.return
  }
}

// -----

// A paired bf16 product (A[m][kp][2] x B[kp][n][2]): a row of pairs is
// padded so that mma.sync's fragment loads (8 rows by 4 pairs, a pair one
// bank word) hit 32 banks: A's 32 pairs a row to 36 (word 36 g + t), B's
// 64 columns a row to 72 (word 72 t + g).
// CHECK-LABEL: gpu.func @paired
// CHECK-DAG: memref.alloc() : memref<64x36x2xbf16>
// CHECK-DAG: memref.alloc() : memref<32x72x2xbf16>
gpu.module @kernels {
  gpu.func @paired(%a: memref<64x32x2xbf16>, %b: memref<32x64x2xbf16>, %c: memref<64x64xf32>) kernel {
    linalg.generic {indexing_maps = [affine_map<(m, n, kp, j) -> (m, kp, j)>, affine_map<(m, n, kp, j) -> (kp, n, j)>, affine_map<(m, n, kp, j) -> (m, n)>],
                    iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
        ins(%a, %b : memref<64x32x2xbf16>, memref<32x64x2xbf16>) outs(%c : memref<64x64xf32>) {
    ^bb0(%x: bf16, %y: bf16, %acc: f32):
      %xf = arith.extf %x : bf16 to f32
      %yf = arith.extf %y : bf16 to f32
      %p = arith.mulf %xf, %yf : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    }
    gpu.return
  }
}
