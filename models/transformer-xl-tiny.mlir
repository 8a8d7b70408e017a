// Transformer-XL, tiny: kimiyoung/transformer-xl's decoder (relative
// attention over a memory of the previous segment, post-norm residuals,
// ReLU feed-forward) with 2 layers, d_model 64, 4 heads of 16, d_ff 256,
// vocab 256, segments of 64 tokens after memories of 64.
//
// @forward(tokens, mem0, mem1) -> (logits, new_mem0, new_mem1): a layer's
// memory is its input of the previous segment (mem_len = segment length),
// so its new memory is its input now. The encodings of distances 0..127 are
// attn.sinusoidal_encoding, projected per layer (r_net) and split into heads.
// A long text runs segment by segment with
//   lcc-run transformer-xl-tiny.lcm --segments=N --carry=1:1 --carry=2:2
// (the first memories zeros; docs/user-guide.md).
module {
  func.func @forward(%tokens: tensor<1x64xi32>, %mem0: tensor<1x64x64xf32>, %mem1: tensor<1x64x64xf32>)
      -> (tensor<1x64x256xf32>, tensor<1x64x64xf32>, tensor<1x64x64xf32>) {
    %table = attn.param "embed.tokens" : tensor<256x64xf32>
    %h0 = attn.embedding %tokens, %table : (tensor<1x64xi32>, tensor<256x64xf32>) -> tensor<1x64x64xf32>
    %enc = attn.sinusoidal_encoding : tensor<128x64xf32>
    %r = tensor.expand_shape %enc [[0, 1], [2]] output_shape [1, 128, 64] : tensor<128x64xf32> into tensor<1x128x64xf32>

    // Layer 0: queries from the segment, keys and values from [memory; segment].
    %l0_cat = tensor.concat dim(1) %mem0, %h0 : (tensor<1x64x64xf32>, tensor<1x64x64xf32>) -> tensor<1x128x64xf32>
    %l0_wq = attn.param "layers.0.attn.wq" : tensor<64x64xf32>
    %l0_wk = attn.param "layers.0.attn.wk" : tensor<64x64xf32>
    %l0_wv = attn.param "layers.0.attn.wv" : tensor<64x64xf32>
    %l0_wr = attn.param "layers.0.attn.wr" : tensor<64x64xf32>
    %l0_wo = attn.param "layers.0.attn.wo" : tensor<64x64xf32>
    %l0_u = attn.param "layers.0.attn.r_w_bias" : tensor<4x16xf32>
    %l0_w = attn.param "layers.0.attn.r_r_bias" : tensor<4x16xf32>
    %l0_q = attn.linear %h0, %l0_wq : (tensor<1x64x64xf32>, tensor<64x64xf32>) -> tensor<1x64x64xf32>
    %l0_k = attn.linear %l0_cat, %l0_wk : (tensor<1x128x64xf32>, tensor<64x64xf32>) -> tensor<1x128x64xf32>
    %l0_v = attn.linear %l0_cat, %l0_wv : (tensor<1x128x64xf32>, tensor<64x64xf32>) -> tensor<1x128x64xf32>
    %l0_rk = attn.linear %r, %l0_wr : (tensor<1x128x64xf32>, tensor<64x64xf32>) -> tensor<1x128x64xf32>
    %l0_qh_s = tensor.expand_shape %l0_q [[0], [1], [2, 3]] output_shape [1, 64, 4, 16] : tensor<1x64x64xf32> into tensor<1x64x4x16xf32>
    %l0_qh_e = tensor.empty() : tensor<1x4x64x16xf32>
    %l0_qh = linalg.transpose ins(%l0_qh_s : tensor<1x64x4x16xf32>) outs(%l0_qh_e : tensor<1x4x64x16xf32>) permutation = [0, 2, 1, 3]
    %l0_kh_s = tensor.expand_shape %l0_k [[0], [1], [2, 3]] output_shape [1, 128, 4, 16] : tensor<1x128x64xf32> into tensor<1x128x4x16xf32>
    %l0_kh_e = tensor.empty() : tensor<1x4x128x16xf32>
    %l0_kh = linalg.transpose ins(%l0_kh_s : tensor<1x128x4x16xf32>) outs(%l0_kh_e : tensor<1x4x128x16xf32>) permutation = [0, 2, 1, 3]
    %l0_vh_s = tensor.expand_shape %l0_v [[0], [1], [2, 3]] output_shape [1, 128, 4, 16] : tensor<1x128x64xf32> into tensor<1x128x4x16xf32>
    %l0_vh_e = tensor.empty() : tensor<1x4x128x16xf32>
    %l0_vh = linalg.transpose ins(%l0_vh_s : tensor<1x128x4x16xf32>) outs(%l0_vh_e : tensor<1x4x128x16xf32>) permutation = [0, 2, 1, 3]
    %l0_rh_s = tensor.expand_shape %l0_rk [[0], [1], [2, 3]] output_shape [1, 128, 4, 16] : tensor<1x128x64xf32> into tensor<1x128x4x16xf32>
    %l0_rh_e = tensor.empty() : tensor<1x4x128x16xf32>
    %l0_rh = linalg.transpose ins(%l0_rh_s : tensor<1x128x4x16xf32>) outs(%l0_rh_e : tensor<1x4x128x16xf32>) permutation = [0, 2, 1, 3]
    %l0_pos = tensor.collapse_shape %l0_rh [[0, 1], [2], [3]] : tensor<1x4x128x16xf32> into tensor<4x128x16xf32>
    %l0_o = attn.relative_attention %l0_qh, %l0_kh, %l0_vh, %l0_pos, %l0_u, %l0_w
        : (tensor<1x4x64x16xf32>, tensor<1x4x128x16xf32>, tensor<1x4x128x16xf32>, tensor<4x128x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<1x4x64x16xf32>
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
    %l1_wr = attn.param "layers.1.attn.wr" : tensor<64x64xf32>
    %l1_wo = attn.param "layers.1.attn.wo" : tensor<64x64xf32>
    %l1_u = attn.param "layers.1.attn.r_w_bias" : tensor<4x16xf32>
    %l1_w = attn.param "layers.1.attn.r_r_bias" : tensor<4x16xf32>
    %l1_q = attn.linear %h1, %l1_wq : (tensor<1x64x64xf32>, tensor<64x64xf32>) -> tensor<1x64x64xf32>
    %l1_k = attn.linear %l1_cat, %l1_wk : (tensor<1x128x64xf32>, tensor<64x64xf32>) -> tensor<1x128x64xf32>
    %l1_v = attn.linear %l1_cat, %l1_wv : (tensor<1x128x64xf32>, tensor<64x64xf32>) -> tensor<1x128x64xf32>
    %l1_rk = attn.linear %r, %l1_wr : (tensor<1x128x64xf32>, tensor<64x64xf32>) -> tensor<1x128x64xf32>
    %l1_qh_s = tensor.expand_shape %l1_q [[0], [1], [2, 3]] output_shape [1, 64, 4, 16] : tensor<1x64x64xf32> into tensor<1x64x4x16xf32>
    %l1_qh_e = tensor.empty() : tensor<1x4x64x16xf32>
    %l1_qh = linalg.transpose ins(%l1_qh_s : tensor<1x64x4x16xf32>) outs(%l1_qh_e : tensor<1x4x64x16xf32>) permutation = [0, 2, 1, 3]
    %l1_kh_s = tensor.expand_shape %l1_k [[0], [1], [2, 3]] output_shape [1, 128, 4, 16] : tensor<1x128x64xf32> into tensor<1x128x4x16xf32>
    %l1_kh_e = tensor.empty() : tensor<1x4x128x16xf32>
    %l1_kh = linalg.transpose ins(%l1_kh_s : tensor<1x128x4x16xf32>) outs(%l1_kh_e : tensor<1x4x128x16xf32>) permutation = [0, 2, 1, 3]
    %l1_vh_s = tensor.expand_shape %l1_v [[0], [1], [2, 3]] output_shape [1, 128, 4, 16] : tensor<1x128x64xf32> into tensor<1x128x4x16xf32>
    %l1_vh_e = tensor.empty() : tensor<1x4x128x16xf32>
    %l1_vh = linalg.transpose ins(%l1_vh_s : tensor<1x128x4x16xf32>) outs(%l1_vh_e : tensor<1x4x128x16xf32>) permutation = [0, 2, 1, 3]
    %l1_rh_s = tensor.expand_shape %l1_rk [[0], [1], [2, 3]] output_shape [1, 128, 4, 16] : tensor<1x128x64xf32> into tensor<1x128x4x16xf32>
    %l1_rh_e = tensor.empty() : tensor<1x4x128x16xf32>
    %l1_rh = linalg.transpose ins(%l1_rh_s : tensor<1x128x4x16xf32>) outs(%l1_rh_e : tensor<1x4x128x16xf32>) permutation = [0, 2, 1, 3]
    %l1_pos = tensor.collapse_shape %l1_rh [[0, 1], [2], [3]] : tensor<1x4x128x16xf32> into tensor<4x128x16xf32>
    %l1_o = attn.relative_attention %l1_qh, %l1_kh, %l1_vh, %l1_pos, %l1_u, %l1_w
        : (tensor<1x4x64x16xf32>, tensor<1x4x128x16xf32>, tensor<1x4x128x16xf32>, tensor<4x128x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<1x4x64x16xf32>
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

  // One segment's loss, and the memories for the next: lcc-train carries
  // results 1 and 2 into arguments 2 and 3 (--carry=1:2 --carry=2:3).
  // The memories are arguments, so gradients stop there.
  func.func @loss(%tokens: tensor<1x64xi32>, %labels: tensor<1x64xi32>,
                  %mem0: tensor<1x64x64xf32>, %mem1: tensor<1x64x64xf32>)
      -> (tensor<f32>, tensor<1x64x64xf32>, tensor<1x64x64xf32>) {
    %logits, %new0, %new1 = call @forward(%tokens, %mem0, %mem1)
        : (tensor<1x64xi32>, tensor<1x64x64xf32>, tensor<1x64x64xf32>)
        -> (tensor<1x64x256xf32>, tensor<1x64x64xf32>, tensor<1x64x64xf32>)
    %l = attn.softmax_cross_entropy %logits, %labels
        : (tensor<1x64x256xf32>, tensor<1x64xi32>) -> tensor<f32>
    return %l, %new0, %new1 : tensor<f32>, tensor<1x64x64xf32>, tensor<1x64x64xf32>
  }
}
