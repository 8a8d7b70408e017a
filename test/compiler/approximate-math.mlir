// RUN: lcc-opt %s --split-input-file --lcc-approximate-math | FileCheck %s

// The softmax's exp (marked lcc.shifted_exp, its argument at most 0): n
// rounded by the 1.5 * 2^23 constant, r = x - n ln2 in two steps, a
// degree-6 polynomial of r, n added to its exponent bits, and 0 below -87
// (unordered: NaN stays NaN).
// CHECK-LABEL: func @shifted
// CHECK-SAME: (%[[X:.*]]: f32)
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[LOW:.*]] = arith.constant -8.700000e+01 : f32
// CHECK-DAG: %[[ROUND:.*]] = arith.constant 0x4B400000 : f32
// CHECK: %[[T:.*]] = math.fma %[[X]], %{{.*}}, %[[ROUND]] : f32
// CHECK: %[[N:.*]] = arith.subf %[[T]], %[[ROUND]] : f32
// CHECK: %[[R1:.*]] = math.fma %[[N]], %{{.*}}, %[[X]] : f32
// CHECK: %[[R:.*]] = math.fma %[[N]], %{{.*}}, %[[R1]] : f32
// CHECK-COUNT-6: math.fma %{{.*}}, %[[R]], %{{.*}} : f32
// CHECK: %[[TBITS:.*]] = arith.bitcast %[[T]] : f32 to i32
// CHECK: %[[EXPONENT:.*]] = arith.shli %[[TBITS]], %{{.*}} : i32
// CHECK: %[[PBITS:.*]] = arith.bitcast %{{.*}} : f32 to i32
// CHECK: %[[SUM:.*]] = arith.addi %[[PBITS]], %[[EXPONENT]] : i32
// CHECK: %[[SCALED:.*]] = arith.bitcast %[[SUM]] : i32 to f32
// CHECK: %[[NORMAL:.*]] = arith.cmpf uge, %[[X]], %[[LOW]] : f32
// CHECK: %[[E:.*]] = arith.select %[[NORMAL]], %[[SCALED]], %[[ZERO]] : f32
// CHECK: return %[[E]]
// CHECK-NOT: math.exp
func.func @shifted(%x: f32) -> f32 {
  %e = math.exp %x {lcc.shifted_exp} : f32
  return %e : f32
}

// -----

// The same on vectors.
// CHECK-LABEL: func @shifted_vector
// CHECK: math.fma %{{.*}}, %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK: arith.shli %{{.*}}, %{{.*}} : vector<16xi32>
// CHECK: arith.cmpf uge
// CHECK: arith.select %{{.*}} : vector<16xi1>, vector<16xf32>
// CHECK-NOT: math.exp
func.func @shifted_vector(%x: vector<16xf32>) -> vector<16xf32> {
  %e = math.exp %x {lcc.shifted_exp} : vector<16xf32>
  return %e : vector<16xf32>
}

// -----

// Any other exp takes MLIR's full-range approximation: x clamped to
// [-87.8, 88.8], 2^n built from n + 127.
// CHECK-LABEL: func @plain
// CHECK-NOT: 0x4B400000
// CHECK: arith.constant 8.880000e+01 : f32
// CHECK: math.floor
// CHECK: arith.fptosi
// CHECK-NOT: math.exp
func.func @plain(%x: f32) -> f32 {
  %e = math.exp %x : f32
  return %e : f32
}

// -----

// erf (the exact GELU's) takes MLIR's rational approximation, as the GPU
// kernels' does: no libm call is left to keep the loop scalar.
// CHECK-LABEL: func @erf
// CHECK-NOT: math.erf
// CHECK: arith.divf %{{.*}} : vector<8xf32>
// CHECK-NOT: math.erf
// CHECK: return
func.func @erf(%x: vector<8xf32>) -> vector<8xf32> {
  %e = math.erf %x : vector<8xf32>
  return %e : vector<8xf32>
}
