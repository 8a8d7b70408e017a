// RUN: not lcc-opt %s --attn-chunk-ff=chunks=-1 2>&1 | FileCheck %s
// RUN: not lcc-opt %s --attn-chunk-ff=attention-chunks=-2 2>&1 | FileCheck %s --check-prefix=ATTENTION
// CHECK: attn-chunk-ff: expected chunks >= 0 (0 picks the default), got -1
// ATTENTION: attn-chunk-ff: expected attention-chunks >= 0 (0 picks the default), got -2
func.func @f(%x: tensor<1x64x16xf32>) -> tensor<1x64x16xf32> {
  return %x : tensor<1x64x16xf32>
}
