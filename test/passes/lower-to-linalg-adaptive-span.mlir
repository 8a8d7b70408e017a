// RUN: lcc-opt %s --attn-lower-to-linalg="query-tile=16 key-tile=16" | FileCheck %s --implicit-check-not=32x64xf32

// Adaptive span in the flash form: 32 queries after a memory of 32 keys,
// max_span 24, ramp 8, tiles of 16. Per tile pair, in the loop over key
// tiles, the head's reach z_h * 24 + 8 is read from z, and a tile pair
// whose nearest pair (first query, last key: distance 32 + qs - ks - 15)
// is beyond it is never read. Visited blocks get -inf beyond the reach and
// their probabilities weighed by the ramp; the row sums take e (m + 1e-8).
// No [q_seq, k_seq] tensor.
// CHECK-LABEL: func @segment
// CHECK: %[[FLOOR:.+]] = arith.constant 9.99999993E-9 : f32
// CHECK: scf.forall
// Key tiles up to the one holding the last query's position (memory + 16).
// CHECK: arith.ceildivsi
// CHECK: scf.for
// CHECK: %[[NEAREST:.+]] = arith.subi %{{.+}}, %{{.+}} : index
// CHECK: %[[Z:.+]] = tensor.extract %arg3[
// CHECK: %[[SPAN:.+]] = arith.mulf %[[Z]], %cst{{.*}} : f32
// CHECK: %[[REACH:.+]] = arith.addf %[[SPAN]], %cst{{.*}} : f32
// CHECK: %[[LEFT:.+]] = arith.subf %[[REACH]], %{{.+}} : f32
// CHECK: %[[WITHIN:.+]] = arith.cmpf ogt, %[[LEFT]], %cst{{.*}} : f32
// CHECK: scf.if %[[WITHIN]]
// CHECK: linalg.generic {{.+}} outs(%{{.+}} : tensor<16x16xf32>)
// CHECK: arith.cmpf ogt
// CHECK: arith.select %{{.+}}, %{{.+}}, %cst
// CHECK: arith.divf
// CHECK: arith.maximumf
// CHECK: arith.minimumf
// CHECK: arith.addf %{{.+}}, %[[FLOOR]] : f32
func.func @segment(%q: tensor<1x2x32x8xf32>, %k: tensor<1x2x64x8xf32>,
                   %v: tensor<1x2x64x8xf32>, %z: tensor<2xf32>) -> tensor<1x2x32x8xf32> {
  %0 = attn.adaptive_span_attention %q, %k, %v, %z {max_span = 24 : i64, ramp = 8 : i64, causal = true}
      : (tensor<1x2x32x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>,
         tensor<2xf32>) -> tensor<1x2x32x8xf32>
  return %0 : tensor<1x2x32x8xf32>
}
