// RUN: lcc-opt %s --lcc-fold-fill-copies | FileCheck %s

// A loop-carried zero block as one-shot bufferization leaves it: a buffer
// filled once and copied into the loop's buffer on every iteration. The
// copies become fills of their targets and the filled buffer goes.
// CHECK-LABEL: func.func @zero_per_step
// CHECK-NOT: memref.copy
// CHECK: %[[ACC:.+]] = memref.alloc() : memref<64x64xf32>
// CHECK-NEXT: linalg.fill ins(%{{.+}} : f32) outs(%[[ACC]] : memref<64x64xf32>)
// CHECK: scf.for
// CHECK-NEXT: linalg.fill ins(%{{.+}} : f32) outs(%[[ACC]] : memref<64x64xf32>)
// CHECK-NOT: memref.alloc
func.func @zero_per_step(%out: memref<64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zeros = memref.alloc() : memref<64x64xf32>
  linalg.fill ins(%zero : f32) outs(%zeros : memref<64x64xf32>)
  %acc = memref.alloc() : memref<64x64xf32>
  memref.copy %zeros, %acc : memref<64x64xf32> to memref<64x64xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    linalg.copy ins(%zeros : memref<64x64xf32>) outs(%acc : memref<64x64xf32>)
    linalg.copy ins(%acc : memref<64x64xf32>) outs(%out : memref<64x64xf32>)
  }
  return
}

// Left alone: a buffer written again after its fill, one read other than
// by a copy, and a copy the fill does not dominate.
// CHECK-LABEL: func.func @not_only_a_fill
// CHECK-COUNT-4: memref.copy
func.func @not_only_a_fill(%out: memref<8xf32>, %x: memref<8xf32>,
                           %flag: i1) {
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<8xf32>
  linalg.fill ins(%zero : f32) outs(%a : memref<8xf32>)
  memref.copy %x, %a : memref<8xf32> to memref<8xf32>
  memref.copy %a, %out : memref<8xf32> to memref<8xf32>
  %b = memref.alloc() : memref<8xf32>
  linalg.fill ins(%zero : f32) outs(%b : memref<8xf32>)
  %c0 = arith.constant 0 : index
  %v = memref.load %b[%c0] : memref<8xf32>
  memref.store %v, %out[%c0] : memref<8xf32>
  memref.copy %b, %out : memref<8xf32> to memref<8xf32>
  %c = memref.alloc() : memref<8xf32>
  scf.if %flag {
    linalg.fill ins(%zero : f32) outs(%c : memref<8xf32>)
  }
  memref.copy %c, %out : memref<8xf32> to memref<8xf32>
  return
}
