// RUN: not lcc-opt %s --attn-generate-train-step="optimizer=rmsprop" 2>&1 | FileCheck %s --check-prefix=OPT
// RUN: not lcc-opt %s --attn-generate-train-step="lr=0" 2>&1 | FileCheck %s --check-prefix=LR
// RUN: not lcc-opt %s --attn-generate-train-step="grad-clip=-1" 2>&1 | FileCheck %s --check-prefix=CLIP
// RUN: not lcc-opt %s --attn-generate-train-step="beta1=1" 2>&1 | FileCheck %s --check-prefix=BETA
// RUN: not lcc-opt %s --attn-generate-train-step="function=objective" 2>&1 | FileCheck %s --check-prefix=FUNC
// RUN: not lcc-opt %s --attn-generate-train-step="centroid-decay=1.5" 2>&1 | FileCheck %s --check-prefix=DECAY
// RUN: not lcc-opt %s --attn-generate-train-step="gradient-bucket-bytes=-2" 2>&1 | FileCheck %s --check-prefix=BUCKET
// OPT: attn-generate-train-step: unknown optimizer 'rmsprop'; expected sgd or adam
// LR: attn-generate-train-step: expected lr > 0, got 0
// CLIP: attn-generate-train-step: expected grad-clip >= 0 (0 does not clip), got -1
// BETA: attn-generate-train-step: expected beta1 and beta2 in [0, 1), got 1 and 0.999
// DECAY: attn-generate-train-step: expected centroid-decay in [0, 1], got 1.5
// BUCKET: attn-generate-train-step: expected gradient-bucket-bytes >= 0, got -2
// FUNC: attn-generate-train-step: no function 'objective' to differentiate (--train=FUNC names it)
func.func @loss(%x: tensor<1x2x3xf32>, %labels: tensor<1x2xi32>) -> tensor<f32> {
  %w = attn.param "w" : tensor<1x2x3xf32>
  %y = arith.addf %x, %w : tensor<1x2x3xf32>
  %l = attn.softmax_cross_entropy %y, %labels : (tensor<1x2x3xf32>, tensor<1x2xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
