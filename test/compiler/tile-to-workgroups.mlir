// RUN: lcc-opt %s --split-input-file --lcc-tile-to-workgroups="workgroups=4" | FileCheck %s
// RUN: lcc-opt %s --split-input-file --lcc-tile-to-workgroups="workgroups=4" --mlir-print-debuginfo > %t.reused
// RUN: lcc-opt %s --split-input-file --lcc-tile-to-workgroups="workgroups=4 reuse-tiles=false" --mlir-print-debuginfo > %t.fresh
// RUN: diff %t.reused %t.fresh
// RUN: not lcc-opt %s --split-input-file --lcc-tile-to-workgroups="workgroups=0" 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: error: lcc-tile-to-workgroups: expected workgroups >= 1, got 0

// A contraction is split over its outer parallel loop into 4 workgroups of
// 64 rows. Its destination's fill, used by nothing else, is computed in
// each workgroup on the workgroup's tile (upstream tile-and-fuse does not
// fuse through a forall's outputs): the loop starts from the fill's own
// destination, and the fill is no dispatch of its own.
// CHECK-LABEL: func @matmul
// CHECK-SAME: (%[[A:.+]]: tensor<256x32xf32>, %[[B:.+]]: tensor<32x8xf32>)
// CHECK: %[[E:.+]] = tensor.empty() : tensor<256x8xf32>
// CHECK-NOT: linalg.fill
// CHECK: %[[R:.+]] = scf.forall (%[[I:.+]]) = (0) to (256) step (64) shared_outs(%[[OUT:.+]] = %[[E]]) -> (tensor<256x8xf32>)
// CHECK: tensor.extract_slice %[[A]][%[[I]], 0] [64, 32] [1, 1]
// CHECK: %[[TILE:.+]] = tensor.extract_slice %[[OUT]][%[[I]], 0] [64, 8] [1, 1]
// CHECK: %[[FILLED:.+]] = linalg.fill {{.*}} outs(%[[TILE]] : tensor<64x8xf32>)
// CHECK: linalg.generic {{.*}} outs(%[[FILLED]] : tensor<64x8xf32>)
// CHECK: tensor.parallel_insert_slice %{{.+}} into %[[OUT]][%[[I]], 0] [64, 8] [1, 1]
// CHECK: return %[[R]]
func.func @matmul(%a: tensor<256x32xf32>, %b: tensor<32x8xf32>) -> tensor<256x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<256x8xf32>) -> tensor<256x8xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(i, k, n) -> (i, k)>, affine_map<(i, k, n) -> (k, n)>, affine_map<(i, k, n) -> (i, n)>],
                       iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : tensor<256x32xf32>, tensor<32x8xf32>) outs(%init : tensor<256x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %o, %p : f32
    linalg.yield %r : f32
  } -> tensor<256x8xf32>
  return %0 : tensor<256x8xf32>
}

// -----

// A contraction's tiles keep 64 rows and 64 columns where the loops have
// them: 128 rows make 2 tiles, and the columns are split for the other 2
// (the kernel reads all of B's columns once per workgroup: 32-row tiles
// would read it twice as often for the same products). Loops of fewer
// than 64 iterations (a projection's heads) are split as any other.
// CHECK-LABEL: func @contraction_tiles
// CHECK: scf.forall (%{{.+}}, %{{.+}}) = (0, 0) to (128, 256) step (64, 128)
// CHECK: linalg.generic {{.*}} outs(%{{.+}} : tensor<64x128xf32>)
// CHECK: scf.forall (%{{.+}}) = (0) to (16) step (4)
// CHECK: linalg.generic {{.*}} outs(%{{.+}} : tensor<4x8xf32>)
func.func @contraction_tiles(%a: tensor<128x32xf32>, %b: tensor<32x256xf32>,
                             %init: tensor<128x256xf32>, %c: tensor<16x32xf32>,
                             %d: tensor<32x8xf32>, %small: tensor<16x8xf32>)
    -> (tensor<128x256xf32>, tensor<16x8xf32>) {
  %0 = linalg.generic {indexing_maps = [affine_map<(i, k, n) -> (i, k)>, affine_map<(i, k, n) -> (k, n)>, affine_map<(i, k, n) -> (i, n)>],
                       iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : tensor<128x32xf32>, tensor<32x256xf32>) outs(%init : tensor<128x256xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %o, %p : f32
    linalg.yield %r : f32
  } -> tensor<128x256xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(i, k, n) -> (i, k)>, affine_map<(i, k, n) -> (k, n)>, affine_map<(i, k, n) -> (i, n)>],
                       iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%c, %d : tensor<16x32xf32>, tensor<32x8xf32>) outs(%small : tensor<16x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %o, %p : f32
    linalg.yield %r : f32
  } -> tensor<16x8xf32>
  return %0, %1 : tensor<128x256xf32>, tensor<16x8xf32>
}

// -----

// A top-level slice becomes a tiled copy, so it runs in a dispatch.
// CHECK-LABEL: func @slice
// CHECK: %[[VIEW:.+]] = tensor.extract_slice %{{.+}}[0, 0, 0] [2, 5, 4] [1, 1, 1]
// CHECK: scf.forall (%{{.+}}, %{{.+}}) = (0, 0) to (2, 5) step (1, 3)
// CHECK: tensor.extract_slice %[[VIEW]]
// CHECK: linalg.copy
func.func @slice(%x: tensor<2x8x4xf32>) -> tensor<2x5x4xf32> {
  %0 = tensor.extract_slice %x[0, 0, 0] [2, 5, 4] [1, 1, 1] : tensor<2x8x4xf32> to tensor<2x5x4xf32>
  return %0 : tensor<2x5x4xf32>
}

// -----

// An existing forall (the flash form of attention) is left as it is.
// CHECK-LABEL: func @forall_kept
// CHECK: scf.forall (%{{.+}}) in (3)
// CHECK-NOT: scf.forall (
func.func @forall_kept(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %e = tensor.empty() : tensor<3x4xf32>
  %0 = scf.forall (%i) in (3) shared_outs(%o = %e) -> (tensor<3x4xf32>) {
    %s = tensor.extract_slice %x[%i, 0] [1, 4] [1, 1] : tensor<3x4xf32> to tensor<1x4xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %s into %o[%i, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<3x4xf32>
    }
  }
  return %0 : tensor<3x4xf32>
}

// -----

// A band read along diagonals (relative attention's position term, q - k
// + 3) stays whole: tiling would offset the band's slice by the map's
// constant and the tiled op would add it again. The elementwise op after
// it is tiled, without fusing it in.
// CHECK-LABEL: func @diagonal_band
// CHECK: %[[ADD:.+]] = linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<8x4xf32>, tensor<11x8xf32>) outs(%{{.+}} : tensor<8x4xf32>)
// CHECK: scf.forall
// CHECK: tensor.extract_slice %[[ADD]]
// CHECK-NOT: tensor<11x8xf32>
func.func @diagonal_band(%dots: tensor<8x4xf32>, %band: tensor<11x8xf32>) -> tensor<8x4xf32> {
  %e = tensor.empty() : tensor<8x4xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(q, k) -> (q, k)>, affine_map<(q, k) -> (q - k + 3, q)>, affine_map<(q, k) -> (q, k)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%dots, %band : tensor<8x4xf32>, tensor<11x8xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  %e2 = tensor.empty() : tensor<8x4xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(q, k) -> (q, k)>, affine_map<(q, k) -> (q, k)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%0 : tensor<8x4xf32>) outs(%e2 : tensor<8x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %t = math.exp %x : f32
    linalg.yield %t : f32
  } -> tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}

// -----

// A fill that another op also reads stays a dispatch of its own: computed
// in the product's workgroups, it would be computed twice.
// CHECK-LABEL: func @shared_fill
// CHECK: %[[FILL:.+]] = scf.forall
// CHECK: linalg.fill
// CHECK: scf.forall {{.+}} shared_outs(%{{.+}} = %[[FILL]])
func.func @shared_fill(%a: tensor<256x32xf32>, %b: tensor<32x8xf32>) -> (tensor<256x8xf32>, tensor<256x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<256x8xf32>) -> tensor<256x8xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(i, k, n) -> (i, k)>, affine_map<(i, k, n) -> (k, n)>, affine_map<(i, k, n) -> (i, n)>],
                       iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : tensor<256x32xf32>, tensor<32x8xf32>) outs(%init : tensor<256x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %o, %p : f32
    linalg.yield %r : f32
  } -> tensor<256x8xf32>
  return %0, %init : tensor<256x8xf32>, tensor<256x8xf32>
}

// -----

// Two layers' copies of one cluster (a product and the fill it starts
// from) and of an exponential: the last layer's are tiled, the first's get
// clones of those foralls on their own operands, each op keeping its own
// location (the dispatch's name and source position come from them). The
// RUN lines at the top compare every function of this file with
// reuse-tiles=false.
// RUN: lcc-opt %s --split-input-file --lcc-tile-to-workgroups="workgroups=4" --mlir-print-debuginfo --mlir-print-local-scope | FileCheck %s --check-prefix=LAYERS
// LAYERS-LABEL: func @two_layers
// LAYERS: scf.forall
// LAYERS: math.exp {{.*}}loc("layer0.exp")
// LAYERS: scf.forall
// LAYERS: linalg.fill {{.*}}loc("layer0.fill")
// LAYERS: arith.mulf {{.*}}loc("layer0.product")
// LAYERS: scf.forall
// LAYERS: math.exp {{.*}}loc("layer1.exp")
// LAYERS: scf.forall
// LAYERS: linalg.fill {{.*}}loc("layer1.fill")
// LAYERS: arith.mulf {{.*}}loc("layer1.product")
// LAYERS-NOT: scf.forall (
// LAYERS: return
func.func @two_layers(%x: tensor<256x32xf32>, %w0: tensor<32x32xf32>, %w1: tensor<32x32xf32>) -> tensor<256x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<256x32xf32>
  %a0 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<256x32xf32>) outs(%e0 : tensor<256x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.exp %v : f32 loc("layer0.exp")
    linalg.yield %t : f32
  } -> tensor<256x32xf32> loc("layer0.exp")
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<256x32xf32>) -> tensor<256x32xf32> loc("layer0.fill")
  %y0 = linalg.generic {indexing_maps = [affine_map<(i, k, n) -> (i, k)>, affine_map<(i, k, n) -> (k, n)>, affine_map<(i, k, n) -> (i, n)>],
                        iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a0, %w0 : tensor<256x32xf32>, tensor<32x32xf32>) outs(%f0 : tensor<256x32xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32 loc("layer0.product")
    %r = arith.addf %o, %m : f32 loc("layer0.product")
    linalg.yield %r : f32
  } -> tensor<256x32xf32> loc("layer0.product")
  %e1 = tensor.empty() : tensor<256x32xf32>
  %a1 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%y0 : tensor<256x32xf32>) outs(%e1 : tensor<256x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.exp %v : f32 loc("layer1.exp")
    linalg.yield %t : f32
  } -> tensor<256x32xf32> loc("layer1.exp")
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<256x32xf32>) -> tensor<256x32xf32> loc("layer1.fill")
  %y1 = linalg.generic {indexing_maps = [affine_map<(i, k, n) -> (i, k)>, affine_map<(i, k, n) -> (k, n)>, affine_map<(i, k, n) -> (i, n)>],
                        iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a1, %w1 : tensor<256x32xf32>, tensor<32x32xf32>) outs(%f1 : tensor<256x32xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32 loc("layer1.product")
    %r = arith.addf %o, %m : f32 loc("layer1.product")
    linalg.yield %r : f32
  } -> tensor<256x32xf32> loc("layer1.product")
  return %y1 : tensor<256x32xf32>
}

// -----

// A body may read values from outside the cluster: a scalar constant the
// canonicalizer hoisted (a GELU's, a scale's) or a tensor a gather extracts
// from. The first layer's clusters are clones of the second's, each reading
// its own layer's values (here a different scale and table); the RUN lines
// at the top compare this with reuse-tiles=false.
// CHECK-LABEL: func @captured_values
// CHECK-SAME: (%[[X:.+]]: tensor<256x32xf32>, %[[T0:.+]]: tensor<64xf32>, %[[T1:.+]]: tensor<64xf32>)
// CHECK-DAG: %[[HALF:.+]] = arith.constant 5.000000e-01 : f32
// CHECK-DAG: %[[THIRD:.+]] = arith.constant 2.500000e-01 : f32
// CHECK: scf.forall
// CHECK: arith.mulf %{{.+}}, %[[HALF]] : f32
// CHECK: scf.forall
// CHECK: tensor.extract %[[T0]]
// CHECK: scf.forall
// CHECK: arith.mulf %{{.+}}, %[[THIRD]] : f32
// CHECK: scf.forall
// CHECK: tensor.extract %[[T1]]
// CHECK: return
func.func @captured_values(%x: tensor<256x32xf32>, %t0: tensor<64xf32>, %t1: tensor<64xf32>) -> (tensor<256x32xf32>, tensor<256x32xf32>) {
  %half = arith.constant 0.5 : f32
  %third = arith.constant 0.25 : f32
  %e = tensor.empty() : tensor<256x32xf32>
  %s0 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<256x32xf32>) outs(%e : tensor<256x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = arith.mulf %v, %half : f32
    linalg.yield %t : f32
  } -> tensor<256x32xf32>
  %g0 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%s0 : tensor<256x32xf32>) outs(%e : tensor<256x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %i = linalg.index 0 : index
    %c64 = arith.constant 64 : index
    %k = arith.remui %i, %c64 : index
    %w = tensor.extract %t0[%k] : tensor<64xf32>
    %t = arith.addf %v, %w : f32
    linalg.yield %t : f32
  } -> tensor<256x32xf32>
  %s1 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%g0 : tensor<256x32xf32>) outs(%e : tensor<256x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = arith.mulf %v, %third : f32
    linalg.yield %t : f32
  } -> tensor<256x32xf32>
  %g1 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%s1 : tensor<256x32xf32>) outs(%e : tensor<256x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %i = linalg.index 0 : index
    %c64 = arith.constant 64 : index
    %k = arith.remui %i, %c64 : index
    %w = tensor.extract %t1[%k] : tensor<64xf32>
    %t = arith.addf %v, %w : f32
    linalg.yield %t : f32
  } -> tensor<256x32xf32>
  return %g0, %g1 : tensor<256x32xf32>, tensor<256x32xf32>
}

// -----

// Two layers' clamps read their bounds from outside: the second clamps to
// [0, 4] and gathers at row 0, the first clamps to [4, 4] and gathers at
// row 0 too. Matched read by read, 0 -> 4 looks like one substitution, but
// the first layer reads the same 0 as its gather's index: a clone reading
// 4 there would gather the wrong row (a fuzzed Transformer-XL model did).
// Such a cluster is tiled anew; the RUN lines at the top compare this with
// reuse-tiles=false.
// CHECK-LABEL: func @shared_capture
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C4:.+]] = arith.constant 4 : index
// CHECK: scf.forall
// CHECK: arith.maxsi %{{.+}}, %[[C4]] : index
// CHECK: tensor.extract %{{.+}}[%[[C0]]
// CHECK: scf.forall
// CHECK: arith.maxsi %{{.+}}, %[[C0]] : index
// CHECK: tensor.extract %{{.+}}[%[[C0]]
// CHECK: return
func.func @shared_capture(%t: tensor<2x8xf32>) -> (tensor<256x8xf32>, tensor<256x8xf32>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %e = tensor.empty() : tensor<256x8xf32>
  %g0 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>],
                        iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<256x8xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 1 : index
    %lo = arith.maxsi %i, %c4 : index
    %k = arith.minsi %lo, %c4 : index
    %w = tensor.extract %t[%c0, %k] : tensor<2x8xf32>
    linalg.yield %w : f32
  } -> tensor<256x8xf32>
  %g1 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>],
                        iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<256x8xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 1 : index
    %lo = arith.maxsi %i, %c0 : index
    %k = arith.minsi %lo, %c4 : index
    %w = tensor.extract %t[%c0, %k] : tensor<2x8xf32>
    linalg.yield %w : f32
  } -> tensor<256x8xf32>
  return %g0, %g1 : tensor<256x8xf32>, tensor<256x8xf32>
}
