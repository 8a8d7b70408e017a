// RUN: lcc-opt %s --split-input-file --attn-lower-to-linalg="query-tile=32 key-tile=16" --verify-diagnostics | FileCheck %s

// Dense causal attention takes the flash form: a forall over (batch, heads,
// query tiles), a loop over key tiles that stops at the last visible tile,
// and only 32 x 16 blocks of scores. Seq 100 is padded to the tiles.
// CHECK-LABEL: func @causal_attention
// CHECK-SAME: (%[[Q:.+]]: tensor<1x2x100x16xf32>, %[[K:.+]]: tensor<1x2x100x16xf32>, %[[V:.+]]: tensor<1x2x100x8xf32>)
// CHECK-DAG: %[[C32:.+]] = arith.constant 32 : index
// CHECK-DAG: %[[C16:.+]] = arith.constant 16 : index
// CHECK-DAG: %[[C7:.+]] = arith.constant 7 : index
// CHECK-DAG: %[[C100:.+]] = arith.constant 100 : index
// CHECK-DAG: %[[NEG_INF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[QP:.+]] = tensor.pad %[[Q]] low[0, 0, 0, 0] high[0, 0, 28, 0]
// CHECK: %[[KP:.+]] = tensor.pad %[[K]] low[0, 0, 0, 0] high[0, 0, 12, 0]
// CHECK: %[[VP:.+]] = tensor.pad %[[V]] low[0, 0, 0, 0] high[0, 0, 12, 0]
// CHECK: %[[OUT:.+]] = scf.forall (%[[B:.+]], %[[H:.+]], %[[T:.+]]) in (1, 2, 4) shared_outs(%{{.+}} = %{{.+}}) -> (tensor<1x2x128x8xf32>)
// CHECK: %[[QOFF:.+]] = arith.muli %[[T]], %[[C32]]
// CHECK: tensor.extract_slice %[[QP]][%[[B]], %[[H]], %[[QOFF]], 0] [1, 1, 32, 16] [1, 1, 1, 1] : tensor<1x2x128x16xf32> to tensor<32x16xf32>
// The query tile scaled and transposed once, [head_dim, queries]: no key
// tile is ever transposed.
// CHECK: linalg.generic {{.*}} outs(%{{.+}} : tensor<16x32xf32>)
// CHECK: %[[END:.+]] = arith.addi %[[QOFF]], %[[C32]]
// CHECK: %[[TILES:.+]] = arith.ceildivsi %[[END]], %[[C16]]
// CHECK: %[[LAST:.+]] = arith.minsi %[[TILES]], %[[C7]]
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[LAST]] step %{{.+}} iter_args(%{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) -> (tensor<32xf32>, tensor<32xf32>, tensor<32x8xf32>)
// CHECK: tensor.extract_slice %[[KP]]{{.*}} to tensor<16x16xf32>
// CHECK: tensor.extract_slice %[[VP]]{{.*}} to tensor<16x8xf32>
// Scores keys by queries; the softmax's maxima and sums run down the
// columns.
// CHECK: %[[DOTS:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]{{.*}} outs(%{{.+}} : tensor<16x32xf32>)
// A tile with no padded and no later key is not masked: only the scores
// branch, the rest of the step is one body.
// CHECK: %[[SCORES:.+]] = scf.if %{{.+}} -> (tensor<16x32xf32>) {
// CHECK-NEXT: scf.yield %[[DOTS]]
// CHECK-NEXT: } else {
// Padded keys and future keys are masked.
// CHECK: arith.cmpi sge, %{{.+}}, %[[C100]]
// CHECK: arith.cmpi sgt
// CHECK: arith.select %{{.+}}, %[[NEG_INF]]
// CHECK: %[[BLOCK_MAX:.+]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]{{.*}} ins(%[[SCORES]]
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.cmpf ogt
// The state is updated in place (outs are the loop's iteration arguments),
// and one pass over the scores takes their exponentials and column sums.
// CHECK: %[[MAX:.+]] = linalg.generic {{.*}} ins(%[[BLOCK_MAX]] : tensor<32xf32>) outs(%[[MAX_ARG:.+]] : tensor<32xf32>)
// CHECK: %[[SUM:.+]] = linalg.generic {{.*}} outs(%[[SUM_ARG:.+]] : tensor<32xf32>)
// CHECK: %[[PROBS:.+]]:2 = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%[[MAX]] : tensor<32xf32>) outs(%[[SCORES]], %[[SUM]] : tensor<16x32xf32>, tensor<32xf32>)
// CHECK: math.exp
// CHECK: %[[RESCALED:.+]] = linalg.generic {{.*}} outs(%[[ACC_ARG:.+]] : tensor<32x8xf32>)
// CHECK: %[[ACC:.+]] = linalg.generic {{.*}} ins(%[[PROBS]]#0, %{{.+}} : tensor<16x32xf32>, tensor<16x8xf32>) outs(%[[RESCALED]] : tensor<32x8xf32>)
// CHECK: scf.yield %[[MAX]], %[[PROBS]]#1, %[[ACC]] : tensor<32xf32>, tensor<32xf32>, tensor<32x8xf32>
// CHECK: arith.divf
// CHECK: scf.forall.in_parallel
// CHECK: tensor.parallel_insert_slice {{.*}} [1, 1, 32, 8] [1, 1, 1, 1] : tensor<32x8xf32> into tensor<1x2x128x8xf32>
// CHECK: %[[R:.+]] = tensor.extract_slice %[[OUT]][0, 0, 0, 0] [1, 2, 100, 8] [1, 1, 1, 1]
// CHECK: return %[[R]]
// CHECK-NOT: tensor<1x2x100x100xf32>
func.func @causal_attention(%q: tensor<1x2x100x16xf32>, %k: tensor<1x2x100x16xf32>,
                            %v: tensor<1x2x100x8xf32>) -> tensor<1x2x100x8xf32> {
  %0 = attn.attention %q, %k, %v {causal = true}
      : (tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32>, tensor<1x2x100x8xf32>)
      -> tensor<1x2x100x8xf32>
  return %0 : tensor<1x2x100x8xf32>
}

// -----

// Non-causal attention walks every key tile; a multiple of the tiles needs
// no padding.
// CHECK-LABEL: func @attention_without_padding
// CHECK-NOT: tensor.pad
// CHECK: %[[C4:.+]] = arith.constant 4 : index
// CHECK: scf.forall (%{{.+}}, %{{.+}}, %{{.+}}) in (2, 1, 2)
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[C4]]
// CHECK-NOT: arith.cmpi sgt
// CHECK: scf.forall.in_parallel
// CHECK-NOT: tensor.extract_slice
// CHECK: return
func.func @attention_without_padding(%q: tensor<2x1x64x16xf32>, %v: tensor<2x1x64x16xf32>)
    -> tensor<2x1x64x16xf32> {
  %0 = attn.attention %q, %v, %v {scale = 0.5 : f32}
      : (tensor<2x1x64x16xf32>, tensor<2x1x64x16xf32>, tensor<2x1x64x16xf32>)
      -> tensor<2x1x64x16xf32>
  return %0 : tensor<2x1x64x16xf32>
}

// -----

// Shared-QK: keys are the queries divided by their L2 norm, and a token's
// score with itself is replaced by -1e5.
// CHECK-LABEL: func @shared_qk_attention
// CHECK-DAG: %[[SELF:.+]] = arith.constant -1.000000e+05 : f32
// CHECK: math.rsqrt
// CHECK: scf.forall
// CHECK: %[[EQ:.+]] = arith.cmpi eq
// CHECK: arith.select %[[EQ]], %[[SELF]]
func.func @shared_qk_attention(%qk: tensor<1x1x32x16xf32>, %v: tensor<1x1x32x16xf32>)
    -> tensor<1x1x32x16xf32> {
  %0 = attn.attention %qk, %qk, %v {causal = true, shared_qk}
      : (tensor<1x1x32x16xf32>, tensor<1x1x32x16xf32>, tensor<1x1x32x16xf32>)
      -> tensor<1x1x32x16xf32>
  return %0 : tensor<1x1x32x16xf32>
}

// -----

// Params become function arguments named by `attn.param`; one argument per
// name. Embedding reads the table with clamped ids; linear starts from the
// broadcast bias.
// CHECK-LABEL: func @params_embedding_linear
// Token ids that are a function input carry the range the runtime checks;
// each param says how a fresh weights file initialises it.
// CHECK-SAME: (%[[TOK:[^:]+]]: tensor<1x8xi32> {attn.valid_range = array<i64: 0, 15>},
// CHECK-SAME: %[[TABLE:[^:]+]]: tensor<16x4xf32> {attn.param = "embed", attn.param_init = "normal", attn.param_scale = 2.500000e-01 : f32},
// CHECK-SAME: %[[W:[^:]+]]: tensor<4x2xf32> {attn.param = "proj.w", attn.param_init = "normal", attn.param_scale = 5.000000e-01 : f32},
// CHECK-SAME: %[[BIAS:[^:]+]]: tensor<2xf32> {attn.param = "proj.b", attn.param_init = "zeros", attn.param_scale = 2.000000e-02 : f32})
// CHECK-NOT: attn.param "
// CHECK: %[[X:.+]] = linalg.generic {{.*}} ins(%[[TOK]] : tensor<1x8xi32>)
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: tensor.extract %[[TABLE]]
// CHECK: %[[INIT:.+]] = linalg.generic {{.*}} ins(%[[BIAS]] : tensor<2xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%[[X]], %[[W]] : tensor<1x8x4xf32>, tensor<4x2xf32>) outs(%[[INIT]] : tensor<1x8x2xf32>)
// CHECK: arith.mulf %{{.+}}, %{{.+}} fastmath<reassoc,contract>
func.func @params_embedding_linear(%tokens: tensor<1x8xi32>) -> tensor<1x8x2xf32> {
  %table = attn.param "embed" : tensor<16x4xf32>
  %x = attn.embedding %tokens, %table : (tensor<1x8xi32>, tensor<16x4xf32>) -> tensor<1x8x4xf32>
  %w = attn.param "proj.w" : tensor<4x2xf32>
  %b = attn.param "proj.b" : tensor<2xf32>
  %w2 = attn.param "proj.w" : tensor<4x2xf32>
  %y = attn.linear %x, %w2, %b : (tensor<1x8x4xf32>, tensor<4x2xf32>, tensor<2xf32>) -> tensor<1x8x2xf32>
  return %y : tensor<1x8x2xf32>
}

// -----

// Layer norm: row sum, mean, centred sum of squares, then one normalising
// map with gamma and beta.
// CHECK-LABEL: func @layer_norm
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: arith.subf
// CHECK: linalg.generic
// CHECK: math.rsqrt
func.func @layer_norm(%x: tensor<1x8x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<1x8x4xf32> {
  %0 = attn.layer_norm %x, %g, %b : (tensor<1x8x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x8x4xf32>
  return %0 : tensor<1x8x4xf32>
}

// -----

// The head split and merge are part of the projections: the weights are
// viewed as [d_model, heads, head_dim] and [heads, v_dim, d_model], and the
// body is inlined between them. No transpose is materialised.
// CHECK-LABEL: func @multi_head_attention
// CHECK-NOT: linalg.transpose
// CHECK: tensor.expand_shape %{{.+}} {{\[\[}}0], [1, 2]] output_shape [16, 2, 8] : tensor<16x16xf32> into tensor<16x2x8xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]{{.*}} outs(%{{.+}} : tensor<1x2x8x8xf32>)
// CHECK: scf.forall
// CHECK: tensor.expand_shape %{{.+}} {{\[\[}}0, 1], [2]] output_shape [2, 8, 16] : tensor<16x16xf32> into tensor<2x8x16xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel"]{{.*}} outs(%{{.+}} : tensor<1x8x16xf32>)
// CHECK-NOT: attn.
func.func @multi_head_attention(%x: tensor<1x8x16xf32>, %w: tensor<16x16xf32>) -> tensor<1x8x16xf32> {
  %0 = attn.multi_head_attention %x, query %w, value %w, output %w {heads = 2 : i64}
      : (tensor<1x8x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<1x8x16xf32> {
  ^bb0(%qk: tensor<1x2x8x8xf32>, %v: tensor<1x2x8x8xf32>):
    %o = attn.attention %qk, %qk, %v {shared_qk}
        : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
    attn.yield %o : tensor<1x2x8x8xf32>
  }
  return %0 : tensor<1x8x16xf32>
}

// -----

// A chunked feed-forward computes the 10 positions as 3 full chunks of 3
// rows and a tail of 1 row, one after another, on the [positions, d_model]
// view; GELU is the erf form.
// CHECK-LABEL: func @chunked_feed_forward
// CHECK-NOT: scf.for
// CHECK: %[[ROWS:.+]] = tensor.collapse_shape %{{.+}} {{\[\[}}0, 1], [2]] : tensor<1x10x4xf32> into tensor<10x4xf32>
// CHECK: tensor.extract_slice %[[ROWS]][0, 0] [3, 4] [1, 1]
// CHECK: math.erf
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[0, 0] [3, 4] [1, 1]
// CHECK: tensor.extract_slice %[[ROWS]][3, 0] [3, 4] [1, 1]
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[3, 0] [3, 4] [1, 1]
// CHECK: tensor.extract_slice %[[ROWS]][6, 0] [3, 4] [1, 1]
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[6, 0] [3, 4] [1, 1]
// CHECK: tensor.extract_slice %[[ROWS]][9, 0] [1, 4] [1, 1]
// CHECK: %[[OUT:.+]] = tensor.insert_slice %{{.+}} into %{{.+}}[9, 0] [1, 4] [1, 1]
// CHECK: tensor.expand_shape %[[OUT]] {{\[\[}}0, 1], [2]] output_shape [1, 10, 4] : tensor<10x4xf32> into tensor<1x10x4xf32>
func.func @chunked_feed_forward(%x: tensor<1x10x4xf32>, %w1: tensor<4x8xf32>, %b1: tensor<8xf32>,
                                %w2: tensor<8x4xf32>, %b2: tensor<4xf32>) -> tensor<1x10x4xf32> {
  %0 = attn.feed_forward gelu %x, %w1, %b1, %w2, %b2 {chunks = 4 : i64}
      : (tensor<1x10x4xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<8x4xf32>, tensor<4xf32>) -> tensor<1x10x4xf32>
  return %0 : tensor<1x10x4xf32>
}

// -----

// Residual and reversible blocks are inlined: y1 = x1 + F(x2),
// y2 = x2 + G(y1).
// CHECK-LABEL: func @reversible
// CHECK-SAME: (%[[X1:[^:]+]]: tensor<1x8x4xf32>, %[[X2:[^:]+]]: tensor<1x8x4xf32>, %[[G:[^:]+]]: tensor<4xf32>)
// CHECK: %[[F:.+]] = linalg.generic {{.*}} ins(%[[X2]], %{{.+}}, %{{.+}}, %[[G]], %[[G]] :
// CHECK: %[[Y1:.+]] = linalg.generic {{.*}} ins(%[[X1]], %[[F]] :
// CHECK: %[[GOUT:.+]] = linalg.generic {{.*}} ins(%[[Y1]], %{{.+}}, %{{.+}}, %[[G]], %[[G]] :
// CHECK: %[[Y2:.+]] = linalg.generic {{.*}} ins(%[[X2]], %[[GOUT]] :
// CHECK: return %[[Y1]], %[[Y2]]
func.func @reversible(%x1: tensor<1x8x4xf32>, %x2: tensor<1x8x4xf32>, %g: tensor<4xf32>)
    -> (tensor<1x8x4xf32>, tensor<1x8x4xf32>) {
  %y:2 = attn.reversible %x1, %x2 : tensor<1x8x4xf32>, tensor<1x8x4xf32> f {
  ^bb0(%a: tensor<1x8x4xf32>):
    %n = attn.layer_norm %a, %g, %g : (tensor<1x8x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x8x4xf32>
    attn.yield %n : tensor<1x8x4xf32>
  } g {
  ^bb0(%a: tensor<1x8x4xf32>):
    %n = attn.layer_norm %a, %g, %g : (tensor<1x8x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x8x4xf32>
    attn.yield %n : tensor<1x8x4xf32>
  }
  return %y#0, %y#1 : tensor<1x8x4xf32>, tensor<1x8x4xf32>
}

// -----

// Cross-entropy: row max, sum of shifted exps, per-position loss reading
// the (clamped) label's logit, then the mean into a 0-d tensor: the 6
// positions summed in blocks of 2, then the 3 blocks' sums.
// CHECK-LABEL: func @softmax_cross_entropy
// CHECK-DAG: arith.constant 0.166666672 : f32
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: tensor.extract %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}] : tensor<2x3x5xf32>
// CHECK: math.log
// CHECK: tensor.collapse_shape %{{.+}} {{\[\[}}0, 1]] : tensor<2x3xf32> into tensor<6xf32>
// CHECK: tensor.expand_shape %{{.+}} {{\[\[}}0, 1]] output_shape [3, 2] : tensor<6xf32> into tensor<3x2xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]{{.*}} outs(%{{.+}} : tensor<3xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]{{.*}} outs(%{{.+}} : tensor<f32>)
func.func @softmax_cross_entropy(%l: tensor<2x3x5xf32>, %t: tensor<2x3xi32>) -> tensor<f32> {
  %0 = attn.softmax_cross_entropy %l, %t : (tensor<2x3x5xf32>, tensor<2x3xi32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Sparse attention is masked attention: the pattern becomes a mask region,
// whose block table (computed at compile time) the flash form of `block`
// tiles reads. Fixed, stride 64 (over twice the block: whole tiles hide),
// summary 8, tiles of 16: a window's own tiles see every key (2,
// unmasked); of the other windows only the tile that holds their summary
// columns is visited (1), the rest skipped (0).
// CHECK-LABEL: func @sparse_fixed_masked
// CHECK: %[[TABLE:.+]] = arith.constant dense<{{\[}}[2, 2, 2, 2, 0, 0, 0, 1], [2, 2, 2, 2, 0, 0, 0, 1], [2, 2, 2, 2, 0, 0, 0, 1], [2, 2, 2, 2, 0, 0, 0, 1], [0, 0, 0, 1, 2, 2, 2, 2], [0, 0, 0, 1, 2, 2, 2, 2], [0, 0, 0, 1, 2, 2, 2, 2], [0, 0, 0, 1, 2, 2, 2, 2]]> : tensor<8x8xi8>
// CHECK: scf.forall (%{{.+}}, %{{.+}}, %{{.+}}) in (1, 1, 8)
// CHECK: scf.for
// CHECK: tensor.extract %[[TABLE]]
// CHECK: %[[R:.+]]:3 = scf.if %{{.+}} -> (tensor<16xf32>, tensor<16xf32>, tensor<16x8xf32>)
// CHECK: arith.remsi
// CHECK: } else {
// CHECK: scf.yield %{{.+}}, %{{.+}}, %{{.+}} : tensor<16xf32>, tensor<16xf32>, tensor<16x8xf32>
// CHECK: scf.yield %[[R]]#0, %[[R]]#1, %[[R]]#2
func.func @sparse_fixed_masked(%q: tensor<1x1x128x8xf32>) -> tensor<1x1x128x8xf32> {
  // expected-remark@+1 {{mask visits 40 of 64 (query, key) tile pairs (62.5%), 32 of them unmasked}}
  %0 = attn.sparse_attention fixed %q, %q, %q {block = 16 : i64, stride = 64 : i64, summary = 8 : i64}
      : (tensor<1x1x128x8xf32>, tensor<1x1x128x8xf32>, tensor<1x1x128x8xf32>) -> tensor<1x1x128x8xf32>
  return %0 : tensor<1x1x128x8xf32>
}

// -----

// A stride that puts a visible key in every tile splits the pattern into
// two parts over keys that fill whole tiles, each flash attention with its
// logsumexp, combined by them. Strided, stride 32: the band |i - j| < 32
// (tiles within two of the diagonal), and each residue mod 32 as a head of
// its own (positions [128] as 32 heads of 4 rows: expand, swap, collapse),
// whose column is the whole head less the query itself; its result and
// logsumexp are put back in position order.
// CHECK-LABEL: func @sparse_strided_parts
// CHECK: arith.constant dense<{{\[}}[2, 2, 1, 0, 0, 0, 0, 0], [2, 2, 2, 1, 0, 0, 0, 0], [1, 2, 2, 2, 1, 0, 0, 0], [0, 1, 2, 2, 2, 1, 0, 0], [0, 0, 1, 2, 2, 2, 1, 0], [0, 0, 0, 1, 2, 2, 2, 1], [0, 0, 0, 0, 1, 2, 2, 2], [0, 0, 0, 0, 0, 1, 2, 2]]> : tensor<8x8xi8>
// CHECK: %[[BAND:.+]]:2 = scf.forall (%{{.+}}, %{{.+}}, %{{.+}}) in (1, 1, 8) {{.+}} -> (tensor<1x1x128x8xf32>, tensor<1x1x128xf32>)
// CHECK: tensor.expand_shape %{{.+}} {{\[\[}}0], [1], [2, 3], [4]] output_shape [1, 1, 4, 32, 8]
// CHECK: tensor.collapse_shape %{{.+}} {{\[\[}}0], [1, 2], [3], [4]] : tensor<1x1x32x4x8xf32> into tensor<1x32x4x8xf32>
// CHECK: %[[COLUMNS:.+]]:2 = scf.forall (%{{.+}}, %{{.+}}, %{{.+}}) in (1, 32, 1) {{.+}} -> (tensor<1x32x4x8xf32>, tensor<1x32x4xf32>)
// CHECK: %[[OUT:.+]] = tensor.collapse_shape %{{.+}} {{\[\[}}0], [1], [2, 3], [4]] : tensor<1x1x4x32x8xf32> into tensor<1x1x128x8xf32>
// CHECK: %[[LSE:.+]] = tensor.collapse_shape %{{.+}} {{\[\[}}0], [1], [2, 3]] : tensor<1x1x4x32xf32> into tensor<1x1x128xf32>
// CHECK: linalg.generic {{.+}} ins(%[[BAND]]#0, %[[OUT]], %[[BAND]]#1, %[[LSE]] : {{.+}})
// CHECK: arith.divf
// CHECK: } -> tensor<1x1x128x8xf32>
func.func @sparse_strided_parts(%q: tensor<1x1x128x8xf32>) -> tensor<1x1x128x8xf32> {
  // expected-remark@+3 {{mask visits 34 of 64 (query, key) tile pairs (53.1%), 22 of them unmasked}}
  // expected-remark@+2 {{columns gathered: each residue mod 32 attended as a head of its own beside the band}}
  // expected-remark@+1 {{mask visits 1 of 1 (query, key) tile pairs (100.0%), 0 of them unmasked}}
  %0 = attn.sparse_attention strided %q, %q, %q {block = 16 : i64, stride = 32 : i64}
      : (tensor<1x1x128x8xf32>, tensor<1x1x128x8xf32>, tensor<1x1x128x8xf32>) -> tensor<1x1x128x8xf32>
  return %0 : tensor<1x1x128x8xf32>
}

// -----

// Fixed, stride 32 (at most twice the block), summary 8: each window's own
// keys (a block-diagonal table), and the last 8 keys of every window
// gathered ([1, 1, 4, 32, 8] sliced at 24, copied, collapsed to 32 keys),
// attended with the windows' own summary keys hidden.
// CHECK-LABEL: func @sparse_fixed_parts
// CHECK-DAG: arith.constant dense<{{\[}}[2, 2, 0, 0, 0, 0, 0, 0], [2, 2, 0, 0, 0, 0, 0, 0], [0, 0, 2, 2, 0, 0, 0, 0], [0, 0, 2, 2, 0, 0, 0, 0], [0, 0, 0, 0, 2, 2, 0, 0], [0, 0, 0, 0, 2, 2, 0, 0], [0, 0, 0, 0, 0, 0, 2, 2], [0, 0, 0, 0, 0, 0, 2, 2]]> : tensor<8x8xi8>
// CHECK: %[[WINDOW:.+]]:2 = scf.forall (%{{.+}}, %{{.+}}, %{{.+}}) in (1, 1, 8) {{.+}} -> (tensor<1x1x128x8xf32>, tensor<1x1x128xf32>)
// CHECK: %[[SPLIT:.+]] = tensor.expand_shape %{{.+}} {{\[\[}}0], [1], [2, 3], [4]] output_shape [1, 1, 4, 32, 8]
// CHECK: tensor.extract_slice %[[SPLIT]][0, 0, 0, 24, 0] [1, 1, 4, 8, 8] [1, 1, 1, 1, 1]
// CHECK: tensor.collapse_shape %{{.+}} {{\[\[}}0], [1], [2, 3], [4]] : tensor<1x1x4x8x8xf32> into tensor<1x1x32x8xf32>
// CHECK: %[[SUMMARY:.+]]:2 = scf.forall (%{{.+}}, %{{.+}}, %{{.+}}) in (1, 1, 8) {{.+}} -> (tensor<1x1x128x8xf32>, tensor<1x1x128xf32>)
// CHECK: linalg.generic {{.+}} ins(%[[WINDOW]]#0, %[[SUMMARY]]#0, %[[WINDOW]]#1, %[[SUMMARY]]#1 : {{.+}})
func.func @sparse_fixed_parts(%q: tensor<1x1x128x8xf32>) -> tensor<1x1x128x8xf32> {
  // expected-remark@+3 {{mask visits 16 of 64 (query, key) tile pairs (25.0%), 16 of them unmasked}}
  // expected-remark@+2 {{summary columns gathered: 8 of every 32 keys, attended beside each window's own}}
  // expected-remark@+1 {{mask visits 16 of 16 (query, key) tile pairs (100.0%), 8 of them unmasked}}
  %0 = attn.sparse_attention fixed %q, %q, %q {block = 16 : i64, stride = 32 : i64, summary = 8 : i64}
      : (tensor<1x1x128x8xf32>, tensor<1x1x128x8xf32>, tensor<1x1x128x8xf32>) -> tensor<1x1x128x8xf32>
  return %0 : tensor<1x1x128x8xf32>
}

// -----

// LSH attention: hash (argmax over the projections onto the compile-time
// rotations), stable counting sort per (row, round), chunked attention with
// look-back over gathered rows (a workgroup per group of chunks, here both
// chunks, which gathers each row once and attends chunk by chunk; the chunk
// before a round's first is the previous round's last, its round and place
// a division and remainder of the chunks' global index), then one combine
// that undoes the sort and weights the rounds by their logsumexp.
// CHECK-LABEL: func @lsh
// CHECK: %[[ROT:.+]] = arith.constant dense<{{.+}}> : tensor<8x2x1xf32>
// CHECK: %[[BUCKETS:.+]] = scf.forall (%{{.+}}, %{{.+}}, %{{.+}}) in (1, 2, 2) shared_outs(%{{.+}}) -> (tensor<1x2x8xi32>)
// CHECK: tensor.extract_slice %[[ROT]]
// CHECK: %[[SORTED:.+]]:2 = scf.forall (%{{.+}}, %{{.+}}) in (1, 2) shared_outs(%{{.+}}, %{{.+}}) -> (tensor<1x2x8xi32>, tensor<1x2x8xi32>)
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for
// CHECK: %[[ROUNDS:.+]]:2 = scf.forall (%{{.+}}, %{{.+}}, %{{.+}}) in (1, 2, 1) shared_outs(%{{.+}}, %{{.+}}) -> (tensor<1x2x8x8xf32>, tensor<1x2x8xf32>)
// CHECK: arith.remui
// CHECK: arith.divui
// CHECK: scf.for %{{.+}} = %c0 to %c8 step %c4 iter_args(%{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) -> (tensor<8x8xf32>, tensor<8xf32>)
// CHECK: math.log
// CHECK: linalg.generic
// CHECK: tensor.extract %[[SORTED]]#1
// CHECK: tensor.expand_shape
func.func @lsh(%qk: tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32> {
  %0 = attn.lsh_attention %qk, %qk {n_hashes = 2 : i64, bucket_size = 4 : i64, causal = true}
      : (tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32>
  return %0 : tensor<1x1x8x8xf32>
}

// -----

// Routed attention: k-means centroids from seeded keys (when none are
// given), each query's nearest centroid, each cluster's window of keys by
// bisection, queries sorted by cluster, tiles attending cluster by cluster,
// and an inverse gather.
// CHECK-LABEL: func @routed_attention
// CHECK: arith.constant dense<{{.+}}> : tensor<2xi32>
// CHECK: scf.forall (%{{.+}}) in (1) shared_outs(%{{.+}}) -> (tensor<1x2x8xf32>)
// CHECK: %[[WINDOWS:.+]] = scf.forall (%{{.+}}, %{{.+}}) in (1, 2) shared_outs(%{{.+}}) -> (tensor<1x2x8xi32>)
// CHECK: arith.extf
// CHECK: scf.forall (%{{.+}}) in (1) shared_outs(%{{.+}}, %{{.+}}) -> (tensor<1x64xi32>, tensor<1x64xi32>)
// CHECK: scf.forall (%{{.+}}, %{{.+}}) in (1, 1) shared_outs(%{{.+}}) -> (tensor<1x64x8xf32>)
// CHECK: scf.for
// CHECK: tensor.extract %[[WINDOWS]]
// CHECK: tensor.expand_shape
func.func @routed_attention(%q: tensor<1x1x64x8xf32>) -> tensor<1x1x64x8xf32> {
  %0 = attn.routed_attention %q, %q, %q {clusters = 2 : i64, window = 8 : i64}
      : (tensor<1x1x64x8xf32>, tensor<1x1x64x8xf32>, tensor<1x1x64x8xf32>) -> tensor<1x1x64x8xf32>
  return %0 : tensor<1x1x64x8xf32>
}

// -----

// One name, two types: an error naming the parameter.
func.func @param_type_conflict() -> (tensor<4xf32>, tensor<8xf32>) {
  %0 = attn.param "w" : tensor<4xf32>
  // expected-error@+1 {{'attn.param' op parameter 'w' has type 'tensor<8xf32>' here but 'tensor<4xf32>' elsewhere}}
  %1 = attn.param "w" : tensor<8xf32>
  return %0, %1 : tensor<4xf32>, tensor<8xf32>
}

// -----

// LSH attention's backward recomputes its chunks' attention, marked
// lcc.recomputed so that CSE keeps it apart from the forward's (whose
// rounds would otherwise live on to the backward). The backward of a
// reversible block's recomputed clone (lcc.backward_of_recomputed) reads
// no forward value: its chunk attention is left unmarked, for CSE to share
// with the clone's; with row chunks it stays marked (every chunk's rounds
// would live on at once).
// CHECK-LABEL: func.func @lsh_backward_recomputes
// CHECK: lcc.recomputed
// CHECK-LABEL: func.func @lsh_backward_of_recomputed
// CHECK-NOT: lcc.recomputed
// CHECK-LABEL: func.func @lsh_backward_of_recomputed_row_chunks
// CHECK: lcc.recomputed
func.func @lsh_backward_recomputes(%q: tensor<1x2x8x4xf32>, %o: tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> {
  %lq, %lv = attn.lsh_attention_backward %q, %q, %o, %o {n_hashes = 2 : i64, bucket_size = 4 : i64, causal = true, seed = 3 : i64}
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>)
  return %lq : tensor<1x2x8x4xf32>
}
func.func @lsh_backward_of_recomputed(%q: tensor<1x2x8x4xf32>, %o: tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> {
  %lq, %lv = attn.lsh_attention_backward %q, %q, %o, %o {n_hashes = 2 : i64, bucket_size = 4 : i64, causal = true, seed = 3 : i64, lcc.backward_of_recomputed}
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>)
  return %lq : tensor<1x2x8x4xf32>
}
func.func @lsh_backward_of_recomputed_row_chunks(%q: tensor<1x2x8x4xf32>, %o: tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> {
  %lq, %lv = attn.lsh_attention_backward %q, %q, %o, %o {n_hashes = 2 : i64, bucket_size = 4 : i64, causal = true, seed = 3 : i64, chunks = 2 : i64, lcc.backward_of_recomputed}
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>)
  return %lq : tensor<1x2x8x4xf32>
}
