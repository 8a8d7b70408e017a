// RUN: lcc-opt %s --split-input-file --lcc-fuse-elementwise | FileCheck %s

// An elementwise chain becomes one generic.
// CHECK-LABEL: func @chain
// CHECK: linalg.generic
// CHECK: math.exp
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
#id = affine_map<(d0) -> (d0)>
func.func @chain(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%0, %y : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %1 : tensor<8xf32>
}

// -----

// A producer is not fused into a contraction: it would run once per
// reduction step.
// CHECK-LABEL: func @into_contraction
// CHECK: %[[ACT:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK: math.erf
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]{{.*}} ins(%[[ACT]], %{{.+}} :
// CHECK-NOT: math.erf
#m = affine_map<(d0, d1) -> (d0, d1)>
func.func @into_contraction(%x: tensor<4x8xf32>, %w: tensor<8x2xf32>, %acc: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %0 = linalg.generic {indexing_maps = [#m, #m], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.erf %a : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(i, k, n) -> (i, k)>, affine_map<(i, k, n) -> (k, n)>, affine_map<(i, k, n) -> (i, n)>],
                       iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%0, %w : tensor<4x8xf32>, tensor<8x2xf32>) outs(%acc : tensor<4x2xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %o, %p : f32
    linalg.yield %r : f32
  } -> tensor<4x2xf32>
  return %1 : tensor<4x2xf32>
}

// -----

// A producer that stays for another user (here a reduction, as flash
// attention's scores feed the row maximum) is fused into its elementwise
// consumer only when cheap: a scale is recomputed there, a masked score is
// read back instead of computed twice.
// CHECK-LABEL: func @shared_producers
// CHECK: %[[MASKED:.+]] = linalg.generic
// CHECK: arith.remsi
// CHECK: linalg.generic {{.*}} ins(%[[MASKED]] :
// CHECK: linalg.generic {{.*}} ins(%[[MASKED]] :
// CHECK-NEXT: ^bb0
// CHECK-NEXT: math.exp
// CHECK: %[[SCALED:.+]] = linalg.generic {{.*}} ins(%[[T:[^ ]+]] :
// CHECK: arith.mulf
// CHECK: linalg.generic {{.*}} ins(%[[SCALED]] :
// CHECK: linalg.generic {{.*}} ins(%[[T]] :
// CHECK: arith.mulf
// CHECK: math.exp
#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @shared_producers(%s: tensor<4x8xf32>, %t: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %r = tensor.empty() : tensor<4xf32>
  %masked = linalg.generic {indexing_maps = [#rows, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %d = arith.subi %i, %j : index
    %c2 = arith.constant 2 : index
    %m = arith.remsi %d, %c2 : index
    %c0 = arith.constant 0 : index
    %hide = arith.cmpi ne, %m, %c0 : index
    %inf = arith.constant 0xFF800000 : f32
    %v = arith.select %hide, %inf, %a : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %max = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%masked : tensor<4x8xf32>) outs(%r : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.maximumf %a, %o : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %exp = linalg.generic {indexing_maps = [#rows, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%masked : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %scaled = linalg.generic {indexing_maps = [#rows, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = arith.constant 0.125 : f32
    %v = arith.mulf %a, %c : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %max2 = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%scaled : tensor<4x8xf32>) outs(%r : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.maximumf %a, %o : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %exp2 = linalg.generic {indexing_maps = [#rows, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%scaled : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  return %max, %exp, %max2, %exp2 : tensor<4xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4x8xf32>
}

// -----

// A producer that stays for another user is not fused into a consumer that
// would then read its inputs when nothing else reads them any more: their
// buffers would live on to the consumer (a residual sum of two layers'
// outputs recomputed in a train step's backward keeps every layer's
// outputs alive). The consumer reads the sum back.
// CHECK-LABEL: func @inputs_not_kept_alive
// CHECK: %[[A:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: %[[B:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: %[[SUM:.+]] = linalg.generic {{.*}} ins(%[[A]], %[[B]] :
// CHECK: iterator_types = ["reduction"]} ins(%[[SUM]] :
// CHECK: linalg.generic {{.*}} ins(%[[SUM]] :
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
#rows2 = affine_map<(d0, d1) -> (d0, d1)>
#row2 = affine_map<(d0, d1) -> (d0)>
#id1 = affine_map<(d0) -> (d0)>
#all = affine_map<(d0) -> ()>
func.func @inputs_not_kept_alive(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<f32>, tensor<4xf32>) {
  %r = tensor.empty() : tensor<4xf32>
  %z = tensor.empty() : tensor<f32>
  %a = linalg.generic {indexing_maps = [#rows2, #row2], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xf32>) outs(%r : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.addf %v, %o : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %b = linalg.generic {indexing_maps = [#rows2, #row2], iterator_types = ["parallel", "reduction"]}
      ins(%y : tensor<4x8xf32>) outs(%r : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.addf %v, %o : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%r : tensor<4xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %total = linalg.generic {indexing_maps = [#id1, #all], iterator_types = ["reduction"]}
      ins(%sum : tensor<4xf32>) outs(%z : tensor<f32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.addf %v, %o : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %late = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%sum : tensor<4xf32>) outs(%r : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.mulf %v, %v : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %total, %late : tensor<f32>, tensor<4xf32>
}
