// RUN: not lcc-opt %s --attn-chunk-ff=chunks=0 2>&1 | FileCheck %s
// CHECK: attn-chunk-ff: expected chunks >= 1, got 0
func.func @f(%x: tensor<1x64x16xf32>) -> tensor<1x64x16xf32> {
  return %x : tensor<1x64x16xf32>
}
