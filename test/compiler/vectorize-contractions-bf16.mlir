// RUN: lcc-opt %s --split-input-file --lcc-vectorize-contractions="vector-bits=512 vector-registers=32 bf16-dot=1" | FileCheck %s
// RUN: lcc-opt %s --split-input-file --lcc-vectorize-contractions="vector-bits=512 vector-registers=32" | FileCheck %s --check-prefix=LOOPS
// RUN: not lcc-opt %s --split-input-file --lcc-vectorize-contractions="vector-bits=256 vector-registers=16 bf16-dot=1" 2>&1 | FileCheck %s --check-prefix=BITS
// RUN: lcc-opt %s --split-input-file --lcc-vectorize-contractions="vector-bits=512 vector-registers=32 bf16-dot=1 amx-tiles=1" | FileCheck %s --check-prefix=AMX
// RUN: not lcc-opt %s --split-input-file --lcc-vectorize-contractions="vector-bits=512 vector-registers=32 amx-tiles=1" 2>&1 | FileCheck %s --check-prefix=AMX-ALONE
// AMX-ALONE: error: lcc-vectorize-contractions: amx-tiles needs bf16-dot

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

// Aᵀ in pairs (A[p, m, j]): no product reads a row's pair of A from there
// (flash attention's second product is vᵀ·pᵀ), so it is left to the loops.
#at = affine_map<(m, n, p, j) -> (p, m, j)>
#b = affine_map<(m, n, p, j) -> (p, n, j)>
#c = affine_map<(m, n, p, j) -> (m, n)>
// CHECK-LABEL: func @pairs_major
// CHECK: linalg.generic
// CHECK-NOT: x86vector
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

// -----

// With amx-tiles, C[64 x 48] += A[64, 32 pairs] B[32 pairs, 48] in AMX
// tiles: rows in blocks of two tiles (64 = 2 x 32), columns one tile at a
// time (48 is no multiple of 32); per block two tiles of C loaded, two
// steps of 16 pairs unrolled (two tiles of A, one of B, two products
// each), two stored. A and B are read as rows of k and of pairs. The
// rows_in_pairs contraction above (28 rows: no whole tile) still takes dot
// products.
#a = affine_map<(m, n, p, j) -> (m, p, j)>
#b = affine_map<(m, n, p, j) -> (p, n, j)>
#c = affine_map<(m, n, p, j) -> (m, n)>
// AMX-LABEL: func @rows_in_pairs
// AMX: x86vector.avx512.dot
// AMX-NOT: amx.
// AMX-LABEL: func @matrix_tiles
// AMX-SAME: (%[[A:.+]]: memref<64x32x2xbf16>, %[[B:.+]]: memref<32x48x2xbf16>, %[[C:.+]]: memref<64x48xf32>)
// AMX-DAG: %[[AROWS:.+]] = memref.collapse_shape %[[A]] {{\[\[}}0], [1, 2]] : memref<64x32x2xbf16> into memref<64x64xbf16>
// AMX-DAG: %[[BROWS:.+]] = memref.collapse_shape %[[B]] {{\[\[}}0], [1, 2]] : memref<32x48x2xbf16> into memref<32x96xbf16>
// AMX: scf.for %{{.+}} = %{{.+}} to %c64{{.*}} step %c32
// AMX: scf.for %{{.+}} = %{{.+}} to %c48{{.*}} step %c16
// AMX-COUNT-2: amx.tile_load %[[C]]{{.+}} : memref<64x48xf32> into !amx.tile<16x16xf32>
// AMX-COUNT-2: amx.tile_load %[[AROWS]]{{.+}} into !amx.tile<16x32xbf16>
// AMX: amx.tile_load %[[BROWS]]{{.+}} into !amx.tile<16x32xbf16>
// AMX-COUNT-2: amx.tile_mulf
// AMX-COUNT-2: amx.tile_load %[[AROWS]]
// AMX: amx.tile_load %[[BROWS]]
// AMX-COUNT-2: amx.tile_mulf
// AMX-NOT: amx.tile_mulf
// AMX-COUNT-2: amx.tile_store %[[C]]
// AMX-NOT: linalg.generic
// AMX: return
// CHECK-LABEL: func @matrix_tiles
// CHECK: x86vector.avx512.dot
// CHECK-NOT: amx.
func.func @matrix_tiles(%a: memref<64x32x2xbf16>, %b: memref<32x48x2xbf16>, %c: memref<64x48xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %b : memref<64x32x2xbf16>, memref<32x48x2xbf16>) outs(%c : memref<64x48xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %p = arith.mulf %xf, %yf : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  }
  return
}

