// Adaptive span, tiny: a decoder whose attention learns its span per head
// (Sukhbaatar et al. 2019; facebookresearch/adaptive-span) over a memory
// of the previous segment, post-norm residuals, ReLU feed-forward: 2
// layers, d_model 64, 4 heads of 16, d_ff 256, vocab 256, segments of 64
// tokens after memories of 64.
//
// @forward(tokens, mem0, mem1) -> (logits, new_mem0, new_mem1): each
// layer's attention is attn.adaptive_span_attention over [memory; segment]
// with max_span 128 and ramp 16, its z (one per head, "layers.N.attn.span")
// starting at 0 (the ramp alone). @loss adds the span loss,
// 0.0005 * max_span * mean(z) per layer, to the cross-entropy; the train
// step clamps z into [0, 1]. Like transformer-xl-tiny, it trains and runs
// segment by segment (lcc-train --carry=1:2 --carry=2:3; lcc-run
// --segments=N --carry=1:1 --carry=2:2); @cross_entropy is @loss without
// the span loss, to evaluate with (lcc-train --eval-function).
module {
  func.func @forward(%tokens: tensor<1x64xi32>, %mem0: tensor<1x64x64xf32>, %mem1: tensor<1x64x64xf32>)
      -> (tensor<1x64x256xf32>, tensor<1x64x64xf32>, tensor<1x64x64xf32>) {
    %table = attn.param "embed.tokens" : tensor<256x64xf32>
    %h0 = attn.embedding %tokens, %table : (tensor<1x64xi32>, tensor<256x64xf32>) -> tensor<1x64x64xf32>

    // Layer 0: queries from the segment, keys and values from [memory; segment].
    %l0_cat = tensor.concat dim(1) %mem0, %h0 : (tensor<1x64x64xf32>, tensor<1x64x64xf32>) -> tensor<1x128x64xf32>
    %l0_wq = attn.param "layers.0.attn.wq" : tensor<64x64xf32>
    %l0_wk = attn.param "layers.0.attn.wk" : tensor<64x64xf32>
    %l0_wv = attn.param "layers.0.attn.wv" : tensor<64x64xf32>
    %l0_wo = attn.param "layers.0.attn.wo" : tensor<64x64xf32>
    %l0_q = attn.linear %h0, %l0_wq : (tensor<1x64x64xf32>, tensor<64x64xf32>) -> tensor<1x64x64xf32>
    %l0_k = attn.linear %l0_cat, %l0_wk : (tensor<1x128x64xf32>, tensor<64x64xf32>) -> tensor<1x128x64xf32>
    %l0_v = attn.linear %l0_cat, %l0_wv : (tensor<1x128x64xf32>, tensor<64x64xf32>) -> tensor<1x128x64xf32>
    %l0_qh_s = tensor.expand_shape %l0_q [[0], [1], [2, 3]] output_shape [1, 64, 4, 16] : tensor<1x64x64xf32> into tensor<1x64x4x16xf32>
    %l0_qh_e = tensor.empty() : tensor<1x4x64x16xf32>
    %l0_qh = linalg.transpose ins(%l0_qh_s : tensor<1x64x4x16xf32>) outs(%l0_qh_e : tensor<1x4x64x16xf32>) permutation = [0, 2, 1, 3]
    %l0_kh_s = tensor.expand_shape %l0_k [[0], [1], [2, 3]] output_shape [1, 128, 4, 16] : tensor<1x128x64xf32> into tensor<1x128x4x16xf32>
    %l0_kh_e = tensor.empty() : tensor<1x4x128x16xf32>
    %l0_kh = linalg.transpose ins(%l0_kh_s : tensor<1x128x4x16xf32>) outs(%l0_kh_e : tensor<1x4x128x16xf32>) permutation = [0, 2, 1, 3]
    %l0_vh_s = tensor.expand_shape %l0_v [[0], [1], [2, 3]] output_shape [1, 128, 4, 16] : tensor<1x128x64xf32> into tensor<1x128x4x16xf32>
    %l0_vh_e = tensor.empty() : tensor<1x4x128x16xf32>
    %l0_vh = linalg.transpose ins(%l0_vh_s : tensor<1x128x4x16xf32>) outs(%l0_vh_e : tensor<1x4x128x16xf32>) permutation = [0, 2, 1, 3]
    %l0_z = attn.param "layers.0.attn.span" : tensor<4xf32>
    %l0_o = attn.adaptive_span_attention %l0_qh, %l0_kh, %l0_vh, %l0_z {max_span = 128 : i64, ramp = 16 : i64, causal = true}
        : (tensor<1x4x64x16xf32>, tensor<1x4x128x16xf32>, tensor<1x4x128x16xf32>, tensor<4xf32>) -> tensor<1x4x64x16xf32>
    %l0_oe = tensor.empty() : tensor<1x64x4x16xf32>
    %l0_ot = linalg.transpose ins(%l0_o : tensor<1x4x64x16xf32>) outs(%l0_oe : tensor<1x64x4x16xf32>) permutation = [0, 2, 1, 3]
    %l0_m = tensor.collapse_shape %l0_ot [[0], [1], [2, 3]] : tensor<1x64x4x16xf32> into tensor<1x64x64xf32>
    %l0_a = attn.linear %l0_m, %l0_wo : (tensor<1x64x64xf32>, tensor<64x64xf32>) -> tensor<1x64x64xf32>
    %l0_s1 = arith.addf %h0, %l0_a : tensor<1x64x64xf32>
    %l0_g1 = attn.param "layers.0.norm1.gamma" : tensor<64xf32>
    %l0_b1 = attn.param "layers.0.norm1.beta" : tensor<64xf32>
    %l0_n1 = attn.layer_norm %l0_s1, %l0_g1, %l0_b1 : (tensor<1x64x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x64xf32>
    %l0_fw1 = attn.param "layers.0.ff.w1" : tensor<64x256xf32>
    %l0_fb1 = attn.param "layers.0.ff.b1" : tensor<256xf32>
    %l0_fw2 = attn.param "layers.0.ff.w2" : tensor<256x64xf32>
    %l0_fb2 = attn.param "layers.0.ff.b2" : tensor<64xf32>
    %l0_f = attn.feed_forward relu %l0_n1, %l0_fw1, %l0_fb1, %l0_fw2, %l0_fb2
        : (tensor<1x64x64xf32>, tensor<64x256xf32>, tensor<256xf32>, tensor<256x64xf32>, tensor<64xf32>) -> tensor<1x64x64xf32>
    %l0_s2 = arith.addf %l0_n1, %l0_f : tensor<1x64x64xf32>
    %l0_g2 = attn.param "layers.0.norm2.gamma" : tensor<64xf32>
    %l0_b2 = attn.param "layers.0.norm2.beta" : tensor<64xf32>
    %h1 = attn.layer_norm %l0_s2, %l0_g2, %l0_b2 : (tensor<1x64x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x64xf32>

    // Layer 1: queries from the segment, keys and values from [memory; segment].
    %l1_cat = tensor.concat dim(1) %mem1, %h1 : (tensor<1x64x64xf32>, tensor<1x64x64xf32>) -> tensor<1x128x64xf32>
    %l1_wq = attn.param "layers.1.attn.wq" : tensor<64x64xf32>
    %l1_wk = attn.param "layers.1.attn.wk" : tensor<64x64xf32>
    %l1_wv = attn.param "layers.1.attn.wv" : tensor<64x64xf32>
    %l1_wo = attn.param "layers.1.attn.wo" : tensor<64x64xf32>
    %l1_q = attn.linear %h1, %l1_wq : (tensor<1x64x64xf32>, tensor<64x64xf32>) -> tensor<1x64x64xf32>
    %l1_k = attn.linear %l1_cat, %l1_wk : (tensor<1x128x64xf32>, tensor<64x64xf32>) -> tensor<1x128x64xf32>
    %l1_v = attn.linear %l1_cat, %l1_wv : (tensor<1x128x64xf32>, tensor<64x64xf32>) -> tensor<1x128x64xf32>
    %l1_qh_s = tensor.expand_shape %l1_q [[0], [1], [2, 3]] output_shape [1, 64, 4, 16] : tensor<1x64x64xf32> into tensor<1x64x4x16xf32>
    %l1_qh_e = tensor.empty() : tensor<1x4x64x16xf32>
    %l1_qh = linalg.transpose ins(%l1_qh_s : tensor<1x64x4x16xf32>) outs(%l1_qh_e : tensor<1x4x64x16xf32>) permutation = [0, 2, 1, 3]
    %l1_kh_s = tensor.expand_shape %l1_k [[0], [1], [2, 3]] output_shape [1, 128, 4, 16] : tensor<1x128x64xf32> into tensor<1x128x4x16xf32>
    %l1_kh_e = tensor.empty() : tensor<1x4x128x16xf32>
    %l1_kh = linalg.transpose ins(%l1_kh_s : tensor<1x128x4x16xf32>) outs(%l1_kh_e : tensor<1x4x128x16xf32>) permutation = [0, 2, 1, 3]
    %l1_vh_s = tensor.expand_shape %l1_v [[0], [1], [2, 3]] output_shape [1, 128, 4, 16] : tensor<1x128x64xf32> into tensor<1x128x4x16xf32>
    %l1_vh_e = tensor.empty() : tensor<1x4x128x16xf32>
    %l1_vh = linalg.transpose ins(%l1_vh_s : tensor<1x128x4x16xf32>) outs(%l1_vh_e : tensor<1x4x128x16xf32>) permutation = [0, 2, 1, 3]
    %l1_z = attn.param "layers.1.attn.span" : tensor<4xf32>
    %l1_o = attn.adaptive_span_attention %l1_qh, %l1_kh, %l1_vh, %l1_z {max_span = 128 : i64, ramp = 16 : i64, causal = true}
        : (tensor<1x4x64x16xf32>, tensor<1x4x128x16xf32>, tensor<1x4x128x16xf32>, tensor<4xf32>) -> tensor<1x4x64x16xf32>
    %l1_oe = tensor.empty() : tensor<1x64x4x16xf32>
    %l1_ot = linalg.transpose ins(%l1_o : tensor<1x4x64x16xf32>) outs(%l1_oe : tensor<1x64x4x16xf32>) permutation = [0, 2, 1, 3]
    %l1_m = tensor.collapse_shape %l1_ot [[0], [1], [2, 3]] : tensor<1x64x4x16xf32> into tensor<1x64x64xf32>
    %l1_a = attn.linear %l1_m, %l1_wo : (tensor<1x64x64xf32>, tensor<64x64xf32>) -> tensor<1x64x64xf32>
    %l1_s1 = arith.addf %h1, %l1_a : tensor<1x64x64xf32>
    %l1_g1 = attn.param "layers.1.norm1.gamma" : tensor<64xf32>
    %l1_b1 = attn.param "layers.1.norm1.beta" : tensor<64xf32>
    %l1_n1 = attn.layer_norm %l1_s1, %l1_g1, %l1_b1 : (tensor<1x64x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x64xf32>
    %l1_fw1 = attn.param "layers.1.ff.w1" : tensor<64x256xf32>
    %l1_fb1 = attn.param "layers.1.ff.b1" : tensor<256xf32>
    %l1_fw2 = attn.param "layers.1.ff.w2" : tensor<256x64xf32>
    %l1_fb2 = attn.param "layers.1.ff.b2" : tensor<64xf32>
    %l1_f = attn.feed_forward relu %l1_n1, %l1_fw1, %l1_fb1, %l1_fw2, %l1_fb2
        : (tensor<1x64x64xf32>, tensor<64x256xf32>, tensor<256xf32>, tensor<256x64xf32>, tensor<64xf32>) -> tensor<1x64x64xf32>
    %l1_s2 = arith.addf %l1_n1, %l1_f : tensor<1x64x64xf32>
    %l1_g2 = attn.param "layers.1.norm2.gamma" : tensor<64xf32>
    %l1_b2 = attn.param "layers.1.norm2.beta" : tensor<64xf32>
    %h2 = attn.layer_norm %l1_s2, %l1_g2, %l1_b2 : (tensor<1x64x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x64xf32>

    %head = attn.param "lm_head" : tensor<64x256xf32>
    %logits = attn.linear %h2, %head : (tensor<1x64x64xf32>, tensor<64x256xf32>) -> tensor<1x64x256xf32>
    return %logits, %h0, %h1 : tensor<1x64x256xf32>, tensor<1x64x64xf32>, tensor<1x64x64xf32>
  }

  // One segment's loss and the span loss, and the memories for the next:
  // lcc-train carries results 1 and 2 into arguments 2 and 3 (--carry=1:2
  // --carry=2:3). The memories are arguments, so gradients stop there.
  func.func @loss(%tokens: tensor<1x64xi32>, %labels: tensor<1x64xi32>,
                  %mem0: tensor<1x64x64xf32>, %mem1: tensor<1x64x64xf32>)
      -> (tensor<f32>, tensor<1x64x64xf32>, tensor<1x64x64xf32>) {
    %logits, %new0, %new1 = call @forward(%tokens, %mem0, %mem1)
        : (tensor<1x64xi32>, tensor<1x64x64xf32>, tensor<1x64x64xf32>)
        -> (tensor<1x64x256xf32>, tensor<1x64x64xf32>, tensor<1x64x64xf32>)
    %ce = attn.softmax_cross_entropy %logits, %labels
        : (tensor<1x64x256xf32>, tensor<1x64xi32>) -> tensor<f32>
    // 0.0005 * 128 * mean(z) per layer: each z [1, 4] times a column of
    // 0.0005 * 128 / 4.
    %weight = arith.constant dense<0.016> : tensor<4x1xf32>
    %z0 = attn.param "layers.0.attn.span" : tensor<4xf32>
    %z0r = tensor.expand_shape %z0 [[0, 1]] output_shape [1, 4] : tensor<4xf32> into tensor<1x4xf32>
    %s0 = attn.linear %z0r, %weight : (tensor<1x4xf32>, tensor<4x1xf32>) -> tensor<1x1xf32>
    %s0c = tensor.collapse_shape %s0 [] : tensor<1x1xf32> into tensor<f32>
    %z1 = attn.param "layers.1.attn.span" : tensor<4xf32>
    %z1r = tensor.expand_shape %z1 [[0, 1]] output_shape [1, 4] : tensor<4xf32> into tensor<1x4xf32>
    %s1 = attn.linear %z1r, %weight : (tensor<1x4xf32>, tensor<4x1xf32>) -> tensor<1x1xf32>
    %s1c = tensor.collapse_shape %s1 [] : tensor<1x1xf32> into tensor<f32>
    %spans = arith.addf %s0c, %s1c : tensor<f32>
    %l = arith.addf %ce, %spans : tensor<f32>
    return %l, %new0, %new1 : tensor<f32>, tensor<1x64x64xf32>, tensor<1x64x64xf32>
  }

  // The cross-entropy alone, for evaluation (lcc-train
  // --eval-function=cross_entropy): bits per byte without the span loss.
  func.func @cross_entropy(%tokens: tensor<1x64xi32>, %labels: tensor<1x64xi32>,
                           %mem0: tensor<1x64x64xf32>, %mem1: tensor<1x64x64xf32>)
      -> (tensor<f32>, tensor<1x64x64xf32>, tensor<1x64x64xf32>) {
    %logits, %new0, %new1 = call @forward(%tokens, %mem0, %mem1)
        : (tensor<1x64xi32>, tensor<1x64x64xf32>, tensor<1x64x64xf32>)
        -> (tensor<1x64x256xf32>, tensor<1x64x64xf32>, tensor<1x64x64xf32>)
    %ce = attn.softmax_cross_entropy %logits, %labels
        : (tensor<1x64x256xf32>, tensor<1x64xi32>) -> tensor<f32>
    return %ce, %new0, %new1 : tensor<f32>, tensor<1x64x64xf32>, tensor<1x64x64xf32>
  }
}
