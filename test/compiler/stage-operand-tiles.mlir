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
