// The ops of the train step (AttnTrainingOps.td) parse and print in their
// custom form, and survive a trip through the generic form.
// RUN: lcc-opt %s | lcc-opt | FileCheck %s
// RUN: lcc-opt %s --mlir-print-op-generic | lcc-opt | FileCheck %s

// CHECK-LABEL: func @backward_ops
func.func @backward_ops(%q: tensor<1x2x8x4xf32>, %tokens: tensor<1x8xi32>,
                        %x: tensor<1x8x4xf32>, %g: tensor<4xf32>,
                        %w: tensor<4x6xf32>, %dy6: tensor<1x8x6xf32>,
                        %w1: tensor<4x16xf32>, %b1: tensor<16xf32>,
                        %w2: tensor<16x4xf32>, %weights: tensor<1x8xf32>,
                        %one: tensor<f32>, %cent: tensor<2x2x4xf32>) {
  // CHECK: %[[O:.+]], %[[LSE:.+]] = attn.attention %{{.+}}, %{{.+}}, %{{.+}} {causal = true} : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
  %o, %lse = attn.attention %q, %q, %q {causal = true}
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
  // CHECK: attn.attention_backward {{.+}} {causal = true} : {{.+}} -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>)
  // CHECK-NEXT: ^bb0
  %dq, %dk, %dv = attn.attention_backward %q, %q, %q, %o, %lse, %o {causal = true}
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32>)
      -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>)
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %near = arith.cmpi ule, %j, %i : index
        attn.yield %near : i1
      }
  // CHECK: attn.attention_backward {{.+}} {shared_qk} : {{.+}} -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>)
  %sq, %sv = attn.attention_backward %q, %q, %q, %o, %lse, %o {shared_qk}
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32>)
      -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>)
  // CHECK: attn.lsh_attention_backward %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {bucket_size = 4 : i64, causal = true, n_hashes = 2 : i64, seed = 3 : i64} : {{.+}} -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>)
  %lq, %lv = attn.lsh_attention_backward %q, %q, %o, %o {n_hashes = 2 : i64, bucket_size = 4 : i64, causal = true, seed = 3 : i64}
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>)
  // CHECK: attn.routed_attention_backward %{{.+}}, %{{.+}}, %{{.+}} centroids %{{.+}}, %{{.+}} {causal = true, clusters = 2 : i64, window = 4 : i64}
  %rq, %rk, %rv = attn.routed_attention_backward %q, %q, %o centroids %cent, %o {clusters = 2 : i64, window = 4 : i64, causal = true}
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<2x2x4xf32>, tensor<1x2x8x4xf32>)
      -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>)
  // CHECK: attn.routed_attention_backward %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {clusters = 1 : i64, seed = 4 : i64, window = 8 : i64}
  %uq, %uk, %uv = attn.routed_attention_backward %q, %q, %o, %o {clusters = 1 : i64, window = 8 : i64, seed = 4 : i64}
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>)
      -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>)
  // CHECK: attn.routed_centroid_update %{{.+}}, %{{.+}}, %{{.+}} {decay = 9.990000e-01 : f32} : (tensor<2x2x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<2x2x4xf32>
  %nc = attn.routed_centroid_update %cent, %q, %q {decay = 0.999 : f32}
      : (tensor<2x2x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<2x2x4xf32>
  // CHECK: attn.embedding_backward %{{.+}}, %{{.+}} : (tensor<1x8xi32>, tensor<1x8x4xf32>) -> tensor<10x4xf32>
  %dt = attn.embedding_backward %tokens, %x : (tensor<1x8xi32>, tensor<1x8x4xf32>) -> tensor<10x4xf32>
  // CHECK: attn.layer_norm_backward %{{.+}}, %{{.+}}, %{{.+}} : (tensor<1x8x4xf32>, tensor<4xf32>, tensor<1x8x4xf32>)
  %dx, %dg, %db = attn.layer_norm_backward %x, %g, %x {epsilon = 1.0e-5 : f32}
      : (tensor<1x8x4xf32>, tensor<4xf32>, tensor<1x8x4xf32>) -> (tensor<1x8x4xf32>, tensor<4xf32>, tensor<4xf32>)
  // CHECK: attn.linear_backward {{.+}} -> (tensor<1x8x4xf32>, tensor<4x6xf32>, tensor<6xf32>)
  %lx, %lw, %lb = attn.linear_backward %x, %w, %dy6
      : (tensor<1x8x4xf32>, tensor<4x6xf32>, tensor<1x8x6xf32>) -> (tensor<1x8x4xf32>, tensor<4x6xf32>, tensor<6xf32>)
  // CHECK: attn.linear_backward {{.+}} -> (tensor<1x8x4xf32>, tensor<4x6xf32>)
  %nx, %nw = attn.linear_backward %x, %w, %dy6
      : (tensor<1x8x4xf32>, tensor<4x6xf32>, tensor<1x8x6xf32>) -> (tensor<1x8x4xf32>, tensor<4x6xf32>)
  // CHECK: attn.feed_forward_backward gelu {{.+}} {chunks = 2 : i64}
  %fx, %fw1, %fb1, %fw2, %fb2 = attn.feed_forward_backward gelu %x, %w1, %b1, %w2, %x {chunks = 2 : i64}
      : (tensor<1x8x4xf32>, tensor<4x16xf32>, tensor<16xf32>, tensor<16x4xf32>, tensor<1x8x4xf32>)
      -> (tensor<1x8x4xf32>, tensor<4x16xf32>, tensor<16xf32>, tensor<16x4xf32>, tensor<4xf32>)
  // With the down bias, the feed-forward's result too (a reversible block's
  // recomputation fused with its backward).
  // CHECK: attn.feed_forward_backward gelu %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} with_output %{{.+}} {chunks = 2 : i64}
  %ox, %ow1, %ob1, %ow2, %ob2, %out = attn.feed_forward_backward gelu %x, %w1, %b1, %w2, %x with_output %g {chunks = 2 : i64}
      : (tensor<1x8x4xf32>, tensor<4x16xf32>, tensor<16xf32>, tensor<16x4xf32>, tensor<1x8x4xf32>, tensor<4xf32>)
      -> (tensor<1x8x4xf32>, tensor<4x16xf32>, tensor<16xf32>, tensor<16x4xf32>, tensor<4xf32>, tensor<1x8x4xf32>)
  // CHECK: attn.softmax_cross_entropy_backward %{{.+}}, %{{.+}}, %{{.+}}, loss_grad %{{.+}} : (tensor<1x8x6xf32>, tensor<1x8xi32>, tensor<1x8xf32>, tensor<f32>) -> tensor<1x8x6xf32>
  %dl = attn.softmax_cross_entropy_backward %dy6, %tokens, %weights, loss_grad %one
      : (tensor<1x8x6xf32>, tensor<1x8xi32>, tensor<1x8xf32>, tensor<f32>) -> tensor<1x8x6xf32>
  // CHECK: attn.softmax_cross_entropy %{{.+}}, %{{.+}}, %{{.+}} : (tensor<1x8x6xf32>, tensor<1x8xi32>, tensor<1x8xf32>) -> tensor<f32>
  %l = attn.softmax_cross_entropy %dy6, %tokens, %weights
      : (tensor<1x8x6xf32>, tensor<1x8xi32>, tensor<1x8xf32>) -> tensor<f32>
  // CHECK: attn.split_heads %{{.+}} {heads = 2 : i64} : (tensor<1x8x4xf32>) -> tensor<1x2x8x2xf32>
  %s = attn.split_heads %x {heads = 2 : i64} : (tensor<1x8x4xf32>) -> tensor<1x2x8x2xf32>
  // CHECK: attn.merge_heads %{{.+}} : (tensor<1x2x8x2xf32>) -> tensor<1x8x4xf32>
  %m = attn.merge_heads %s : (tensor<1x2x8x2xf32>) -> tensor<1x8x4xf32>
  return
}

// CHECK-LABEL: func @optimizer_ops
func.func @optimizer_ops(%p: tensor<4x6xf32>, %g: tensor<4x6xf32>, %b: tensor<6xf32>) {
  // CHECK: attn.param "optimizer.lr" {initial = 1.000000e-03 : f32, state} : tensor<f32>
  %lr = attn.param "optimizer.lr" {state, initial = 1.0e-3 : f32} : tensor<f32>
  %h = arith.constant dense<0.5> : tensor<f32>
  // CHECK: attn.clip_by_global_norm %{{.+}}, %{{.+}} max_norm %{{.+}} : (tensor<4x6xf32>, tensor<6xf32>, tensor<f32>) -> (tensor<4x6xf32>, tensor<6xf32>)
  %c:2 = attn.clip_by_global_norm %g, %b max_norm %h
      : (tensor<4x6xf32>, tensor<6xf32>, tensor<f32>) -> (tensor<4x6xf32>, tensor<6xf32>)
  // CHECK: attn.sgd_update %{{.+}}, %{{.+}} lr %{{.+}} weight_decay %{{.+}} : tensor<4x6xf32>, tensor<f32>
  %n = attn.sgd_update %p, %c#0 lr %lr weight_decay %h : tensor<4x6xf32>, tensor<f32>
  // CHECK: attn.param "adam.step" {state} : tensor<f32>
  %t = attn.param "adam.step" {state} : tensor<f32>
  // CHECK: attn.adam_update %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} step %{{.+}} lr %{{.+}} beta1 %{{.+}} beta2 %{{.+}} epsilon %{{.+}} weight_decay %{{.+}} : tensor<4x6xf32>, tensor<f32>
  %np, %nm, %nv = attn.adam_update %p, %g, %p, %p step %t lr %lr beta1 %h beta2 %h epsilon %h weight_decay %h : tensor<4x6xf32>, tensor<f32>
  // CHECK: attn.assign "w", %{{.+}} : tensor<4x6xf32>
  attn.assign "w", %np : tensor<4x6xf32>
  return
}

// CHECK-LABEL: func @adaptive_span_attention_backward
func.func @adaptive_span_attention_backward(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x16x4xf32>,
    %z: tensor<2xf32>, %n: tensor<1x2x8xf32>) {
  // CHECK: attn.adaptive_span_attention_backward %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {causal = true, max_span = 16 : i64, ramp = 4 : i64}
  %g:4 = attn.adaptive_span_attention_backward %q, %k, %k, %z, %q, %n, %q
      {max_span = 16 : i64, ramp = 4 : i64, causal = true}
      : (tensor<1x2x8x4xf32>, tensor<1x2x16x4xf32>, tensor<1x2x16x4xf32>,
         tensor<2xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32>)
      -> (tensor<1x2x8x4xf32>, tensor<1x2x16x4xf32>, tensor<1x2x16x4xf32>,
          tensor<2xf32>)
  return
}

// CHECK-LABEL: func @relative_attention_backward
func.func @relative_attention_backward(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x16x4xf32>,
    %pos: tensor<2x16x4xf32>, %u: tensor<2x4xf32>, %lse: tensor<1x2x8xf32>) {
  // CHECK: attn.relative_attention_backward %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {clamp_len = 6 : i64, same_length = 8 : i64}
  %g:6 = attn.relative_attention_backward %q, %k, %k, %pos, %u, %u, %q, %lse, %q
      {clamp_len = 6 : i64, same_length = 8 : i64}
      : (tensor<1x2x8x4xf32>, tensor<1x2x16x4xf32>, tensor<1x2x16x4xf32>,
         tensor<2x16x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>,
         tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32>)
      -> (tensor<1x2x8x4xf32>, tensor<1x2x16x4xf32>, tensor<1x2x16x4xf32>,
          tensor<2x16x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return
}

// CHECK-LABEL: func.func @all_reduce
func.func @all_reduce(%loss: tensor<f32>, %g: tensor<4x4xf32>) -> (tensor<f32>, tensor<4x4xf32>) {
  // CHECK: attn.all_reduce mean %{{.+}}, %{{.+}} : tensor<f32>, tensor<4x4xf32>
  %r:2 = attn.all_reduce mean %loss, %g : tensor<f32>, tensor<4x4xf32>
  // CHECK: attn.all_reduce sum %{{.+}} : tensor<4x4xf32>
  %s = attn.all_reduce sum %r#1 : tensor<4x4xf32>
  return %r#0, %s : tensor<f32>, tensor<4x4xf32>
}

// CHECK-LABEL: func.func @exchanges
func.func @exchanges(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  // CHECK: attn.all_to_all %{{.+}} : tensor<2x3x4xf32>
  %a = attn.all_to_all %x : tensor<2x3x4xf32>
  // CHECK: attn.ring_shift %{{.+}} by -2 : tensor<2x3x4xf32>
  %s = attn.ring_shift %a by -2 : tensor<2x3x4xf32>
  // CHECK: attn.rank_slice %{{.+}} : tensor<2x3x4xf32> -> tensor<1x3x4xf32>
  %m = attn.rank_slice %s : tensor<2x3x4xf32> -> tensor<1x3x4xf32>
  // CHECK: attn.rank_pad %{{.+}} : tensor<1x3x4xf32> -> tensor<2x3x4xf32>
  %p = attn.rank_pad %m : tensor<1x3x4xf32> -> tensor<2x3x4xf32>
  return %p : tensor<2x3x4xf32>
}

// Ring attention's merge of partial results and its backward, and the
// attention backward given its logsumexp's gradient.
// CHECK-LABEL: func.func @merge_partials
func.func @merge_partials(%q: tensor<1x2x8x4xf32>, %lse: tensor<1x2x8xf32>,
                          %gate: tensor<1xf32>) -> tensor<1x2x8x4xf32> {
  // CHECK: attn.merge_partials %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} gate %{{.+}} : {{.+}} -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
  %o, %l = attn.merge_partials %q, %lse, %q, %lse gate %gate
      : (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1xf32>)
      -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
  // CHECK: attn.merge_partials %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : {{.+}} -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
  %o2, %l2 = attn.merge_partials %o, %l, %q, %lse
      : (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
      -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
  // CHECK: attn.merge_partials_backward {{.+}} gate %{{.+}} : {{.+}} -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
  %d1, %dl1, %d2, %dl2 = attn.merge_partials_backward %q, %lse, %q, %lse, %o, %l, %o2, %l2 gate %gate
      : (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1xf32>)
      -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
  // CHECK: attn.attention_backward %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {causal = true} :
  %dq, %dk, %dv = attn.attention_backward %q, %q, %q, %o, %lse, %d1, %dl1 {causal = true}
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
      -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>)
  return %dq : tensor<1x2x8x4xf32>
}

// CHECK-LABEL: func.func @ring_attention
func.func @ring_attention(%q: tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> {
  // CHECK: attn.ring_attention %{{.+}}, %{{.+}}, %{{.+}} {causal = true, ranks = 4 : i64} : {{.+}} -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
  %o, %l = attn.ring_attention %q, %q, %q {causal = true, ranks = 4 : i64}
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
  // CHECK: attn.ring_attention_backward {{.+}} {causal = true, ranks = 4 : i64}
  %dq, %dk, %dv = attn.ring_attention_backward %q, %q, %q, %o, %l, %o {causal = true, ranks = 4 : i64}
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32>)
      -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>)
  // CHECK: attn.gate_select %{{.+}}, %{{.+}}, %{{.+}} : tensor<1xf32>, tensor<1x2x8x4xf32>
  %g = arith.constant dense<1.0> : tensor<1xf32>
  %s = attn.gate_select %g, %dq, %dk : tensor<1xf32>, tensor<1x2x8x4xf32>
  return %s : tensor<1x2x8x4xf32>
}

// A ring attention's regions, and a block's attention at its positions in
// the whole sequence (what attn-expand-ring-attention writes).
// CHECK-LABEL: func.func @placed_blocks
func.func @placed_blocks(%q: tensor<1x2x8x4xf32>, %qp: tensor<8xi64>, %kp: tensor<8xi64>) -> tensor<1x2x8x4xf32> {
  // CHECK: attn.ring_attention {{.+}} {ranks = 2 : i64} : {{.+}} mask {
  %r = attn.ring_attention %q, %q, %q {ranks = 2 : i64}
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %near = arith.cmpi ule, %j, %i : index
        attn.yield %near : i1
      }
  // CHECK: attn.attention %{{.+}}, %{{.+}}, %{{.+}} positions(%{{.+}}, %{{.+}}) {causal = true} : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<8xi64>, tensor<8xi64>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>) score {
  %o, %l = attn.attention %q, %q, %r positions(%qp, %kp) {causal = true}
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<8xi64>, tensor<8xi64>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        attn.yield %s : f32
      }
  // CHECK: attn.attention_backward {{.+}} positions(%{{.+}}, %{{.+}}) {causal = true} : {{.+}} score {
  %dq, %dk, %dv = attn.attention_backward %q, %q, %r, %o, %l, %o positions(%qp, %kp) {causal = true}
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32>, tensor<8xi64>, tensor<8xi64>)
      -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>)
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        attn.yield %s : f32
      }
  // CHECK: attn.rank_slice %{{.+}} : tensor<2x8xi64> -> tensor<1x8xi64>
  %table = arith.constant dense<0> : tensor<2x8xi64>
  %mine = attn.rank_slice %table : tensor<2x8xi64> -> tensor<1x8xi64>
  return %dq : tensor<1x2x8x4xf32>
}

// Queries placed at a run-time offset among the keys (ring attention's
// steps): relative attention with as many encodings as the whole sequence
// has distances, adaptive span, and their backwards.
// CHECK-LABEL: func.func @placed_by_offset
func.func @placed_by_offset(%q: tensor<1x2x4x2xf32>, %pos: tensor<2x16x2xf32>, %u: tensor<2x2xf32>, %z: tensor<2xf32>, %at: tensor<i32>) {
  // CHECK: attn.relative_attention %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} query_offset(%{{.+}}) {clamp_len = 10 : i64} : (tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<2x16x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<i32>)
  %o, %l = attn.relative_attention %q, %q, %q, %pos, %u, %u query_offset(%at) {clamp_len = 10 : i64}
      : (tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<2x16x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<i32>) -> (tensor<1x2x4x2xf32>, tensor<1x2x4xf32>)
  // CHECK: attn.relative_attention_backward {{.+}} query_offset(%{{.+}}) {clamp_len = 10 : i64}
  %g:6 = attn.relative_attention_backward %q, %q, %q, %pos, %u, %u, %o, %l, %o query_offset(%at) {clamp_len = 10 : i64}
      : (tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<2x16x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<1x2x4x2xf32>, tensor<1x2x4xf32>, tensor<1x2x4x2xf32>, tensor<i32>)
      -> (tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<2x16x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>)
  // CHECK: attn.adaptive_span_attention %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} query_offset(%{{.+}}) {max_span = 8 : i64, ramp = 2 : i64}
  %s, %n = attn.adaptive_span_attention %q, %q, %q, %z query_offset(%at) {max_span = 8 : i64, ramp = 2 : i64}
      : (tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<2xf32>, tensor<i32>) -> (tensor<1x2x4x2xf32>, tensor<1x2x4xf32>)
  // CHECK: attn.adaptive_span_attention_backward {{.+}} query_offset(%{{.+}}) {max_span = 8 : i64, ramp = 2 : i64}
  %h:4 = attn.adaptive_span_attention_backward %q, %q, %q, %z, %s, %n, %s query_offset(%at) {max_span = 8 : i64, ramp = 2 : i64}
      : (tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<2xf32>, tensor<1x2x4x2xf32>, tensor<1x2x4xf32>, tensor<1x2x4x2xf32>, tensor<i32>)
      -> (tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<2xf32>)
  return
}

// Ring attention with a form: its other operands, attributes and, in the
// backward, their gradients.
// CHECK-LABEL: func.func @ring_attention_form
func.func @ring_attention_form(%q: tensor<1x2x8x4xf32>, %z: tensor<2xf32>) {
  // CHECK: attn.ring_attention %{{.+}}, %{{.+}}, %{{.+}} form_operands(%{{.+}}) {causal = true, form = "attn.adaptive_span_attention", form_attributes = {causal = true, max_span = 8 : i64}, ranks = 2 : i64}
  %o, %l = attn.ring_attention %q, %q, %q form_operands(%z) {causal = true, form = "attn.adaptive_span_attention", form_attributes = {causal = true, max_span = 8 : i64}, ranks = 2 : i64}
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<2xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
  // CHECK: attn.ring_attention_backward {{.+}} form_operands(%{{.+}}) {{.+}} -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<2xf32>)
  %g:4 = attn.ring_attention_backward %q, %q, %q, %o, %l, %o form_operands(%z) {causal = true, form = "attn.adaptive_span_attention", form_attributes = {causal = true, max_span = 8 : i64}, ranks = 2 : i64}
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32>, tensor<2xf32>)
      -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<2xf32>)
  return
}
