// RUN: lcc-opt %s --attn-expand-ring-attention | FileCheck %s

// Causal ring attention over 2 ranks on zigzag shares (rank r holds
// chunks r and 3 - r of 4): the rank's queries attend its own keys
// causally; then, with the keys and values of the rank before it (passed
// on around the ring), the late query chunk attends the early key chunk
// on every rank, and one more chunk pair chosen by the rank (early with
// early where the block's rank comes first: rank 1; late with late
// otherwise: rank 0) is merged into the query chunk the gates say.
// CHECK-LABEL: func.func @causal(
// CHECK-SAME: %[[Q:[^:]+]]: tensor<1x2x4x2xf32>, %[[K:[^:]+]]: tensor<1x2x4x2xf32>, %[[V:[^:]+]]: tensor<1x2x4x2xf32>
// The next block's shift comes before the current block's attention, so
// that its transfer runs behind it.
// CHECK: %[[K1:.+]] = attn.ring_shift %[[K]] by 1 : tensor<1x2x4x2xf32>
// CHECK: %[[V1:.+]] = attn.ring_shift %[[V]] by 1 : tensor<1x2x4x2xf32>
// CHECK: %[[O0:.+]], %[[L0:.+]] = attn.attention %[[Q]], %[[K]], %[[V]] {causal = true} : {{.+}} -> (tensor<1x2x4x2xf32>, tensor<1x2x4xf32>)
// CHECK: attn.attention {{.+}} : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2xf32>)
// CHECK: attn.merge_partials
// CHECK: %[[FIRSTS:.+]] = arith.constant dense<[0.000000e+00, 1.000000e+00]> : tensor<2xf32>
// CHECK: %[[FIRST:.+]] = attn.rank_slice %[[FIRSTS]] : tensor<2xf32> -> tensor<1xf32>
// CHECK: %[[QP:.+]] = attn.gate_select %[[FIRST]], {{.+}} : tensor<1xf32>, tensor<1x2x2x2xf32>
// CHECK: %[[KP:.+]] = attn.gate_select %[[FIRST]], {{.+}} : tensor<1xf32>, tensor<1x2x2x2xf32>
// CHECK: %[[VP:.+]] = attn.gate_select %[[FIRST]], {{.+}} : tensor<1xf32>, tensor<1x2x2x2xf32>
// CHECK: %[[OP:.+]], %[[LP:.+]] = attn.attention %[[QP]], %[[KP]], %[[VP]] :
// CHECK: %[[EARLY:.+]], %{{.+}} = attn.merge_partials %{{.+}}, %{{.+}}, %[[OP]], %[[LP]] gate %[[FIRST]]
// CHECK: %[[LATERS:.+]] = arith.constant dense<[1.000000e+00, 0.000000e+00]> : tensor<2xf32>
// CHECK: %[[LATER:.+]] = attn.rank_slice %[[LATERS]] : tensor<2xf32> -> tensor<1xf32>
// CHECK: %[[LATE:.+]], %{{.+}} = attn.merge_partials %{{.+}}, %{{.+}}, %[[OP]], %[[LP]] gate %[[LATER]]
// CHECK: %[[O:.+]] = tensor.concat dim(2) %[[EARLY]], %[[LATE]]
// CHECK: return %[[O]]
func.func @causal(%q: tensor<1x2x4x2xf32>, %k: tensor<1x2x4x2xf32>, %v: tensor<1x2x4x2xf32>) -> tensor<1x2x4x2xf32> {
  %o = attn.ring_attention %q, %k, %v {causal = true, ranks = 2 : i64}
      : (tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>) -> tensor<1x2x4x2xf32>
  return %o : tensor<1x2x4x2xf32>
}

// The backward over 3 ranks keeps no block of the forward: it passes the
// keys and values the other way (by -1: rank r + 1's block, the forward's
// step 2, then rank r + 2's, its step 1), runs each block's flash backward
// with the whole sequence's result and logsumexp, and sends each block's
// key and value gradients back to its rank (2 ranks back, then 1).
// CHECK-LABEL: func.func @backward(
// CHECK-SAME: %[[Q:[^:]+]]: tensor<1x2x4x2xf32>, %[[K:[^:]+]]: tensor<1x2x4x2xf32>, %[[V:[^:]+]]: tensor<1x2x4x2xf32>, %[[O:[^:]+]]: tensor<1x2x4x2xf32>, %[[L:[^:]+]]: tensor<1x2x4xf32>, %[[DO:[^:]+]]: tensor<1x2x4x2xf32>
// CHECK: %[[K2:.+]] = attn.ring_shift %[[K]] by -1
// CHECK: %[[V2:.+]] = attn.ring_shift %[[V]] by -1
// CHECK: %[[DQ0:.+]], %[[DK0:.+]], %[[DV0:.+]] = attn.attention_backward %[[Q]], %[[K]], %[[V]], %[[O]], %[[L]], %[[DO]] :
// CHECK: %[[K1:.+]] = attn.ring_shift %[[K2]] by -1
// CHECK: %[[V1:.+]] = attn.ring_shift %[[V2]] by -1
// CHECK: %[[DQ2:.+]], %[[DK2:.+]], %[[DV2:.+]] = attn.attention_backward %[[Q]], %[[K2]], %[[V2]], %[[O]], %[[L]], %[[DO]] :
// CHECK: arith.addf %[[DQ0]], %[[DQ2]]
// CHECK: %[[BACK2:.+]] = attn.ring_shift %[[DK2]] by -2
// CHECK: arith.addf %[[DK0]], %[[BACK2]]
// CHECK: attn.ring_shift %[[DV2]] by -2
// CHECK: %{{.+}}, %[[DK1:.+]], %[[DV1:.+]] = attn.attention_backward %[[Q]], %[[K1]], %[[V1]], %[[O]], %[[L]], %[[DO]] :
// CHECK: attn.ring_shift %[[DK1]] by -1
// CHECK: attn.ring_shift %[[DV1]] by -1
// CHECK-NOT: attn.ring_shift
// CHECK: return
func.func @backward(%q: tensor<1x2x4x2xf32>, %k: tensor<1x2x4x2xf32>, %v: tensor<1x2x4x2xf32>,
                    %o: tensor<1x2x4x2xf32>, %l: tensor<1x2x4xf32>, %do: tensor<1x2x4x2xf32>)
    -> (tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>) {
  %dq, %dk, %dv = attn.ring_attention_backward %q, %k, %v, %o, %l, %do {ranks = 3 : i64}
      : (tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<1x2x4xf32>, tensor<1x2x4x2xf32>)
      -> (tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>)
  return %dq, %dk, %dv : tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>
}

// With a mask region, every step is one attention at its positions: rank
// r's queries sit at chunks r and 3 - r of 4 (positions [0, 1, 6, 7] on
// rank 0, [2, 3, 4, 5] on rank 1), the keys of step 1 at the other rank's;
// the region is copied into each step, and causality compares the
// positions too.
// CHECK-LABEL: func.func @masked(
// CHECK-SAME: %[[Q:[^:]+]]: tensor<1x2x4x2xf32>, %[[K:[^:]+]]: tensor<1x2x4x2xf32>, %[[V:[^:]+]]: tensor<1x2x4x2xf32>
// CHECK: %[[K1:.+]] = attn.ring_shift %[[K]] by 1
// CHECK: %[[V1:.+]] = attn.ring_shift %[[V]] by 1
// CHECK: %[[MINE:.+]] = arith.constant dense<{{\[}}[0, 1, 6, 7], [2, 3, 4, 5]]> : tensor<2x4xi64>
// CHECK: %[[QS:.+]] = attn.rank_slice %[[MINE]] : tensor<2x4xi64> -> tensor<1x4xi64>
// CHECK: %[[QP:.+]] = tensor.collapse_shape %[[QS]]
// CHECK: %[[O0:.+]], %[[L0:.+]] = attn.attention %[[Q]], %[[K]], %[[V]] positions(%[[QP]], %{{.+}}) {causal = true}
// CHECK-SAME: mask {
// CHECK: arith.constant 3 : index
// CHECK: %[[OTHER:.+]] = arith.constant dense<{{\[}}[2, 3, 4, 5], [0, 1, 6, 7]]> : tensor<2x4xi64>
// CHECK: attn.rank_slice %[[OTHER]]
// CHECK: %[[O1:.+]], %[[L1:.+]] = attn.attention %[[Q]], %[[K1]], %[[V1]] positions(%[[QP]], %{{.+}}) {causal = true}
// CHECK-SAME: mask {
// CHECK: attn.merge_partials %[[O0]], %[[L0]], %[[O1]], %[[L1]]
func.func @masked(%q: tensor<1x2x4x2xf32>, %k: tensor<1x2x4x2xf32>, %v: tensor<1x2x4x2xf32>) -> tensor<1x2x4x2xf32> {
  %o = attn.ring_attention %q, %k, %v {causal = true, ranks = 2 : i64}
      : (tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>) -> tensor<1x2x4x2xf32>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %d = arith.subi %i, %j : index
        %w = arith.constant 3 : index
        %near = arith.cmpi ult, %d, %w : index
        attn.yield %near : i1
      }
  return %o : tensor<1x2x4x2xf32>
}

// Relative attention around 2 ranks (rank r holds chunks r and 3 - r of 4,
// two positions each): every step attends the pairs of a query chunk and a
// key chunk that causality lets meet (not early queries with late keys,
// which come after every early chunk), each relative attention with its
// queries placed at the chunks' distance (a constant per rank cut to this
// rank's; negative where the keys come after the queries, whose tiles
// causality skips), merged into the query chunk's result. Step 0, the
// rank's own block: late queries sit 6 positions after early keys on rank
// 0 (chunks 3 and 0), 2 on rank 1 (chunks 2 and 1).
// CHECK-LABEL: func.func @relative(
// CHECK-SAME: %[[Q:[^:]+]]: tensor<1x2x4x2xf32>, %{{[^:]+}}: tensor<1x2x4x2xf32>, %{{[^:]+}}: tensor<1x2x4x2xf32>, %[[POS:[^:]+]]: tensor<2x8x2xf32>, %[[U:[^:]+]]: tensor<2x2xf32>, %[[W:[^:]+]]: tensor<2x2xf32>
// CHECK: attn.ring_shift
// CHECK: %[[SAME:.+]] = arith.constant dense<0> : tensor<2xi32>
// CHECK: %[[MINE:.+]] = attn.rank_slice %[[SAME]] : tensor<2xi32> -> tensor<1xi32>
// CHECK: %[[AT:.+]] = tensor.collapse_shape %[[MINE]] [] : tensor<1xi32> into tensor<i32>
// CHECK: attn.relative_attention {{.+}}, %[[POS]], %[[U]], %[[W]] query_offset(%[[AT]]) {clamp_len = 3 : i64} : {{.+}} -> (tensor<1x2x2x2xf32>, tensor<1x2x2xf32>)
// CHECK-NOT: dense<[-6, -2]>
// CHECK: arith.constant dense<[6, 2]> : tensor<2xi32>
// CHECK: arith.constant dense<0> : tensor<2xi32>
// CHECK: attn.relative_attention
// CHECK: attn.merge_partials
// Step 1, the block of the rank before.
// CHECK: arith.constant dense<[-2, 2]> : tensor<2xi32>
// CHECK-NOT: dense<-4>
// CHECK: arith.constant dense<4> : tensor<2xi32>
// CHECK: arith.constant dense<[2, -2]> : tensor<2xi32>
// CHECK-COUNT-6: attn.relative_attention_backward {{.+}} query_offset(
// CHECK-NOT: attn.relative_attention_backward
// The form operands' gradients: this rank's part, summed over the pairs.
// CHECK: return {{.+}} : tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<2x8x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
func.func @relative(%q: tensor<1x2x4x2xf32>, %k: tensor<1x2x4x2xf32>, %v: tensor<1x2x4x2xf32>, %pos: tensor<2x8x2xf32>, %u: tensor<2x2xf32>, %w: tensor<2x2xf32>, %do: tensor<1x2x4x2xf32>)
    -> (tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<2x8x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
  %o, %l = attn.ring_attention %q, %k, %v form_operands(%pos, %u, %w) {causal = true, form = "attn.relative_attention", form_attributes = {clamp_len = 3 : i64}, ranks = 2 : i64}
      : (tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<2x8x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) -> (tensor<1x2x4x2xf32>, tensor<1x2x4xf32>)
  %dq, %dk, %dv, %dpos, %du, %dw = attn.ring_attention_backward %q, %k, %v, %o, %l, %do form_operands(%pos, %u, %w) {causal = true, form = "attn.relative_attention", form_attributes = {clamp_len = 3 : i64}, ranks = 2 : i64}
      : (tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<1x2x4xf32>, tensor<1x2x4x2xf32>, tensor<2x8x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>)
      -> (tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<2x8x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>)
  return %dq, %dk, %dv, %dpos, %du, %dw : tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>, tensor<2x8x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
}
