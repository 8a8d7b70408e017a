// RUN: lcc-opt %s --pass-pipeline='builtin.module(func.func(lcc-promote-temporaries-to-stack{max-bytes=40000}))' | FileCheck %s

// A dispatch's own temporaries go on the stack while they add up to at
// most max-bytes (here 40000: the 36864-byte block and the 384-byte row,
// not the second block); one inside a loop stays on the heap (an alloca
// there would grow the stack each iteration), and so does a returned or
// dynamically sized one.
// CHECK-LABEL: func @dispatch
// CHECK: memref.alloca() {alignment = 64 : i64} : memref<96x96xf32>
// CHECK: memref.alloca() {alignment = 64 : i64} : memref<96xf32>
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<96x96xf32>
// CHECK: scf.for
// CHECK: memref.alloc() : memref<96xf32>
func.func @dispatch(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %block = memref.alloc() {alignment = 64 : i64} : memref<96x96xf32>
  %row = memref.alloc() {alignment = 64 : i64} : memref<96xf32>
  %other = memref.alloc() {alignment = 64 : i64} : memref<96x96xf32>
  linalg.fill ins(%zero : f32) outs(%block : memref<96x96xf32>)
  linalg.fill ins(%zero : f32) outs(%row : memref<96xf32>)
  linalg.fill ins(%zero : f32) outs(%other : memref<96x96xf32>)
  scf.for %i = %c0 to %n step %c1 {
    %inner = memref.alloc() : memref<96xf32>
    linalg.fill ins(%zero : f32) outs(%inner : memref<96xf32>)
    memref.dealloc %inner : memref<96xf32>
  }
  return
}

// CHECK-LABEL: func @returned
// CHECK: memref.alloc() : memref<4xf32>
// CHECK: memref.alloc(%{{.+}}) : memref<?xf32>
func.func @returned(%n: index) -> memref<4xf32> {
  %r = memref.alloc() : memref<4xf32>
  %d = memref.alloc(%n) : memref<?xf32>
  memref.dealloc %d : memref<?xf32>
  return %r : memref<4xf32>
}
