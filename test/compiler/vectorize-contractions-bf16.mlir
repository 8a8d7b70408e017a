// RUN: lcc-opt %s --split-input-file --lcc-vectorize-contractions="vector-bits=512 vector-registers=32 bf16-dot=1" | FileCheck %s
// RUN: lcc-opt %s --split-input-file --lcc-vectorize-contractions="vector-bits=512 vector-registers=32" | FileCheck %s --check-prefix=LOOPS
// RUN: not lcc-opt %s --split-input-file --lcc-vectorize-contractions="vector-bits=256 vector-registers=16 bf16-dot=1" 2>&1 | FileCheck %s --check-prefix=BITS

// A paired bf16 contraction, C[28 x 32] += A[m, p, j] B[p, n, j] over 8
// pairs: blocks of 8 x 32 accumulators (two 16-lane vectors a row, at most
// 16 accumulators: a step reads A's pairs down a column) held in
// registers across the pairs; per pair two loads of B, a broadcast of A's
// pair per row and one dot product per accumulator; the last 4 rows a
// block of their own.
#a = affine_map<(m, n, p, j) -> (m, p, j)>
#at = affine_map<(m, n, p, j) -> (p, m, j)>
#b = affine_map<(m, n, p, j) -> (p, n, j)>
#c = affine_map<(m, n, p, j) -> (m, n)>
// CHECK-LABEL: func @rows_in_pairs
// CHECK-SAME: (%[[A:.+]]: memref<28x8x2xbf16>, %[[B:.+]]: memref<8x32x2xbf16>, %[[C:.+]]: memref<28x32xf32>)
// CHECK: %[[BROWS:.+]] = memref.collapse_shape %[[B]] {{\[\[}}0], [1, 2]] : memref<8x32x2xbf16> into memref<8x64xbf16>
// CHECK: scf.for %{{.+}} = %{{.+}} to %c24 step %c8
// CHECK: scf.for
// CHECK-COUNT-16: vector.load %[[C]]{{.+}} : memref<28x32xf32>, vector<16xf32>
// CHECK: scf.for {{.+}} iter_args
// CHECK-COUNT-2: vector.load %[[BROWS]]{{.+}} : memref<8x64xbf16>, vector<32xbf16>
// CHECK: vector.load %[[A]]{{.+}} : memref<28x8x2xbf16>, vector<2xbf16>
// CHECK: vector.bitcast %{{.+}} : vector<2xbf16> to vector<1xi32>
// CHECK: vector.broadcast %{{.+}} : i32 to vector<16xi32>
// CHECK: vector.bitcast %{{.+}} : vector<16xi32> to vector<32xbf16>
// CHECK-COUNT-2: x86vector.avx512.dot %{{.+}}, %{{.+}}, %{{.+}} : vector<32xbf16> -> vector<16xf32>
// CHECK-COUNT-14: x86vector.avx512.dot
// CHECK-NOT: x86vector.avx512.dot
// CHECK: scf.yield
// CHECK-COUNT-16: vector.store %{{.+}}, %[[C]]
// CHECK: scf.for %{{.+}} = %c24{{.*}} to %c28{{.*}} step %c4
// CHECK-COUNT-8: x86vector.avx512.dot
// CHECK-NOT: x86vector.avx512.dot
// CHECK-NOT: linalg.generic
// LOOPS-LABEL: func @rows_in_pairs
// LOOPS: linalg.generic
// LOOPS-NOT: x86vector
// BITS: error: lcc-vectorize-contractions: bf16-dot needs AVX-512's vector-bits=512, got 256
func.func @rows_in_pairs(%a: memref<28x8x2xbf16>, %b: memref<8x32x2xbf16>, %c: memref<28x32xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %b : memref<28x8x2xbf16>, memref<8x32x2xbf16>) outs(%c : memref<28x32xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %p = arith.mulf %xf, %yf fastmath<reassoc,contract> : f32
    %s = arith.addf %acc, %p fastmath<reassoc,contract> : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Aᵀ in pairs (A[p, m, j], as p·v reads the probabilities): the pair of a
// row is A[p, m, 0..1]. 16 columns: one vector a row, so 29 rows a block
// (32 registers less B's, A's and a spare); 40 rows: a block of 29 and a
// last block of 11.
#at = affine_map<(m, n, p, j) -> (p, m, j)>
#b = affine_map<(m, n, p, j) -> (p, n, j)>
#c = affine_map<(m, n, p, j) -> (m, n)>
// CHECK-LABEL: func @pairs_major
// CHECK-SAME: (%[[A:.+]]: memref<4x40x2xbf16>
// CHECK: scf.for %{{.+}} = %{{.+}} to %c29{{.*}} step %c29
// CHECK: scf.for {{.+}} iter_args
// CHECK: vector.load %[[A]][%{{.+}}, %{{.+}}, %{{.+}}] : memref<4x40x2xbf16>, vector<2xbf16>
// CHECK-COUNT-29: x86vector.avx512.dot
// CHECK-NOT: x86vector.avx512.dot
// CHECK: scf.for %{{.+}} = %c29{{.*}} to %c40{{.*}} step %c11
// CHECK-COUNT-11: x86vector.avx512.dot
// CHECK-NOT: x86vector.avx512.dot
// CHECK: return
func.func @pairs_major(%a: memref<4x40x2xbf16>, %b: memref<4x16x2xbf16>, %c: memref<40x16xf32>) {
  linalg.generic {indexing_maps = [#at, #b, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %b : memref<4x40x2xbf16>, memref<4x16x2xbf16>) outs(%c : memref<40x16xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %p = arith.mulf %xf, %yf : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Not a multiply-accumulate (a maximum): left alone.
#a = affine_map<(m, n, p, j) -> (m, p, j)>
#b = affine_map<(m, n, p, j) -> (p, n, j)>
#c = affine_map<(m, n, p, j) -> (m, n)>
// CHECK-LABEL: func @not_a_product
// CHECK: linalg.generic
// CHECK-NOT: x86vector
func.func @not_a_product(%a: memref<14x8x2xbf16>, %b: memref<8x32x2xbf16>, %c: memref<14x32xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %b : memref<14x8x2xbf16>, memref<8x32x2xbf16>) outs(%c : memref<14x32xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %p = arith.maximumf %xf, %yf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
