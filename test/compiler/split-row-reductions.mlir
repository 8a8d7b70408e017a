// RUN: lcc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(lcc-split-row-reductions))' | FileCheck %s
// RUN: not lcc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(lcc-split-row-reductions{lanes=1}))' 2>&1 | FileCheck %s --check-prefix=LANES
// LANES: error: lcc-split-row-reductions: expected lanes >= 2, got 1

// A row's sum of squares (a slice of a binding, strided rows): 16 lanes
// per row on the stack, from zero, the row read as [16, 16] with the lane
// innermost; then the lanes added to the output in order. A row-wise
// operand (the layer norm's mean) is read as it is.
// CHECK-LABEL: func @sum_of_squares
// CHECK: %[[PARTIAL:.+]] = memref.alloca() {alignment = 64 : i64} : memref<1x64x16xf32>
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[PARTIAL]] : memref<1x64x16xf32>)
// CHECK: %[[ROWS:.+]] = memref.expand_shape %arg0 {{\[}}[0], [1], [2, 3]] output_shape [1, 64, 16, 16]
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for
// CHECK: %[[STEP:.+]] = vector.transfer_read {{.+}} vector<1x1x1x16xf32>
// CHECK: %[[MEAN:.+]] = vector.transfer_read %{{.+}} permutation_map = {{.+}} vector<1x1x1x16xf32>
// CHECK: %[[ACC:.+]] = vector.transfer_read {{.+}} vector<1x1x16xf32>
// CHECK: %[[D:.+]] = arith.subf %[[STEP]], %[[MEAN]] : vector<1x1x1x16xf32>
// CHECK: %[[S:.+]] = arith.mulf %[[D]], %[[D]] : vector<1x1x1x16xf32>
// CHECK: %[[S3:.+]] = vector.shape_cast %[[S]]
// CHECK: %[[A:.+]] = arith.addf %[[ACC]], %[[S3]] : vector<1x1x16xf32>
// CHECK: vector.transfer_write %[[A]]
// CHECK: linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[PARTIAL]] : memref<1x64x16xf32>) outs(%arg2 : memref<1x64xf32, strided<[4096, 1], offset: ?>>)
// CHECK-NEXT: ^bb0(%[[LANE:.+]]: f32, %[[OUT:.+]]: f32):
// CHECK-NEXT: arith.addf %[[OUT]], %[[LANE]]
func.func @sum_of_squares(%x: memref<1x64x256xf32, strided<[1048576, 256, 1], offset: ?>>,
                          %mean: memref<1x64xf32>, %out: memref<1x64xf32, strided<[4096, 1], offset: ?>>) {
  linalg.generic {indexing_maps = [affine_map<(a, b, k) -> (a, b, k)>, affine_map<(a, b, k) -> (a, b)>, affine_map<(a, b, k) -> (a, b)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %mean : memref<1x64x256xf32, strided<[1048576, 256, 1], offset: ?>>, memref<1x64xf32>)
      outs(%out : memref<1x64xf32, strided<[4096, 1], offset: ?>>) {
  ^bb0(%in: f32, %m: f32, %o: f32):
    %d = arith.subf %in, %m : f32
    %s = arith.mulf %d, %d : f32
    %a = arith.addf %o, %s : f32
    linalg.yield %a : f32
  }
  return
}

// -----

// A row maximum starts its lanes from -inf and combines them by maximumf.
// CHECK-LABEL: func @row_max
// CHECK: %[[NEG:.+]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.fill ins(%[[NEG]] : f32)
// CHECK: arith.maximumf
// CHECK: linalg.generic
// CHECK: arith.maximumf
func.func @row_max(%x: memref<8x64xf32>, %out: memref<8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(a, k) -> (a, k)>, affine_map<(a, k) -> (a)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x64xf32>) outs(%out : memref<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.maximumf %o, %in : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// Left as they are: a row shorter than two lanes' worth or not a multiple
// of the lanes, a reduction that is not the innermost loop (a column sum),
// one that reads its loop index, one that does more with its output than
// combine it, and one whose row is not the input's last dimension.
// CHECK-LABEL: func @left_alone
// CHECK-NOT: memref.alloca
// CHECK-NOT: memref.expand_shape
func.func @left_alone(%short: memref<8x16xf32>, %odd: memref<8x40xf32>, %x: memref<8x64xf32>,
                      %t: memref<64x8xf32>, %out: memref<8xf32>, %col: memref<64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(a, k) -> (a, k)>, affine_map<(a, k) -> (a)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%short : memref<8x16xf32>) outs(%out : memref<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.addf %o, %in : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(a, k) -> (a, k)>, affine_map<(a, k) -> (a)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%odd : memref<8x40xf32>) outs(%out : memref<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.addf %o, %in : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(k, a) -> (k, a)>, affine_map<(k, a) -> (a)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<8x64xf32>) outs(%col : memref<64xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.addf %o, %in : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(a, k) -> (a, k)>, affine_map<(a, k) -> (a)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x64xf32>) outs(%out : memref<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %i = linalg.index 1 : index
    %c = arith.index_cast %i : index to i32
    %f = arith.sitofp %c : i32 to f32
    %p = arith.mulf %in, %f : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(a, k) -> (a, k)>, affine_map<(a, k) -> (a)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x64xf32>) outs(%out : memref<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.addf %o, %in : f32
    %t2 = arith.mulf %s, %o : f32
    linalg.yield %t2 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(a, k) -> (k, a)>, affine_map<(a, k) -> (a)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%t : memref<64x8xf32>) outs(%out : memref<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.addf %o, %in : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A reduction inside a kernel's loop (a flash attention tile's row sums)
// is left as it is: split, those measured slower.
// CHECK-LABEL: func @in_a_loop
// CHECK-NOT: memref.alloca
// CHECK: scf.for
// CHECK-NEXT: linalg.generic
func.func @in_a_loop(%x: memref<8x64xf32>, %out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    linalg.generic {indexing_maps = [affine_map<(a, k) -> (a, k)>, affine_map<(a, k) -> (a)>],
                    iterator_types = ["parallel", "reduction"]}
        ins(%x : memref<8x64xf32>) outs(%out : memref<8xf32>) {
    ^bb0(%in: f32, %o: f32):
      %s = arith.addf %o, %in : f32
      linalg.yield %s : f32
    }
  }
  return
}
