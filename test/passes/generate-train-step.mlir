// RUN: lcc-opt %s --split-input-file --attn-generate-train-step="optimizer=sgd lr=0.5" --verify-diagnostics | FileCheck %s
// RUN: lcc-opt %s --split-input-file --attn-generate-train-step="optimizer=adam lr=0.01 weight-decay=0.1 grad-clip=1.0 emit-gradients=true" --verify-diagnostics | FileCheck %s --check-prefix=ADAM
// RUN: lcc-opt %s --split-input-file --attn-generate-train-step="optimizer=sgd gradient-bucket-bytes=1" --verify-diagnostics | FileCheck %s --check-prefix=BUCKETS

// The loss function stays; train_step runs its forward (attention saving
// its logsumexp), then each op's backward in reverse, then the update.
// CHECK-LABEL: func.func @loss(
// CHECK: attn.multi_head_attention
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[X:.+]]: tensor<1x8x4xf32>, %[[L:.+]]: tensor<1x8xi32>) -> tensor<f32>
// CHECK: %[[WQ:.+]] = attn.param "wq"
// CHECK: %[[P:.+]] = attn.linear %[[X]], %[[WQ]]
// CHECK: %[[QK:.+]] = attn.split_heads %[[P]] {heads = 2 : i64}
// CHECK: %[[O:.+]], %[[LSE:.+]] = attn.attention %[[QK]], %[[QK]], %{{.+}} {causal = true, shared_qk}
// CHECK: %[[M:.+]] = attn.merge_heads %[[O]]
// CHECK: %[[LOSS:.+]] = attn.softmax_cross_entropy
// CHECK: %[[ONE:.+]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK: attn.softmax_cross_entropy_backward %{{.+}}, %[[L]], loss_grad %[[ONE]]
// CHECK: attn.linear_backward
// CHECK: %[[DQK:.+]], %[[DV:.+]] = attn.attention_backward %[[QK]], %[[QK]], %{{.+}}, %[[O]], %[[LSE]], %{{.+}} {causal = true, shared_qk}
// CHECK: attn.merge_heads %[[DV]]
// CHECK: %[[DQKM:.+]] = attn.merge_heads %[[DQK]]
// CHECK: %{{.+}}, %[[DWQ:.+]] = attn.linear_backward %[[X]], %[[WQ]], %[[DQKM]]
// The loss and gradients are averaged over the ranks of the job (data
// parallelism; the identity in one process), in the order the step
// computes them, right after the last (all of them: one bucket of 4 MiB
// at most). The hyper-parameters are state the loaded module keeps,
// starting at the pass's values; clipping is there, off (max_norm 0)
// unless set.
// CHECK-NEXT: %[[AVG:.+]]:5 = attn.all_reduce mean %[[LOSS]], {{.+}}, %[[DWQ]] : tensor<f32>, tensor<4x3xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
// CHECK: %[[LR:.+]] = attn.param "optimizer.lr" {initial = 5.000000e-01 : f32, state} : tensor<f32>
// CHECK: %[[WD:.+]] = attn.param "optimizer.weight_decay" {initial = 0.000000e+00 : f32, state} : tensor<f32>
// CHECK: %[[CLIP:.+]] = attn.param "optimizer.grad_clip" {initial = 0.000000e+00 : f32, state} : tensor<f32>
// CHECK-NOT: optimizer.beta1
// CHECK: %[[G:.+]]:4 = attn.clip_by_global_norm %[[AVG]]#4, %[[AVG]]#3, %[[AVG]]#2, %[[AVG]]#1 max_norm %[[CLIP]]
// CHECK: %[[NEW:.+]] = attn.sgd_update %[[WQ]], %[[G]]#0 lr %[[LR]] weight_decay %[[WD]] : tensor<4x4xf32>, tensor<f32>
// CHECK: attn.assign "wq", %[[NEW]] : tensor<4x4xf32>
// CHECK: attn.assign "wv"
// CHECK: attn.assign "wo"
// CHECK: attn.assign "head"
// CHECK: return %[[AVG]]#0 : tensor<f32>
// CHECK-NOT: loss_gradients

// Buckets of one gradient each: every all-reduce right after the backward
// computes its gradient (the loss's after the forward), so that it runs
// while the backward goes on.
// BUCKETS-LABEL: func.func @train_step(
// BUCKETS: %[[LOSS:.+]] = attn.softmax_cross_entropy
// BUCKETS-NEXT: %[[AVG:.+]] = attn.all_reduce mean %[[LOSS]] : tensor<f32>
// BUCKETS: %{{.+}}, %[[DHEAD:.+]] = attn.linear_backward
// BUCKETS-NEXT: attn.all_reduce mean %[[DHEAD]] : tensor<4x3xf32>
// BUCKETS: %{{.+}}, %[[DWO:.+]] = attn.linear_backward
// BUCKETS-NEXT: attn.all_reduce mean %[[DWO]] : tensor<4x4xf32>
// BUCKETS: attn.attention_backward
// BUCKETS: %{{.+}}, %[[DWV:.+]] = attn.linear_backward
// BUCKETS-NEXT: attn.all_reduce mean %[[DWV]] : tensor<4x4xf32>
// BUCKETS: %{{.+}}, %[[DWQ:.+]] = attn.linear_backward
// BUCKETS-NEXT: attn.all_reduce mean %[[DWQ]] : tensor<4x4xf32>
// BUCKETS-NOT: attn.all_reduce
// BUCKETS: return %[[AVG]] : tensor<f32>

// Adam keeps its moments and step count as state parameters; the
// gradients are clipped together first. With emit-gradients the gradients
// function returns them, named after their parameters.
// ADAM-LABEL: func.func @loss_gradients(
// ADAM-SAME: -> (tensor<f32> {lcc.name = "loss"}, tensor<4x4xf32> {lcc.name = "wq"}, tensor<4x4xf32> {lcc.name = "wv"}, tensor<4x4xf32> {lcc.name = "wo"}, tensor<4x3xf32> {lcc.name = "head"})
// ADAM-LABEL: func.func @train_step(
// ADAM: %[[LR:.+]] = attn.param "optimizer.lr" {initial = 0.00999999977 : f32, state}
// ADAM: %[[WD:.+]] = attn.param "optimizer.weight_decay" {initial = 1.000000e-01 : f32, state}
// ADAM: %[[CLIP:.+]] = attn.param "optimizer.grad_clip" {initial = 1.000000e+00 : f32, state}
// ADAM: %[[B1:.+]] = attn.param "optimizer.beta1" {initial = 0.899999976 : f32, state}
// ADAM: %[[B2:.+]] = attn.param "optimizer.beta2" {initial = 9.990000e-01 : f32, state}
// ADAM: %[[EPS:.+]] = attn.param "optimizer.epsilon" {initial = 9.99999993E-9 : f32, state}
// ADAM: %[[G:.+]]:4 = attn.clip_by_global_norm {{.+}} max_norm %[[CLIP]]
// ADAM: %[[STEP0:.+]] = attn.param "adam.step" {state} : tensor<f32>
// ADAM: %[[STEP:.+]] = arith.addf %[[STEP0]]
// ADAM: attn.assign "adam.step", %[[STEP]]
// ADAM: %[[MQ:.+]] = attn.param "adam.m.wq" {state} : tensor<4x4xf32>
// ADAM: %[[VQ:.+]] = attn.param "adam.v.wq" {state} : tensor<4x4xf32>
// ADAM: %[[NP:.+]], %[[NM:.+]], %[[NV:.+]] = attn.adam_update %{{.+}}, %[[G]]#0, %[[MQ]], %[[VQ]] step %[[STEP]] lr %[[LR]] beta1 %[[B1]] beta2 %[[B2]] epsilon %[[EPS]] weight_decay %[[WD]]
// ADAM: attn.assign "wq", %[[NP]]
// ADAM: attn.assign "adam.m.wq", %[[NM]]
// ADAM: attn.assign "adam.v.wq", %[[NV]]
func.func @loss(%x: tensor<1x8x4xf32>, %labels: tensor<1x8xi32>) -> tensor<f32> {
  %wq = attn.param "wq" : tensor<4x4xf32>
  %wv = attn.param "wv" : tensor<4x4xf32>
  %wo = attn.param "wo" : tensor<4x4xf32>
  %h = attn.multi_head_attention %x, query %wq, value %wv, output %wo {heads = 2 : i64}
      : (tensor<1x8x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<1x8x4xf32> {
  ^bb0(%qk: tensor<1x2x8x2xf32>, %v: tensor<1x2x8x2xf32>):
    %o = attn.attention %qk, %qk, %v {causal = true, shared_qk}
        : (tensor<1x2x8x2xf32>, tensor<1x2x8x2xf32>, tensor<1x2x8x2xf32>) -> tensor<1x2x8x2xf32>
    attn.yield %o : tensor<1x2x8x2xf32>
  }
  %w = attn.param "head" : tensor<4x3xf32>
  %y = attn.linear %h, %w : (tensor<1x8x4xf32>, tensor<4x3xf32>) -> tensor<1x8x3xf32>
  %l = attn.softmax_cross_entropy %y, %labels : (tensor<1x8x3xf32>, tensor<1x8xi32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Routed attention's backward recomputes the forward's routing; the
// centroids get no gradient: train_step moves them by their moving average
// of the routed queries and keys (decay 0.999 by default), computed right
// after the forward (its queries and keys need not live on for it) and
// written at the end.
// CHECK-LABEL: func.func @train_step(
// CHECK: %[[C:.+]] = attn.param "routing.c" : tensor<1x2x4xf32>
// CHECK: attn.routed_attention %[[Q:.+]], %[[Q]], %[[V:.+]] centroids %[[C]] {causal = true, clusters = 2 : i64, window = 32 : i64}
// CHECK-NEXT: %[[M:.+]] = attn.routed_centroid_update %[[C]], %[[Q]], %[[Q]] {decay = 9.990000e-01 : f32}
// CHECK: attn.routed_attention_backward %[[Q]], %[[Q]], %[[V]] centroids %[[C]], %{{.+}} {causal = true, clusters = 2 : i64, window = 32 : i64}
// CHECK-NOT: attn.assign "routing.c"
// CHECK: attn.sgd_update
// CHECK: attn.assign "w"
// CHECK: attn.assign "routing.c", %[[M]]
// ADAM-LABEL: func.func @loss_gradients(
// ADAM-NOT: routed_centroid_update
// ADAM: return
// ADAM-LABEL: func.func @train_step(
// ADAM-NOT: adam.m.routing.c
// ADAM: attn.routed_centroid_update
func.func @loss(%x: tensor<1x1x64x4xf32>, %v: tensor<1x1x64x4xf32>, %labels: tensor<1x1x64xi32>) -> tensor<f32> {
  %w = attn.param "w" : tensor<1x1x64x4xf32>
  %c = attn.param "routing.c" : tensor<1x2x4xf32>
  %q = arith.addf %x, %w : tensor<1x1x64x4xf32>
  %o = attn.routed_attention %q, %q, %v centroids %c {clusters = 2 : i64, window = 32 : i64, causal = true}
      : (tensor<1x1x64x4xf32>, tensor<1x1x64x4xf32>, tensor<1x1x64x4xf32>, tensor<1x2x4xf32>) -> tensor<1x1x64x4xf32>
  %l = attn.softmax_cross_entropy %o, %labels : (tensor<1x1x64x4xf32>, tensor<1x1x64xi32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Centroids computed from parameters would silently not train.
func.func @loss(%q: tensor<1x1x64x4xf32>, %labels: tensor<1x1x64xi32>) -> tensor<f32> {
  %c = attn.param "routing.c" : tensor<1x2x4xf32>
  %c2 = arith.addf %c, %c : tensor<1x2x4xf32>
  %w = attn.param "w" : tensor<1x1x64x4xf32>
  %v = arith.addf %q, %w : tensor<1x1x64x4xf32>
  // expected-error@+1 {{'attn.routed_attention' op has centroids computed by other ops: attn-generate-train-step trains them by their moving average, so they must be an attn.param (or a constant or an argument, not trained)}}
  %o = attn.routed_attention %q, %q, %v centroids %c2 {clusters = 2 : i64, window = 32 : i64}
      : (tensor<1x1x64x4xf32>, tensor<1x1x64x4xf32>, tensor<1x1x64x4xf32>, tensor<1x2x4xf32>) -> tensor<1x1x64x4xf32>
  %l = attn.softmax_cross_entropy %o, %labels : (tensor<1x1x64x4xf32>, tensor<1x1x64xi32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Centroids that the loss also depends on elsewhere would get a gradient
// step and a moving average.
func.func @loss(%q: tensor<1x1x64x4xf32>, %labels: tensor<1x1x64xi32>, %labels2: tensor<1x2xi32>) -> tensor<f32> {
  %c = attn.param "routing.c" : tensor<1x2x4xf32>
  %w = attn.param "w" : tensor<1x1x64x4xf32>
  %v = arith.addf %q, %w : tensor<1x1x64x4xf32>
  // expected-error@+1 {{'attn.routed_attention' op has centroids 'routing.c' that the loss is also differentiated by elsewhere: they are trained by their moving average only}}
  %o = attn.routed_attention %q, %q, %v centroids %c {clusters = 2 : i64, window = 32 : i64}
      : (tensor<1x1x64x4xf32>, tensor<1x1x64x4xf32>, tensor<1x1x64x4xf32>, tensor<1x2x4xf32>) -> tensor<1x1x64x4xf32>
  %l = attn.softmax_cross_entropy %o, %labels : (tensor<1x1x64x4xf32>, tensor<1x1x64xi32>) -> tensor<f32>
  %l2 = attn.softmax_cross_entropy %c, %labels2 : (tensor<1x2x4xf32>, tensor<1x2xi32>) -> tensor<f32>
  %t = arith.addf %l, %l2 : tensor<f32>
  return %t : tensor<f32>
}

// -----

// Two routed attentions sharing centroids: whose moving average?
func.func @loss(%q: tensor<1x1x64x4xf32>, %labels: tensor<1x1x64xi32>) -> tensor<f32> {
  %c = attn.param "routing.c" : tensor<1x2x4xf32>
  %w = attn.param "w" : tensor<1x1x64x4xf32>
  %v = arith.addf %q, %w : tensor<1x1x64x4xf32>
  %o = attn.routed_attention %q, %q, %v centroids %c {clusters = 2 : i64, window = 32 : i64}
      : (tensor<1x1x64x4xf32>, tensor<1x1x64x4xf32>, tensor<1x1x64x4xf32>, tensor<1x2x4xf32>) -> tensor<1x1x64x4xf32>
  // expected-error@+1 {{'attn.routed_attention' op shares its centroids 'routing.c' with another op that trains them by their moving average: each op trains its own}}
  %o2 = attn.routed_attention %o, %o, %v centroids %c {clusters = 2 : i64, window = 32 : i64}
      : (tensor<1x1x64x4xf32>, tensor<1x1x64x4xf32>, tensor<1x1x64x4xf32>, tensor<1x2x4xf32>) -> tensor<1x1x64x4xf32>
  %l = attn.softmax_cross_entropy %o2, %labels : (tensor<1x1x64x4xf32>, tensor<1x1x64xi32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// LSH attention's backward recomputes the forward's hashing and sort.
// CHECK-LABEL: func.func @train_step(
// CHECK: %[[O:.+]] = attn.lsh_attention %[[QK:.+]], %[[V:.+]] {bucket_size = 16 : i64, causal = true, n_hashes = 2 : i64, seed = 5 : i64}
// CHECK: attn.lsh_attention_backward %[[QK]], %[[V]], %[[O]], %{{.+}} {bucket_size = 16 : i64, causal = true, n_hashes = 2 : i64, seed = 5 : i64}
func.func @loss(%qk: tensor<1x1x64x4xf32>, %labels: tensor<1x1x64xi32>) -> tensor<f32> {
  %w = attn.param "w" : tensor<1x1x64x4xf32>
  %v = arith.addf %qk, %w : tensor<1x1x64x4xf32>
  %o = attn.lsh_attention %v, %v {n_hashes = 2 : i64, bucket_size = 16 : i64, causal = true, seed = 5 : i64}
      : (tensor<1x1x64x4xf32>, tensor<1x1x64x4xf32>) -> tensor<1x1x64x4xf32>
  %l = attn.softmax_cross_entropy %o, %labels : (tensor<1x1x64x4xf32>, tensor<1x1x64xi32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// The loss must be a scalar.
// expected-error@+1 {{'func.func' op is differentiated by attn-generate-train-step: expected its first result to be the loss, a tensor<f32>, got 'tensor<2xf32>'}}
func.func @loss(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}

// -----

// A loss that no parameter moves has nothing to train.
// expected-error@+1 {{'func.func' op has no attn.param that its loss depends on: nothing to train}}
func.func @loss(%y: tensor<1x2x3xf32>, %labels: tensor<1x2xi32>) -> tensor<f32> {
  %l = attn.softmax_cross_entropy %y, %labels : (tensor<1x2x3xf32>, tensor<1x2xi32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// An op without a gradient rule on the path to the loss is named.
func.func @loss(%x: tensor<1x2x3xf32>, %labels: tensor<1x2xi32>) -> tensor<f32> {
  %w = attn.param "w" : tensor<1x2x3xf32>
  %y = arith.addf %x, %w : tensor<1x2x3xf32>
  // expected-error@+1 {{'math.sin' op has no gradient rule}}
  %s = math.sin %y : tensor<1x2x3xf32>
  %l = attn.softmax_cross_entropy %s, %labels : (tensor<1x2x3xf32>, tensor<1x2xi32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// The optimizer's names are reserved.
func.func @loss(%x: tensor<1x2x3xf32>, %labels: tensor<1x2xi32>) -> tensor<f32> {
  // expected-error@+1 {{'attn.param' op uses the name 'adam.step': names starting with 'adam.' or 'optimizer.' and state parameters belong to the optimizer}}
  %w = attn.param "adam.step" : tensor<1x2x3xf32>
  %y = arith.addf %x, %w : tensor<1x2x3xf32>
  %l = attn.softmax_cross_entropy %y, %labels : (tensor<1x2x3xf32>, tensor<1x2xi32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A reversible block's backward recomputes it from its outputs: G on y1
// gives x2 = y2 - G(y1), F on x2 gives x1 = y1 - F(x2), each clone marked
// lcc.recomputed and differentiated there; the forward's routed attention
// is the one whose centroids move (once), the clone routes as it did.
// The forward is flattened once the rule has recomputed it. The clones'
// backward ops are marked lcc.backward_of_recomputed: what their lowerings
// recompute, CSE may share with the clones.
// CHECK-LABEL: func.func @train_step(
// CHECK: attn.routed_attention {{.+}} centroids
// CHECK-NEXT: %[[M:.+]] = attn.routed_centroid_update
// CHECK: %[[Y1:.+]] = arith.addf
// CHECK: attn.linear %[[Y1]]
// CHECK: %[[Y2:.+]] = arith.addf
// CHECK: %[[G:.+]] = attn.linear %[[Y1]], %{{.+}} {lcc.recomputed}
// CHECK: %[[X2:.+]] = arith.subf %[[Y2]], %[[G]]
// CHECK: attn.linear_backward %[[Y1]], {{.+}} {lcc.backward_of_recomputed}
// CHECK: attn.routed_attention %[[X2]], %[[X2]], %[[X2]] centroids %{{.+}} {{{.*}}lcc.recomputed{{.*}}}
// CHECK: arith.subf %[[Y1]]
// CHECK: attn.routed_attention_backward %[[X2]]{{.+}}lcc.backward_of_recomputed
// CHECK-NOT: attn.routed_centroid_update
// CHECK: attn.assign "routing.c", %[[M]]
// ADAM-LABEL: func.func @train_step(
// ADAM-COUNT-1: attn.routed_centroid_update
// ADAM-NOT: attn.routed_centroid_update
func.func @loss(%x: tensor<1x1x64x4xf32>, %labels: tensor<1x1x64xi32>) -> tensor<f32> {
  %y:2 = attn.reversible %x, %x : tensor<1x1x64x4xf32>, tensor<1x1x64x4xf32>
  f {
  ^bb0(%a: tensor<1x1x64x4xf32>):
    %c = attn.param "routing.c" : tensor<1x2x4xf32>
    %o = attn.routed_attention %a, %a, %a centroids %c {clusters = 2 : i64, window = 32 : i64, causal = true}
        : (tensor<1x1x64x4xf32>, tensor<1x1x64x4xf32>, tensor<1x1x64x4xf32>, tensor<1x2x4xf32>) -> tensor<1x1x64x4xf32>
    attn.yield %o : tensor<1x1x64x4xf32>
  } g {
  ^bb0(%a: tensor<1x1x64x4xf32>):
    %w = attn.param "g.w" : tensor<4x4xf32>
    %h = attn.linear %a, %w : (tensor<1x1x64x4xf32>, tensor<4x4xf32>) -> tensor<1x1x64x4xf32>
    attn.yield %h : tensor<1x1x64x4xf32>
  }
  %m = arith.addf %y#0, %y#1 : tensor<1x1x64x4xf32>
  %l = attn.softmax_cross_entropy %m, %labels : (tensor<1x1x64x4xf32>, tensor<1x1x64xi32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Transformer-XL's plumbing: a concatenation's operands get their slices of
// the gradient, a reshape the inverse reshape of it, and relative attention
// saves its logsumexp for attn.relative_attention_backward, whose gradients
// reach all six operands (the memory, an argument, keeps none).
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[X:.+]]: tensor<1x4x2xf32>, %[[MEM:.+]]: tensor<1x4x2xf32>
// CHECK: %[[CAT:.+]] = tensor.concat dim(1) %[[MEM]], %[[X]]
// CHECK: %[[O:.+]], %[[LSE:.+]] = attn.relative_attention {{.*}} -> (tensor<1x1x4x2xf32>, tensor<1x1x4xf32>)
// CHECK: %[[DO:.+]] = tensor.expand_shape %{{.+}} {{\[}}[0, 1], [2], [3]{{\]}}
// CHECK: = attn.relative_attention_backward {{.*}}, %[[O]], %[[LSE]], %[[DO]] {clamp_len = 3 : i64}
// CHECK: tensor.extract_slice %{{.+}}[0, 4, 0] [1, 4, 2] [1, 1, 1]
func.func @loss(%x: tensor<1x4x2xf32>, %mem: tensor<1x4x2xf32>, %labels: tensor<1x4xi32>) -> tensor<f32> {
  %pos = attn.param "pos" : tensor<1x8x2xf32>
  %u = attn.param "u" : tensor<1x2xf32>
  %wk = attn.param "wk" : tensor<2x2xf32>
  %cat = tensor.concat dim(1) %mem, %x : (tensor<1x4x2xf32>, tensor<1x4x2xf32>) -> tensor<1x8x2xf32>
  %k = attn.linear %cat, %wk : (tensor<1x8x2xf32>, tensor<2x2xf32>) -> tensor<1x8x2xf32>
  %qh = tensor.expand_shape %x [[0, 1], [2], [3]] output_shape [1, 1, 4, 2] : tensor<1x4x2xf32> into tensor<1x1x4x2xf32>
  %kh = tensor.expand_shape %k [[0, 1], [2], [3]] output_shape [1, 1, 8, 2] : tensor<1x8x2xf32> into tensor<1x1x8x2xf32>
  %o = attn.relative_attention %qh, %kh, %kh, %pos, %u, %u {clamp_len = 3 : i64}
      : (tensor<1x1x4x2xf32>, tensor<1x1x8x2xf32>, tensor<1x1x8x2xf32>,
         tensor<1x8x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x1x4x2xf32>
  %m = tensor.collapse_shape %o [[0, 1], [2], [3]] : tensor<1x1x4x2xf32> into tensor<1x4x2xf32>
  %l = attn.softmax_cross_entropy %m, %labels : (tensor<1x4x2xf32>, tensor<1x4xi32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Adaptive span saves its log normalizer for its backward, whose gradients
// reach q, k, v and z; the update clamps z (an attn.param read as z) back
// into [0, 1], and no other parameter.
// CHECK-LABEL: func.func @train_step(
// CHECK: %[[Z:.+]] = attn.param "span.z" : tensor<2xf32>
// CHECK: %[[O:.+]], %[[N:.+]] = attn.adaptive_span_attention {{.*}} -> (tensor<1x2x4x2xf32>, tensor<1x2x4xf32>)
// CHECK: attn.adaptive_span_attention_backward {{.*}}, %[[O]], %[[N]], %{{.+}} {causal = true, max_span = 8 : i64, ramp = 2 : i64}
// CHECK: %[[NEWZ:.+]] = attn.sgd_update %[[Z]]
// CHECK: %[[FLOORED:.+]] = arith.maximumf %[[NEWZ]], %{{.+}} : tensor<2xf32>
// CHECK: %[[CLAMPED:.+]] = arith.minimumf %[[FLOORED]], %{{.+}} : tensor<2xf32>
// CHECK: attn.assign "span.z", %[[CLAMPED]]
// CHECK-NOT: arith.minimumf
// CHECK: return
// ADAM: %[[NEWZ:.+]], %{{.+}}, %{{.+}} = attn.adam_update %{{.+}} : tensor<2xf32>
// ADAM: %[[FLOORED:.+]] = arith.maximumf %[[NEWZ]], %{{.+}} : tensor<2xf32>
// ADAM: %[[CLAMPED:.+]] = arith.minimumf %[[FLOORED]], %{{.+}} : tensor<2xf32>
// ADAM: attn.assign "span.z", %[[CLAMPED]]
func.func @loss(%x: tensor<1x2x4x2xf32>, %labels: tensor<1x2x4xi32>) -> tensor<f32> {
  %z = attn.param "span.z" : tensor<2xf32>
  %wq = attn.param "wq" : tensor<1x2x4x2xf32>
  %q = arith.addf %x, %wq : tensor<1x2x4x2xf32>
  %o = attn.adaptive_span_attention %q, %x, %x, %z {max_span = 8 : i64, ramp = 2 : i64, causal = true}
      : (tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<2xf32>) -> tensor<1x2x4x2xf32>
  %l = attn.softmax_cross_entropy %o, %labels : (tensor<1x2x4x2xf32>, tensor<1x2x4xi32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Two reversible blocks with a chunked feed-forward as G. The lower block's
// backward recomputes G(y1) and differentiates it: the two are one
// attn.feed_forward_backward with_output (the hidden activations
// recomputed once), whose result gives x2 = y2 - G(y1). The top block's
// G(y1) is the forward's own (y1 is the stored output): left as it is,
// CSE shares it with the forward after lowering.
// CHECK-LABEL: func.func @train_step(
// CHECK: attn.feed_forward gelu
// CHECK: attn.feed_forward gelu
// CHECK: attn.feed_forward gelu {{.+}}lcc.recomputed
// CHECK-NEXT: arith.subf
// CHECK: attn.feed_forward_backward gelu {{.+}} : (
// CHECK-NOT: attn.feed_forward gelu
// CHECK: attn.feed_forward_backward gelu {{.+}} with_output {{.+}}lcc.backward_of_recomputed
// CHECK-NEXT: arith.subf
// CHECK-NOT: attn.feed_forward gelu
// CHECK: return
func.func @loss(%x: tensor<1x8x4xf32>, %labels: tensor<1x8xi32>) -> tensor<f32> {
  %y:2 = attn.reversible %x, %x : tensor<1x8x4xf32>, tensor<1x8x4xf32>
  f {
  ^bb0(%a: tensor<1x8x4xf32>):
    %w = attn.param "f0.w" : tensor<4x4xf32>
    %h = attn.linear %a, %w : (tensor<1x8x4xf32>, tensor<4x4xf32>) -> tensor<1x8x4xf32>
    attn.yield %h : tensor<1x8x4xf32>
  } g {
  ^bb0(%a: tensor<1x8x4xf32>):
    %w1 = attn.param "g0.w1" : tensor<4x16xf32>
    %b1 = attn.param "g0.b1" : tensor<16xf32>
    %w2 = attn.param "g0.w2" : tensor<16x4xf32>
    %b2 = attn.param "g0.b2" : tensor<4xf32>
    %h = attn.feed_forward gelu %a, %w1, %b1, %w2, %b2 {chunks = 2 : i64}
        : (tensor<1x8x4xf32>, tensor<4x16xf32>, tensor<16xf32>, tensor<16x4xf32>, tensor<4xf32>) -> tensor<1x8x4xf32>
    attn.yield %h : tensor<1x8x4xf32>
  }
  %z:2 = attn.reversible %y#0, %y#1 : tensor<1x8x4xf32>, tensor<1x8x4xf32>
  f {
  ^bb0(%a: tensor<1x8x4xf32>):
    %w = attn.param "f1.w" : tensor<4x4xf32>
    %h = attn.linear %a, %w : (tensor<1x8x4xf32>, tensor<4x4xf32>) -> tensor<1x8x4xf32>
    attn.yield %h : tensor<1x8x4xf32>
  } g {
  ^bb0(%a: tensor<1x8x4xf32>):
    %w1 = attn.param "g1.w1" : tensor<4x16xf32>
    %b1 = attn.param "g1.b1" : tensor<16xf32>
    %w2 = attn.param "g1.w2" : tensor<16x4xf32>
    %b2 = attn.param "g1.b2" : tensor<4xf32>
    %h = attn.feed_forward gelu %a, %w1, %b1, %w2, %b2 {chunks = 2 : i64}
        : (tensor<1x8x4xf32>, tensor<4x16xf32>, tensor<16xf32>, tensor<16x4xf32>, tensor<4xf32>) -> tensor<1x8x4xf32>
    attn.yield %h : tensor<1x8x4xf32>
  }
  %m = arith.addf %z#0, %z#1 : tensor<1x8x4xf32>
  %l = attn.softmax_cross_entropy %m, %labels : (tensor<1x8x4xf32>, tensor<1x8xi32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Collectives are differentiated by their transposes: the all-to-all by
// itself, the ring shift by the shift the other way, a rank slice by the
// rank pad, an all-reduce by the same all-reduce of its result's gradient.
// CHECK-LABEL: func.func @train_step(
// CHECK: %[[A:.+]] = attn.all_to_all %{{.+}} : tensor<2x3x4xf32>
// CHECK: attn.ring_shift %[[A]] by 1 : tensor<2x3x4xf32>
// CHECK: %[[L:.+]] = attn.all_reduce mean %{{.+}} : tensor<f32>
// CHECK: attn.all_reduce mean %{{.+}} : tensor<f32>
// CHECK: attn.rank_pad %{{.+}} : tensor<1x3x4xf32> -> tensor<2x3x4xf32>
// CHECK: %[[BACK:.+]] = attn.ring_shift %{{.+}} by -1 : tensor<2x3x4xf32>
// CHECK: attn.all_to_all %[[BACK]] : tensor<2x3x4xf32>
// CHECK: attn.sgd_update
func.func @loss(%x: tensor<2x3x4xf32>, %labels: tensor<2x3xi32>) -> tensor<f32> {
  %w = attn.param "w" : tensor<2x3x4xf32>
  %h = arith.mulf %x, %w : tensor<2x3x4xf32>
  %a = attn.all_to_all %h : tensor<2x3x4xf32>
  %s = attn.ring_shift %a by 1 : tensor<2x3x4xf32>
  %b = attn.param "b" : tensor<2x3x4xf32>
  %m = attn.rank_slice %b : tensor<2x3x4xf32> -> tensor<1x3x4xf32>
  %e = tensor.collapse_shape %m [[0, 1], [2]] : tensor<1x3x4xf32> into tensor<3x4xf32>
  %f = tensor.expand_shape %e [[0, 1], [2]] output_shape [1, 3, 4] : tensor<3x4xf32> into tensor<1x3x4xf32>
  %g = tensor.concat dim(0) %f, %f : (tensor<1x3x4xf32>, tensor<1x3x4xf32>) -> tensor<2x3x4xf32>
  %y = arith.addf %s, %g : tensor<2x3x4xf32>
  %l = attn.softmax_cross_entropy %y, %labels : (tensor<2x3x4xf32>, tensor<2x3xi32>) -> tensor<f32>
  %r = attn.all_reduce mean %l : tensor<f32>
  return %r : tensor<f32>
}

// -----

// Mixed precision written in the model: the attention between an
// arith.truncf to bf16 and an arith.extf back saves an f32 logsumexp (the
// softmax's statistics are f32 on every operand type); the result's
// gradient reaches its backward rounded to bf16 (extf's rule), which runs
// on bf16, and its gradients come back widened to f32 (truncf's).
// CHECK-LABEL: func.func @train_step(
// CHECK: %[[QH:.+]] = arith.truncf %{{.+}} : tensor<1x2x8x4xf32> to tensor<1x2x8x4xbf16>
// CHECK: %[[O:.+]], %[[LSE:.+]] = attn.attention %[[QH]], %[[QH]], %[[QH]] {causal = true} : {{.+}} -> (tensor<1x2x8x4xbf16>, tensor<1x2x8xf32>)
// CHECK: %[[DOH:.+]] = arith.truncf %{{.+}} : tensor<1x2x8x4xf32> to tensor<1x2x8x4xbf16>
// CHECK: attn.attention_backward %[[QH]], %[[QH]], %[[QH]], %[[O]], %[[LSE]], %[[DOH]] {causal = true} : {{.+}} -> (tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>)
// CHECK: arith.extf %{{.+}} : tensor<1x2x8x4xbf16> to tensor<1x2x8x4xf32>
func.func @loss(%x: tensor<1x2x8x4xf32>, %labels: tensor<1x16xi32>) -> tensor<f32> {
  %w = attn.param "w" : tensor<1x2x8x4xf32>
  %q = arith.addf %x, %w : tensor<1x2x8x4xf32>
  %qh = arith.truncf %q : tensor<1x2x8x4xf32> to tensor<1x2x8x4xbf16>
  %oh = attn.attention %qh, %qh, %qh {causal = true}
      : (tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>, tensor<1x2x8x4xbf16>) -> tensor<1x2x8x4xbf16>
  %o = arith.extf %oh : tensor<1x2x8x4xbf16> to tensor<1x2x8x4xf32>
  %logits = tensor.collapse_shape %o [[0], [1, 2], [3]] : tensor<1x2x8x4xf32> into tensor<1x16x4xf32>
  %l = attn.softmax_cross_entropy %logits, %labels : (tensor<1x16x4xf32>, tensor<1x16xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
