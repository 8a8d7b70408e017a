// Routed attention's centroids are trained by the Routing Transformer's
// moving average, not by the optimizer: after one step of lcc-train, the
// centroids are decay * before + (1 - decay) * the normalised sum of the
// unit queries and keys of the batch nearest to each, as the reference
// computes it (test/reference/RoutedAttention.cpp), while the head weight
// moved by Adam. The module's `centroids` function reads them back.
// RUN: lcc %s --train --centroid-decay=0.75 -o %t.lcm
// RUN: rm -rf %t.d && mkdir %t.d
// RUN: lcc-testdata --output=%t.d/q.npy --shape=2,2,32,4 --seed=21
// RUN: lcc-testdata --output=%t.d/k.npy --shape=2,2,32,4 --seed=22
// RUN: lcc-testdata --output=%t.d/v.npy --shape=2,2,32,4 --seed=23
// RUN: lcc-testdata --output=%t.d/labels.npy --shape=2,2,32 --dtype=i32 --uniform=0,5 --seed=24
// RUN: lcc-run %t.lcm --init-params=%t.d/before.safetensors --seed=4
// RUN: lcc-train %t.lcm --data=%t.d/q.npy,%t.d/k.npy,%t.d/v.npy,%t.d/labels.npy --params=%t.d/before.safetensors --steps=1 --checkpoint=%t.d/after.safetensors
// RUN: mkdir %t.d/before %t.d/after
// RUN: lcc-run %t.lcm --function=centroids --params=%t.d/before.safetensors --output-dir=%t.d/before
// RUN: lcc-run %t.lcm --function=centroids --params=%t.d/after.safetensors --output-dir=%t.d/after
// RUN: lcc-reference --op=routed_centroid_update --input=%t.d/before/result0.npy --input=%t.d/q.npy --input=%t.d/k.npy --decay=0.75 --output=%t.d/expected.npy
// RUN: lcc-compare %t.d/after/result0.npy %t.d/expected.npy --rtol=1e-5
// The update is not the identity, and Adam keeps no state for centroids.
// RUN: not lcc-compare %t.d/after/result0.npy %t.d/before/result0.npy --rtol=1e-2
// RUN: %python %S/Inputs/train-check.py dump %t.d/after.safetensors | FileCheck %s
// CHECK-DAG: adam.m.head.w F32
// CHECK-DAG: routing.centroids F32 [2, 3, 4]
// CHECK-NOT: adam.m.routing.centroids

// A bad decay is one error line.
// RUN: not lcc %s --train --centroid-decay=2 -o %t.bad.lcm 2>&1 | FileCheck %s --check-prefix=DECAY
// DECAY: expected centroid-decay in [0, 1], got 2
// RUN: not lcc %s --centroid-decay=0.5 -o %t.bad.lcm 2>&1 | FileCheck %s --check-prefix=NOTRAIN
// NOTRAIN: --centroid-decay configures the train step: add --train

func.func @loss(%q: tensor<2x2x32x4xf32>, %k: tensor<2x2x32x4xf32>, %v: tensor<2x2x32x4xf32>,
                %labels: tensor<2x2x32xi32>) -> tensor<f32> {
  %c = attn.param "routing.centroids" : tensor<2x3x4xf32>
  %w = attn.param "head.w" : tensor<4x5xf32>
  %o = attn.routed_attention %q, %k, %v centroids %c {clusters = 3 : i64, window = 12 : i64, causal = true}
      : (tensor<2x2x32x4xf32>, tensor<2x2x32x4xf32>, tensor<2x2x32x4xf32>, tensor<2x3x4xf32>) -> tensor<2x2x32x4xf32>
  %logits = attn.linear %o, %w : (tensor<2x2x32x4xf32>, tensor<4x5xf32>) -> tensor<2x2x32x5xf32>
  %l = attn.softmax_cross_entropy %logits, %labels : (tensor<2x2x32x5xf32>, tensor<2x2x32xi32>) -> tensor<f32>
  return %l : tensor<f32>
}

func.func @centroids() -> tensor<2x3x4xf32> {
  %c = attn.param "routing.centroids" : tensor<2x3x4xf32>
  return %c : tensor<2x3x4xf32>
}
