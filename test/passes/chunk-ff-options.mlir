// RUN: not lcc-opt %s --attn-chunk-ff=chunks=-1 2>&1 | FileCheck %s
// RUN: not lcc-opt %s --attn-chunk-ff=attention-chunks=-2 2>&1 | FileCheck %s --check-prefix=ATTENTION
// CHECK: attn-chunk-ff: expected chunks >= 1 (0: as written), got -1
// ATTENTION: attn-chunk-ff: expected attention-chunks >= 1 (0: as written), got -2
func.func @f(%x: tensor<1x64x16xf32>) -> tensor<1x64x16xf32> {
  return %x : tensor<1x64x16xf32>
}
