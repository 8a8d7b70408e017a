// RUN: lcc-opt %s --attn-context-parallel=ranks=2 --attn-generate-train-step --verify-diagnostics

// Trained centroids, one slice per head, are cut to each rank's heads:
// their moving average over ranks that share a sequence is not built.
func.func @loss(%x: tensor<1x8x4xf32>, %labels: tensor<1x8xi32>) -> tensor<f32> {
  %w = attn.param "w" : tensor<4x4xf32>
  %p = attn.linear %x, %w : (tensor<1x8x4xf32>, tensor<4x4xf32>) -> tensor<1x8x4xf32>
  %q = attn.split_heads %p {heads = 2 : i64} : (tensor<1x8x4xf32>) -> tensor<1x2x8x2xf32>
  %c = attn.param "centroids" : tensor<2x2x2xf32>
  // expected-error@+1 {{'attn.routed_attention' op has centroids that context parallelism cuts to each rank's heads: training them by their moving average over ranks that share a sequence is not supported yet}}
  %o = attn.routed_attention %q, %q, %q centroids %c {clusters = 2 : i64, window = 4 : i64}
      : (tensor<1x2x8x2xf32>, tensor<1x2x8x2xf32>, tensor<1x2x8x2xf32>, tensor<2x2x2xf32>) -> tensor<1x2x8x2xf32>
  %y = attn.merge_heads %o : (tensor<1x2x8x2xf32>) -> tensor<1x8x4xf32>
  %l = attn.softmax_cross_entropy %y, %labels : (tensor<1x8x4xf32>, tensor<1x8xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
