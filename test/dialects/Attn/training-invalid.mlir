// Every verifier error of the train step's ops, one function per case.
// RUN: lcc-opt %s --split-input-file --verify-diagnostics

func.func @logsumexp_shape(%q: tensor<1x2x8x4xf32>) {
  // expected-error@+1 {{'attn.attention' op expected logsumexp of shape [1, 2, 8], got [1, 2, 4]}}
  %o, %l = attn.attention %q, %q, %q : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x4xf32>)
  return
}

// -----

func.func @backward_shared_key_grad(%q: tensor<1x2x8x4xf32>, %l: tensor<1x2x8xf32>) {
  // expected-error@+1 {{'attn.attention_backward' op expected no key_grad result with 'shared_qk' (the key gradient is part of query_grad)}}
  %a, %b, %c = attn.attention_backward %q, %q, %q, %q, %l, %q {shared_qk}
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32>)
      -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>)
  return
}

// -----

func.func @backward_grad_type(%q: tensor<1x2x8x4xf32>, %l: tensor<1x2x8xf32>, %d: tensor<1x2x8x2xf32>) {
  // expected-error@+1 {{'attn.attention_backward' op expected result_grad of the type of result 'tensor<1x2x8x4xf32>', got 'tensor<1x2x8x2xf32>'}}
  %a, %b, %c = attn.attention_backward %q, %q, %q, %q, %l, %d
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x2xf32>)
      -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>)
  return
}

// -----

func.func @linear_backward_weight(%x: tensor<1x8x4xf32>, %w: tensor<4x6xf32>, %dy: tensor<1x8x5xf32>) {
  // expected-error@+1 {{'attn.linear_backward' op expected result_grad of shape [1, 8, 6], got [1, 8, 5]}}
  %a, %b = attn.linear_backward %x, %w, %dy : (tensor<1x8x4xf32>, tensor<4x6xf32>, tensor<1x8x5xf32>) -> (tensor<1x8x4xf32>, tensor<4x6xf32>)
  return
}

// -----

func.func @split_heads_divisible(%x: tensor<1x8x6xf32>) {
  // expected-error@+1 {{'attn.split_heads' op expected input features (6) to be a multiple of 'heads' (4)}}
  %s = attn.split_heads %x {heads = 4 : i64} : (tensor<1x8x6xf32>) -> tensor<1x4x8x1xf32>
  return
}

// -----

func.func @cross_entropy_weights(%y: tensor<1x8x6xf32>, %l: tensor<1x8xi32>, %w: tensor<1x6xf32>) {
  // expected-error@+1 {{'attn.softmax_cross_entropy' op expected weights of shape [1, 8], got [1, 6]}}
  %0 = attn.softmax_cross_entropy %y, %l, %w : (tensor<1x8x6xf32>, tensor<1x8xi32>, tensor<1x6xf32>) -> tensor<f32>
  return
}

// -----

func.func @sgd_lr(%p: tensor<4xf32>, %lr: tensor<1xf32>) {
  // expected-error@+1 {{'attn.sgd_update' op expected lr of shape [], got [1]}}
  %0 = attn.sgd_update %p, %p lr %lr weight_decay %lr : tensor<4xf32>, tensor<1xf32>
  return
}

// -----

func.func @adam_step(%p: tensor<4xf32>, %t: tensor<1xf32>) {
  // expected-error@+1 {{'attn.adam_update' op expected step of shape [], got [1]}}
  %a, %b, %c = attn.adam_update %p, %p, %p, %p step %t lr %t beta1 %t beta2 %t epsilon %t weight_decay %t : tensor<4xf32>, tensor<1xf32>
  return
}

// -----

func.func @adam_hyper_types(%p: tensor<4xf32>, %t: tensor<f32>, %b: tensor<1xf32>) {
  // expected-error@+1 {{'attn.adam_update' op failed to verify that all of {step, lr, beta1, beta2, epsilon, weight_decay} have same type}}
  %a, %b2, %c = "attn.adam_update"(%p, %p, %p, %p, %t, %t, %b, %t, %t, %t) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<f32>, tensor<1xf32>, tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @clip_types(%g: tensor<4xf32>, %m: tensor<f32>) {
  // expected-error@+1 {{'attn.clip_by_global_norm' op expected one result of each gradient's type}}
  %c = attn.clip_by_global_norm %g max_norm %m : (tensor<4xf32>, tensor<f32>) -> tensor<5xf32>
  return
}

// -----

func.func @clip_max_norm(%g: tensor<4xf32>, %m: tensor<2xf32>) {
  // expected-error@+1 {{'attn.clip_by_global_norm' op expected max_norm of shape [], got [2]}}
  %c = attn.clip_by_global_norm %g max_norm %m : (tensor<4xf32>, tensor<2xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @initial_weight() {
  // expected-error@+1 {{'attn.param' op parameter 'w' has an initial value but is not state: a weight's values come from a weights file}}
  %w = attn.param "w" {initial = 1.0 : f32} : tensor<f32>
  return
}

// -----

func.func @lsh_backward_grad(%q: tensor<1x2x8x4xf32>, %d: tensor<1x2x8x2xf32>) {
  // expected-error@+1 {{'attn.lsh_attention_backward' op expected result_grad of the type of result 'tensor<1x2x8x4xf32>', got 'tensor<1x2x8x2xf32>'}}
  %a, %b = attn.lsh_attention_backward %q, %q, %q, %d {n_hashes = 1 : i64, bucket_size = 4 : i64}
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x2xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>)
  return
}

// -----

func.func @routed_backward_grad(%q: tensor<1x2x8x4xf32>, %d: tensor<1x2x8x2xf32>) {
  // expected-error@+1 {{'attn.routed_attention_backward' op expected key_grad of the type of key 'tensor<1x2x8x4xf32>', got 'tensor<1x2x8x2xf32>'}}
  %a, %b, %c = attn.routed_attention_backward %q, %q, %q, %q {clusters = 2 : i64, window = 4 : i64}
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>)
      -> (tensor<1x2x8x4xf32>, tensor<1x2x8x2xf32>, tensor<1x2x8x4xf32>)
  return
}

// -----

func.func @routed_backward_window(%q: tensor<1x2x8x4xf32>) {
  // expected-error@+1 {{'attn.routed_attention_backward' op expected 'window' <= key seq (8), got 9}}
  %a, %b, %c = attn.routed_attention_backward %q, %q, %q, %q {clusters = 2 : i64, window = 9 : i64}
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>)
      -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>)
  return
}

// -----

func.func @centroid_update_decay(%c: tensor<2x3x4xf32>, %q: tensor<1x2x8x4xf32>) {
  // expected-error@+1 {{'attn.routed_centroid_update' op expected decay in [0, 1], got 1.5}}
  %n = attn.routed_centroid_update %c, %q, %q {decay = 1.5 : f32}
      : (tensor<2x3x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<2x3x4xf32>
  return
}

// -----

func.func @centroid_update_heads(%c: tensor<3x3x4xf32>, %q: tensor<1x2x8x4xf32>) {
  // expected-error@+1 {{'attn.routed_centroid_update' op expected centroids of shape [2, 3, 4], got [3, 3, 4]}}
  %n = attn.routed_centroid_update %c, %q, %q {decay = 0.5 : f32}
      : (tensor<3x3x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<3x3x4xf32>
  return
}

// -----

func.func @relative_backward_pos_grad(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x16x4xf32>,
    %pos: tensor<2x16x4xf32>, %u: tensor<2x4xf32>, %lse: tensor<1x2x8xf32>) {
  // expected-error@+1 {{'attn.relative_attention_backward' op expected pos_grad of the type of pos 'tensor<2x16x4xf32>', got 'tensor<2x8x4xf32>'}}
  %g:6 = attn.relative_attention_backward %q, %k, %k, %pos, %u, %u, %q, %lse, %q
      : (tensor<1x2x8x4xf32>, tensor<1x2x16x4xf32>, tensor<1x2x16x4xf32>,
         tensor<2x16x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>,
         tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32>)
      -> (tensor<1x2x8x4xf32>, tensor<1x2x16x4xf32>, tensor<1x2x16x4xf32>,
          tensor<2x8x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @relative_backward_logsumexp(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x16x4xf32>,
    %pos: tensor<2x16x4xf32>, %u: tensor<2x4xf32>, %lse: tensor<1x2x16xf32>) {
  // expected-error@+1 {{'attn.relative_attention_backward' op expected logsumexp of shape [1, 2, 8], got [1, 2, 16]}}
  %g:6 = attn.relative_attention_backward %q, %k, %k, %pos, %u, %u, %q, %lse, %q
      : (tensor<1x2x8x4xf32>, tensor<1x2x16x4xf32>, tensor<1x2x16x4xf32>,
         tensor<2x16x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>,
         tensor<1x2x8x4xf32>, tensor<1x2x16xf32>, tensor<1x2x8x4xf32>)
      -> (tensor<1x2x8x4xf32>, tensor<1x2x16x4xf32>, tensor<1x2x16x4xf32>,
          tensor<2x16x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @adaptive_span_backward_z_grad(%q: tensor<1x2x8x4xf32>, %z: tensor<2xf32>, %n: tensor<1x2x8xf32>) {
  // expected-error@+1 {{'attn.adaptive_span_attention_backward' op expected z_grad of the type of z 'tensor<2xf32>', got 'tensor<1x2xf32>'}}
  %g:4 = attn.adaptive_span_attention_backward %q, %q, %q, %z, %q, %n, %q {max_span = 8 : i64}
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>,
         tensor<2xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32>)
      -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>,
          tensor<1x2xf32>)
  return
}

// -----

func.func @feed_forward_output_without_bias(%x: tensor<1x8x4xf32>, %w1: tensor<4x16xf32>, %b1: tensor<16xf32>, %w2: tensor<16x4xf32>) {
  // expected-error @+1 {{has an output result but no down_bias (with_output)}}
  %a, %b, %c, %d, %e, %f = attn.feed_forward_backward gelu %x, %w1, %b1, %w2, %x
      : (tensor<1x8x4xf32>, tensor<4x16xf32>, tensor<16xf32>, tensor<16x4xf32>, tensor<1x8x4xf32>)
      -> (tensor<1x8x4xf32>, tensor<4x16xf32>, tensor<16xf32>, tensor<16x4xf32>, tensor<4xf32>, tensor<1x8x4xf32>)
  return
}

// -----

func.func @feed_forward_output_of_another_type(%x: tensor<1x8x4xf32>, %w1: tensor<4x16xf32>, %b1: tensor<16xf32>, %w2: tensor<16x4xf32>, %b2: tensor<4xf32>) {
  // expected-error @+1 {{expected the output of the input's type 'tensor<1x8x4xf32>', got 'tensor<1x4x4xf32>'}}
  %a, %b, %c, %d, %e, %f = attn.feed_forward_backward gelu %x, %w1, %b1, %w2, %x with_output %b2
      : (tensor<1x8x4xf32>, tensor<4x16xf32>, tensor<16xf32>, tensor<16x4xf32>, tensor<1x8x4xf32>, tensor<4xf32>)
      -> (tensor<1x8x4xf32>, tensor<4x16xf32>, tensor<16xf32>, tensor<16x4xf32>, tensor<4xf32>, tensor<1x4x4xf32>)
  return
}

// -----

func.func @all_reduce_of_nothing() {
  // expected-error@+1 {{'attn.all_reduce' op expected at least one tensor to reduce}}
  "attn.all_reduce"() {reduction = 0 : i32} : () -> ()
  return
}

// -----

func.func @all_reduce_of_integers(%x: tensor<4xi32>) {
  // expected-error@+1 {{operand #0 must be variadic of ranked tensor of 32-bit float values}}
  %r = attn.all_reduce sum %x : tensor<4xi32>
  return
}

// -----

func.func @all_reduce_unknown_reduction(%x: tensor<4xf32>) {
  // expected-error@+1 {{enum values for attribute 'reduction' [sum, mean]}}
  %r = attn.all_reduce max %x : tensor<4xf32>
  return
}

// -----

func.func @all_to_all_of_a_scalar(%x: tensor<f32>) {
  // expected-error@+1 {{'attn.all_to_all' op expected a leading dimension of one block per rank, got a scalar}}
  %r = attn.all_to_all %x : tensor<f32>
  return
}

// -----

func.func @all_to_all_dynamic(%x: tensor<?x4xf32>) {
  // expected-error@+1 {{'attn.all_to_all' op expected a statically shaped tensor, got 'tensor<?x4xf32>'}}
  %r = attn.all_to_all %x : tensor<?x4xf32>
  return
}

// -----

func.func @ring_shift_changes_type(%x: tensor<4xf32>) {
  // expected-error@+1 {{'attn.ring_shift' op requires the same type for all operands and results}}
  %r = "attn.ring_shift"(%x) {offset = 1 : i64} : (tensor<4xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @ring_shift_without_offset(%x: tensor<4xf32>) {
  // expected-error@+1 {{custom op 'attn.ring_shift' expected 'by'}}
  %r = attn.ring_shift %x : tensor<4xf32>
  return
}

// -----

func.func @rank_slice_of_another_shape(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{'attn.rank_slice' op expected 'tensor<1x4xf32>' to be one leading-dimension block of 'tensor<2x3xf32>'}}
  %r = attn.rank_slice %x : tensor<2x3xf32> -> tensor<1x4xf32>
  return
}

// -----

func.func @rank_pad_of_two_blocks(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{'attn.rank_pad' op expected 'tensor<2x3xf32>' to be one leading-dimension block of 'tensor<4x3xf32>'}}
  %r = attn.rank_pad %x : tensor<2x3xf32> -> tensor<4x3xf32>
  return
}

// -----

func.func @merge_partials_of_two_shapes(%a: tensor<1x2x8x4xf32>, %b: tensor<1x2x4x4xf32>,
                                        %la: tensor<1x2x8xf32>, %lb: tensor<1x2x4xf32>) {
  // expected-error@+1 {{'attn.merge_partials' op expected second of shape [1, 2, 8, 4], got [1, 2, 4, 4]}}
  %o, %l = attn.merge_partials %a, %la, %b, %lb
      : (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4xf32>)
      -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
  return
}

// -----

func.func @merge_partials_gate_of_two(%a: tensor<1x2x8x4xf32>, %la: tensor<1x2x8xf32>,
                                      %gate: tensor<2xf32>) {
  // expected-error@+1 {{'attn.merge_partials' op expected gate of shape [1], got [2]}}
  %o, %l = attn.merge_partials %a, %la, %a, %la gate %gate
      : (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<2xf32>)
      -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
  return
}

// -----

func.func @merge_partials_result_of_another_type(%a: tensor<1x2x8x4xf32>, %la: tensor<1x2x8xf32>) {
  // expected-error@+1 {{'attn.merge_partials' op expected 'tensor<1x2x8xf32>' like first_logsumexp, got 'tensor<1x2x4xf32>'}}
  %o, %l = attn.merge_partials %a, %la, %a, %la
      : (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
      -> (tensor<1x2x8x4xf32>, tensor<1x2x4xf32>)
  return
}

// -----

func.func @attention_backward_lse_grad_shape(%q: tensor<1x2x8x4xf32>, %lse: tensor<1x2x8xf32>,
                                             %dl: tensor<1x2x4xf32>) {
  // expected-error@+1 {{'attn.attention_backward' op expected logsumexp_grad of the type of logsumexp 'tensor<1x2x8xf32>', got 'tensor<1x2x4xf32>'}}
  %dq, %dk, %dv = attn.attention_backward %q, %q, %q, %q, %lse, %q, %dl
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32>, tensor<1x2x4xf32>)
      -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>)
  return
}

// -----

func.func @ring_attention_odd_share(%q: tensor<1x2x5x4xf32>) {
  // expected-error@+1 {{'attn.ring_attention' op expected a share of two equal chunks of positions, got 5 positions}}
  %o = attn.ring_attention %q, %q, %q {ranks = 2 : i64}
      : (tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>) -> tensor<1x2x5x4xf32>
  return
}

// -----

func.func @gate_select_gate_of_two(%g: tensor<2xf32>, %x: tensor<4xf32>) {
  // expected-error@+1 {{'attn.gate_select' op expected gate of shape [1], got [2]}}
  %s = attn.gate_select %g, %x, %x : tensor<2xf32>, tensor<4xf32>
  return
}

// -----

func.func @positions_of_queries_only(%q: tensor<1x2x8x4xf32>, %p: tensor<8xi64>) {
  // expected-error@+1 {{'attn.attention' op expected positions of the queries and of the keys (two tensors), got 1}}
  %o = attn.attention %q, %q, %q positions(%p) {causal = true}
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<8xi64>) -> tensor<1x2x8x4xf32>
  return
}

// -----

func.func @positions_read_by_nothing(%q: tensor<1x2x8x4xf32>, %p: tensor<8xi64>) {
  // expected-error@+1 {{'attn.attention' op expected a mask or score region or 'causal' to read the positions (they change nothing else)}}
  %o = attn.attention %q, %q, %q positions(%p, %p)
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<8xi64>, tensor<8xi64>) -> tensor<1x2x8x4xf32>
  return
}

// -----

func.func @positions_of_other_keys(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x6x4xf32>, %p: tensor<8xi64>) {
  // expected-error@+1 {{'attn.attention' op expected key positions of shape [6], got [8]}}
  %o = attn.attention %q, %k, %k positions(%p, %p) {causal = true}
      : (tensor<1x2x8x4xf32>, tensor<1x2x6x4xf32>, tensor<1x2x6x4xf32>, tensor<8xi64>, tensor<8xi64>) -> tensor<1x2x8x4xf32>
  return
}

// -----

func.func @positions_with_shared_qk(%q: tensor<1x2x8x4xf32>, %l: tensor<1x2x8xf32>, %p: tensor<8xi64>) {
  // expected-error@+1 {{'attn.attention_backward' op expected no positions with 'shared_qk' (a token's own score is found by its index)}}
  %dq, %dv = attn.attention_backward %q, %q, %q, %q, %l, %q positions(%p, %p) {causal = true, shared_qk}
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32>, tensor<8xi64>, tensor<8xi64>)
      -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>)
  return
}

// -----

func.func @rank_slice_changes_type(%t: tensor<2x8xi64>) {
  // expected-error@+1 {{'attn.rank_slice' op expected 'tensor<1x8xf32>' to be one leading-dimension block of 'tensor<2x8xi64>'}}
  %mine = attn.rank_slice %t : tensor<2x8xi64> -> tensor<1x8xf32>
  return
}

// -----

func.func @ring_attention_unknown_form(%q: tensor<1x2x8x4xf32>) {
  // expected-error@+1 {{'attn.ring_attention' op expected form to name an attention form with a backward op, got 'attn.linear'}}
  %o = attn.ring_attention %q, %q, %q {form = "attn.linear", form_attributes = {}, ranks = 2 : i64}
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  return
}

// -----

func.func @ring_attention_form_operands_without_form(%q: tensor<1x2x8x4xf32>, %z: tensor<2xf32>) {
  // expected-error@+1 {{'attn.ring_attention' op expected form operands and form attributes only with a form}}
  %o = attn.ring_attention %q, %q, %q form_operands(%z) {ranks = 2 : i64}
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<2xf32>) -> tensor<1x2x8x4xf32>
  return
}

// -----

func.func @ring_attention_backward_form_grads(%q: tensor<1x2x8x4xf32>, %l: tensor<1x2x8xf32>, %z: tensor<2xf32>) {
  // expected-error@+1 {{'attn.ring_attention_backward' op expected each gradient of its value's type, got 'tensor<3xf32>' for 'tensor<2xf32>'}}
  %g:4 = attn.ring_attention_backward %q, %q, %q, %q, %l, %q form_operands(%z) {form = "attn.adaptive_span_attention", form_attributes = {max_span = 8 : i64}, ranks = 2 : i64}
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8xf32>, tensor<1x2x8x4xf32>, tensor<2xf32>)
      -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<3xf32>)
  return
}

// -----

func.func @relative_offset_no_encodings(%q: tensor<1x2x4x2xf32>, %pos: tensor<2x0x2xf32>, %u: tensor<2x2xf32>, %at: tensor<i32>) {
  // expected-error@+1 {{'attn.relative_attention' op expected pos to hold at least one encoding}}
  %o = attn.relative_attention %q, %q, %q, %pos, %u, %u query_offset(%at)
      : (tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<2x0x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<i32>) -> tensor<1x2x4x2xf32>
  return
}
