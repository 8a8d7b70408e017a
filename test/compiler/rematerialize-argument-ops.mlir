// RUN: lcc-opt %s --split-input-file --lcc-rematerialize-argument-ops | FileCheck %s

// A bias broadcast that CSE made one for two contractions far apart is
// cloned before the second: each init lives next to its contraction.
// CHECK-LABEL: func @bias_broadcast
// CHECK: %[[B1:.+]] = linalg.generic {{.*}} ins(%arg2 :
// CHECK: linalg.matmul ins(%arg0, %arg1 : {{.*}} outs(%[[B1]] :
// CHECK: %[[B2:.+]] = linalg.generic {{.*}} ins(%arg2 :
// CHECK: linalg.matmul ins({{.*}}, %arg1 : {{.*}} outs(%[[B2]] :
#bias = affine_map<(d0, d1) -> (d1)>
#mat = affine_map<(d0, d1) -> (d0, d1)>
func.func @bias_broadcast(%x: tensor<8x4xf32>, %w: tensor<4x4xf32>, %b: tensor<4xf32>) -> tensor<8x4xf32> {
  %e = tensor.empty() : tensor<8x4xf32>
  %init = linalg.generic {indexing_maps = [#bias, #mat], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<8x4xf32>
  %y = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x4xf32>) outs(%init : tensor<8x4xf32>) -> tensor<8x4xf32>
  %z = linalg.matmul ins(%y, %w : tensor<8x4xf32>, tensor<4x4xf32>) outs(%init : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %z : tensor<8x4xf32>
}

// -----

// An op reading a computed value is left alone: a copy would keep that
// value alive instead. So is a contraction of parameters (not cheap).
// CHECK-LABEL: func @not_of_arguments
// CHECK: linalg.matmul ins(%arg1, %arg1
// CHECK-NOT: linalg.matmul ins(%arg1, %arg1
// CHECK: linalg.generic
// CHECK-NOT: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @not_of_arguments(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %e = tensor.empty() : tensor<4x4xf32>
  %ww = linalg.matmul ins(%w, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %y = linalg.matmul ins(%x, %ww : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %neg = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  } -> tensor<4x4xf32>
  %a = linalg.matmul ins(%neg, %ww : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %b = linalg.matmul ins(%neg, %x : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %a, %b, %ww : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}
