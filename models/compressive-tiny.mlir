// Compressive Transformer, tiny (Rae et al. 2019; lucidrains/
// compressive-transformer-pytorch): Transformer-XL's relative attention over
// [compressed memory; memory; segment], post-norm, ReLU feed-forward; 2
// layers, d_model 64, 4 heads of 16, d_ff 256, vocab 256, segments of 64
// tokens, memories of 64 and compressed memories of 32 per layer.
//
// Each layer's memory is its input of the previous segment; the memory it
// evicts is compressed 4 to 1 (attn.compress, a 1-D convolution of kernel
// = stride = 4) and joins the compressed memory, a FIFO of 32 whose
// oldest 16 leave. Each layer also returns its attention-reconstruction
// loss: the mean squared difference between its queries' attention over
// the evicted memory and over its compression, with the queries, the
// memory and the key and value weights detached (attn.stop_gradient), so
// that it trains the compressor only; and the model's loss cannot reach
// the compressor, whose output enters the next segment as an argument.
//
// @forward(tokens, mem0, mem1, cmem0, cmem1) -> (logits, new_mem0,
// new_mem1, new_cmem0, new_cmem1, recon0, recon1). @loss adds the two
// reconstruction losses to the cross-entropy and returns the new states:
//   lcc-train --carry=1:2 --carry=2:3 --carry=3:4 --carry=4:5
// @cross_entropy and @reconstruction return one part each, to evaluate
// with (lcc-train --eval-function).
module {
  func.func @forward(%tokens: tensor<1x64xi32>, %mem0: tensor<1x64x64xf32>, %mem1: tensor<1x64x64xf32>, %cmem0: tensor<1x32x64xf32>, %cmem1: tensor<1x32x64xf32>)
      -> (tensor<1x64x256xf32>, tensor<1x64x64xf32>, tensor<1x64x64xf32>, tensor<1x32x64xf32>, tensor<1x32x64xf32>, tensor<f32>, tensor<f32>) {
    %table = attn.param "embed.tokens" : tensor<256x64xf32>
    %h0 = attn.embedding %tokens, %table : (tensor<1x64xi32>, tensor<256x64xf32>) -> tensor<1x64x64xf32>
    %enc = attn.sinusoidal_encoding : tensor<160x64xf32>
    %r = tensor.expand_shape %enc [[0, 1], [2]] output_shape [1, 160, 64] : tensor<160x64xf32> into tensor<1x160x64xf32>
    %mean_column = arith.constant dense<0.000244140625> : tensor<4096x1xf32>

    // Layer 0: keys and values from [compressed memory; memory; segment].
    %l0_cat = tensor.concat dim(1) %cmem0, %mem0, %h0 : (tensor<1x32x64xf32>, tensor<1x64x64xf32>, tensor<1x64x64xf32>) -> tensor<1x160x64xf32>
    %l0_wq = attn.param "layers.0.attn.wq" : tensor<64x64xf32>
    %l0_wk = attn.param "layers.0.attn.wk" : tensor<64x64xf32>
    %l0_wv = attn.param "layers.0.attn.wv" : tensor<64x64xf32>
    %l0_wr = attn.param "layers.0.attn.wr" : tensor<64x64xf32>
    %l0_wo = attn.param "layers.0.attn.wo" : tensor<64x64xf32>
    %l0_u = attn.param "layers.0.attn.r_w_bias" : tensor<4x16xf32>
    %l0_w = attn.param "layers.0.attn.r_r_bias" : tensor<4x16xf32>
    %l0_q = attn.linear %h0, %l0_wq : (tensor<1x64x64xf32>, tensor<64x64xf32>) -> tensor<1x64x64xf32>
    %l0_k = attn.linear %l0_cat, %l0_wk : (tensor<1x160x64xf32>, tensor<64x64xf32>) -> tensor<1x160x64xf32>
    %l0_v = attn.linear %l0_cat, %l0_wv : (tensor<1x160x64xf32>, tensor<64x64xf32>) -> tensor<1x160x64xf32>
    %l0_rk = attn.linear %r, %l0_wr : (tensor<1x160x64xf32>, tensor<64x64xf32>) -> tensor<1x160x64xf32>
    %l0_qh_s = tensor.expand_shape %l0_q [[0], [1], [2, 3]] output_shape [1, 64, 4, 16] : tensor<1x64x64xf32> into tensor<1x64x4x16xf32>
    %l0_qh_e = tensor.empty() : tensor<1x4x64x16xf32>
    %l0_qh = linalg.transpose ins(%l0_qh_s : tensor<1x64x4x16xf32>) outs(%l0_qh_e : tensor<1x4x64x16xf32>) permutation = [0, 2, 1, 3]
    %l0_kh_s = tensor.expand_shape %l0_k [[0], [1], [2, 3]] output_shape [1, 160, 4, 16] : tensor<1x160x64xf32> into tensor<1x160x4x16xf32>
    %l0_kh_e = tensor.empty() : tensor<1x4x160x16xf32>
    %l0_kh = linalg.transpose ins(%l0_kh_s : tensor<1x160x4x16xf32>) outs(%l0_kh_e : tensor<1x4x160x16xf32>) permutation = [0, 2, 1, 3]
    %l0_vh_s = tensor.expand_shape %l0_v [[0], [1], [2, 3]] output_shape [1, 160, 4, 16] : tensor<1x160x64xf32> into tensor<1x160x4x16xf32>
    %l0_vh_e = tensor.empty() : tensor<1x4x160x16xf32>
    %l0_vh = linalg.transpose ins(%l0_vh_s : tensor<1x160x4x16xf32>) outs(%l0_vh_e : tensor<1x4x160x16xf32>) permutation = [0, 2, 1, 3]
    %l0_rh_s = tensor.expand_shape %l0_rk [[0], [1], [2, 3]] output_shape [1, 160, 4, 16] : tensor<1x160x64xf32> into tensor<1x160x4x16xf32>
    %l0_rh_e = tensor.empty() : tensor<1x4x160x16xf32>
    %l0_rh = linalg.transpose ins(%l0_rh_s : tensor<1x160x4x16xf32>) outs(%l0_rh_e : tensor<1x4x160x16xf32>) permutation = [0, 2, 1, 3]
    %l0_pos = tensor.collapse_shape %l0_rh [[0, 1], [2], [3]] : tensor<1x4x160x16xf32> into tensor<4x160x16xf32>
    %l0_o = attn.relative_attention %l0_qh, %l0_kh, %l0_vh, %l0_pos, %l0_u, %l0_w
        : (tensor<1x4x64x16xf32>, tensor<1x4x160x16xf32>, tensor<1x4x160x16xf32>, tensor<4x160x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<1x4x64x16xf32>
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

    // Layer 0's FIFOs: the segment is the new memory; the evicted memory,
    // compressed 4 to 1, joins the compressed memory, whose oldest 16 leave.
    %l0_old = attn.stop_gradient %mem0 : tensor<1x64x64xf32>
    %l0_cw = attn.param "layers.0.compress.weight" : tensor<4x64x64xf32>
    %l0_cb = attn.param "layers.0.compress.bias" : tensor<64xf32>
    %l0_comp = attn.compress %l0_old, %l0_cw, %l0_cb {rate = 4 : i64} : (tensor<1x64x64xf32>, tensor<4x64x64xf32>, tensor<64xf32>) -> tensor<1x16x64xf32>
    %l0_kept = tensor.extract_slice %cmem0[0, 16, 0] [1, 16, 64] [1, 1, 1] : tensor<1x32x64xf32> to tensor<1x16x64xf32>
    %new_cmem0 = tensor.concat dim(1) %l0_kept, %l0_comp : (tensor<1x16x64xf32>, tensor<1x16x64xf32>) -> tensor<1x32x64xf32>

    // Layer 0's attention-reconstruction loss: the segment's queries attend
    // to the evicted memory and to its compression through the same key
    // and value weights; all but the compressor is detached, so it trains
    // the compressor only.
    %l0_qd = attn.stop_gradient %l0_qh : tensor<1x4x64x16xf32>
    %l0_wkd = attn.stop_gradient %l0_wk : tensor<64x64xf32>
    %l0_wvd = attn.stop_gradient %l0_wv : tensor<64x64xf32>
    %l0_oldk = attn.linear %l0_old, %l0_wkd : (tensor<1x64x64xf32>, tensor<64x64xf32>) -> tensor<1x64x64xf32>
    %l0_oldv = attn.linear %l0_old, %l0_wvd : (tensor<1x64x64xf32>, tensor<64x64xf32>) -> tensor<1x64x64xf32>
    %l0_oldkh_s = tensor.expand_shape %l0_oldk [[0], [1], [2, 3]] output_shape [1, 64, 4, 16] : tensor<1x64x64xf32> into tensor<1x64x4x16xf32>
    %l0_oldkh_e = tensor.empty() : tensor<1x4x64x16xf32>
    %l0_oldkh = linalg.transpose ins(%l0_oldkh_s : tensor<1x64x4x16xf32>) outs(%l0_oldkh_e : tensor<1x4x64x16xf32>) permutation = [0, 2, 1, 3]
    %l0_oldvh_s = tensor.expand_shape %l0_oldv [[0], [1], [2, 3]] output_shape [1, 64, 4, 16] : tensor<1x64x64xf32> into tensor<1x64x4x16xf32>
    %l0_oldvh_e = tensor.empty() : tensor<1x4x64x16xf32>
    %l0_oldvh = linalg.transpose ins(%l0_oldvh_s : tensor<1x64x4x16xf32>) outs(%l0_oldvh_e : tensor<1x4x64x16xf32>) permutation = [0, 2, 1, 3]
    %l0_olda = attn.attention %l0_qd, %l0_oldkh, %l0_oldvh : (tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>) -> tensor<1x4x64x16xf32>
    %l0_ck = attn.linear %l0_comp, %l0_wkd : (tensor<1x16x64xf32>, tensor<64x64xf32>) -> tensor<1x16x64xf32>
    %l0_cv = attn.linear %l0_comp, %l0_wvd : (tensor<1x16x64xf32>, tensor<64x64xf32>) -> tensor<1x16x64xf32>
    %l0_ckh_s = tensor.expand_shape %l0_ck [[0], [1], [2, 3]] output_shape [1, 16, 4, 16] : tensor<1x16x64xf32> into tensor<1x16x4x16xf32>
    %l0_ckh_e = tensor.empty() : tensor<1x4x16x16xf32>
    %l0_ckh = linalg.transpose ins(%l0_ckh_s : tensor<1x16x4x16xf32>) outs(%l0_ckh_e : tensor<1x4x16x16xf32>) permutation = [0, 2, 1, 3]
    %l0_cvh_s = tensor.expand_shape %l0_cv [[0], [1], [2, 3]] output_shape [1, 16, 4, 16] : tensor<1x16x64xf32> into tensor<1x16x4x16xf32>
    %l0_cvh_e = tensor.empty() : tensor<1x4x16x16xf32>
    %l0_cvh = linalg.transpose ins(%l0_cvh_s : tensor<1x16x4x16xf32>) outs(%l0_cvh_e : tensor<1x4x16x16xf32>) permutation = [0, 2, 1, 3]
    %l0_ca = attn.attention %l0_qd, %l0_ckh, %l0_cvh : (tensor<1x4x64x16xf32>, tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>) -> tensor<1x4x64x16xf32>
    %l0_diff = arith.subf %l0_olda, %l0_ca : tensor<1x4x64x16xf32>
    %l0_sq = arith.mulf %l0_diff, %l0_diff : tensor<1x4x64x16xf32>
    %l0_sqr = tensor.collapse_shape %l0_sq [[0], [1, 2, 3]] : tensor<1x4x64x16xf32> into tensor<1x4096xf32>
    %l0_msum = attn.linear %l0_sqr, %mean_column : (tensor<1x4096xf32>, tensor<4096x1xf32>) -> tensor<1x1xf32>
    %recon0 = tensor.collapse_shape %l0_msum [] : tensor<1x1xf32> into tensor<f32>

    // Layer 1: keys and values from [compressed memory; memory; segment].
    %l1_cat = tensor.concat dim(1) %cmem1, %mem1, %h1 : (tensor<1x32x64xf32>, tensor<1x64x64xf32>, tensor<1x64x64xf32>) -> tensor<1x160x64xf32>
    %l1_wq = attn.param "layers.1.attn.wq" : tensor<64x64xf32>
    %l1_wk = attn.param "layers.1.attn.wk" : tensor<64x64xf32>
    %l1_wv = attn.param "layers.1.attn.wv" : tensor<64x64xf32>
    %l1_wr = attn.param "layers.1.attn.wr" : tensor<64x64xf32>
    %l1_wo = attn.param "layers.1.attn.wo" : tensor<64x64xf32>
    %l1_u = attn.param "layers.1.attn.r_w_bias" : tensor<4x16xf32>
    %l1_w = attn.param "layers.1.attn.r_r_bias" : tensor<4x16xf32>
    %l1_q = attn.linear %h1, %l1_wq : (tensor<1x64x64xf32>, tensor<64x64xf32>) -> tensor<1x64x64xf32>
    %l1_k = attn.linear %l1_cat, %l1_wk : (tensor<1x160x64xf32>, tensor<64x64xf32>) -> tensor<1x160x64xf32>
    %l1_v = attn.linear %l1_cat, %l1_wv : (tensor<1x160x64xf32>, tensor<64x64xf32>) -> tensor<1x160x64xf32>
    %l1_rk = attn.linear %r, %l1_wr : (tensor<1x160x64xf32>, tensor<64x64xf32>) -> tensor<1x160x64xf32>
    %l1_qh_s = tensor.expand_shape %l1_q [[0], [1], [2, 3]] output_shape [1, 64, 4, 16] : tensor<1x64x64xf32> into tensor<1x64x4x16xf32>
    %l1_qh_e = tensor.empty() : tensor<1x4x64x16xf32>
    %l1_qh = linalg.transpose ins(%l1_qh_s : tensor<1x64x4x16xf32>) outs(%l1_qh_e : tensor<1x4x64x16xf32>) permutation = [0, 2, 1, 3]
    %l1_kh_s = tensor.expand_shape %l1_k [[0], [1], [2, 3]] output_shape [1, 160, 4, 16] : tensor<1x160x64xf32> into tensor<1x160x4x16xf32>
    %l1_kh_e = tensor.empty() : tensor<1x4x160x16xf32>
    %l1_kh = linalg.transpose ins(%l1_kh_s : tensor<1x160x4x16xf32>) outs(%l1_kh_e : tensor<1x4x160x16xf32>) permutation = [0, 2, 1, 3]
    %l1_vh_s = tensor.expand_shape %l1_v [[0], [1], [2, 3]] output_shape [1, 160, 4, 16] : tensor<1x160x64xf32> into tensor<1x160x4x16xf32>
    %l1_vh_e = tensor.empty() : tensor<1x4x160x16xf32>
    %l1_vh = linalg.transpose ins(%l1_vh_s : tensor<1x160x4x16xf32>) outs(%l1_vh_e : tensor<1x4x160x16xf32>) permutation = [0, 2, 1, 3]
    %l1_rh_s = tensor.expand_shape %l1_rk [[0], [1], [2, 3]] output_shape [1, 160, 4, 16] : tensor<1x160x64xf32> into tensor<1x160x4x16xf32>
    %l1_rh_e = tensor.empty() : tensor<1x4x160x16xf32>
    %l1_rh = linalg.transpose ins(%l1_rh_s : tensor<1x160x4x16xf32>) outs(%l1_rh_e : tensor<1x4x160x16xf32>) permutation = [0, 2, 1, 3]
    %l1_pos = tensor.collapse_shape %l1_rh [[0, 1], [2], [3]] : tensor<1x4x160x16xf32> into tensor<4x160x16xf32>
    %l1_o = attn.relative_attention %l1_qh, %l1_kh, %l1_vh, %l1_pos, %l1_u, %l1_w
        : (tensor<1x4x64x16xf32>, tensor<1x4x160x16xf32>, tensor<1x4x160x16xf32>, tensor<4x160x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<1x4x64x16xf32>
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

    // Layer 1's FIFOs: the segment is the new memory; the evicted memory,
    // compressed 4 to 1, joins the compressed memory, whose oldest 16 leave.
    %l1_old = attn.stop_gradient %mem1 : tensor<1x64x64xf32>
    %l1_cw = attn.param "layers.1.compress.weight" : tensor<4x64x64xf32>
    %l1_cb = attn.param "layers.1.compress.bias" : tensor<64xf32>
    %l1_comp = attn.compress %l1_old, %l1_cw, %l1_cb {rate = 4 : i64} : (tensor<1x64x64xf32>, tensor<4x64x64xf32>, tensor<64xf32>) -> tensor<1x16x64xf32>
    %l1_kept = tensor.extract_slice %cmem1[0, 16, 0] [1, 16, 64] [1, 1, 1] : tensor<1x32x64xf32> to tensor<1x16x64xf32>
    %new_cmem1 = tensor.concat dim(1) %l1_kept, %l1_comp : (tensor<1x16x64xf32>, tensor<1x16x64xf32>) -> tensor<1x32x64xf32>

    // Layer 1's attention-reconstruction loss: the segment's queries attend
    // to the evicted memory and to its compression through the same key
    // and value weights; all but the compressor is detached, so it trains
    // the compressor only.
    %l1_qd = attn.stop_gradient %l1_qh : tensor<1x4x64x16xf32>
    %l1_wkd = attn.stop_gradient %l1_wk : tensor<64x64xf32>
    %l1_wvd = attn.stop_gradient %l1_wv : tensor<64x64xf32>
    %l1_oldk = attn.linear %l1_old, %l1_wkd : (tensor<1x64x64xf32>, tensor<64x64xf32>) -> tensor<1x64x64xf32>
    %l1_oldv = attn.linear %l1_old, %l1_wvd : (tensor<1x64x64xf32>, tensor<64x64xf32>) -> tensor<1x64x64xf32>
    %l1_oldkh_s = tensor.expand_shape %l1_oldk [[0], [1], [2, 3]] output_shape [1, 64, 4, 16] : tensor<1x64x64xf32> into tensor<1x64x4x16xf32>
    %l1_oldkh_e = tensor.empty() : tensor<1x4x64x16xf32>
    %l1_oldkh = linalg.transpose ins(%l1_oldkh_s : tensor<1x64x4x16xf32>) outs(%l1_oldkh_e : tensor<1x4x64x16xf32>) permutation = [0, 2, 1, 3]
    %l1_oldvh_s = tensor.expand_shape %l1_oldv [[0], [1], [2, 3]] output_shape [1, 64, 4, 16] : tensor<1x64x64xf32> into tensor<1x64x4x16xf32>
    %l1_oldvh_e = tensor.empty() : tensor<1x4x64x16xf32>
    %l1_oldvh = linalg.transpose ins(%l1_oldvh_s : tensor<1x64x4x16xf32>) outs(%l1_oldvh_e : tensor<1x4x64x16xf32>) permutation = [0, 2, 1, 3]
    %l1_olda = attn.attention %l1_qd, %l1_oldkh, %l1_oldvh : (tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>) -> tensor<1x4x64x16xf32>
    %l1_ck = attn.linear %l1_comp, %l1_wkd : (tensor<1x16x64xf32>, tensor<64x64xf32>) -> tensor<1x16x64xf32>
    %l1_cv = attn.linear %l1_comp, %l1_wvd : (tensor<1x16x64xf32>, tensor<64x64xf32>) -> tensor<1x16x64xf32>
    %l1_ckh_s = tensor.expand_shape %l1_ck [[0], [1], [2, 3]] output_shape [1, 16, 4, 16] : tensor<1x16x64xf32> into tensor<1x16x4x16xf32>
    %l1_ckh_e = tensor.empty() : tensor<1x4x16x16xf32>
    %l1_ckh = linalg.transpose ins(%l1_ckh_s : tensor<1x16x4x16xf32>) outs(%l1_ckh_e : tensor<1x4x16x16xf32>) permutation = [0, 2, 1, 3]
    %l1_cvh_s = tensor.expand_shape %l1_cv [[0], [1], [2, 3]] output_shape [1, 16, 4, 16] : tensor<1x16x64xf32> into tensor<1x16x4x16xf32>
    %l1_cvh_e = tensor.empty() : tensor<1x4x16x16xf32>
    %l1_cvh = linalg.transpose ins(%l1_cvh_s : tensor<1x16x4x16xf32>) outs(%l1_cvh_e : tensor<1x4x16x16xf32>) permutation = [0, 2, 1, 3]
    %l1_ca = attn.attention %l1_qd, %l1_ckh, %l1_cvh : (tensor<1x4x64x16xf32>, tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>) -> tensor<1x4x64x16xf32>
    %l1_diff = arith.subf %l1_olda, %l1_ca : tensor<1x4x64x16xf32>
    %l1_sq = arith.mulf %l1_diff, %l1_diff : tensor<1x4x64x16xf32>
    %l1_sqr = tensor.collapse_shape %l1_sq [[0], [1, 2, 3]] : tensor<1x4x64x16xf32> into tensor<1x4096xf32>
    %l1_msum = attn.linear %l1_sqr, %mean_column : (tensor<1x4096xf32>, tensor<4096x1xf32>) -> tensor<1x1xf32>
    %recon1 = tensor.collapse_shape %l1_msum [] : tensor<1x1xf32> into tensor<f32>

    %head = attn.param "lm_head" : tensor<64x256xf32>
    %logits = attn.linear %h2, %head : (tensor<1x64x64xf32>, tensor<64x256xf32>) -> tensor<1x64x256xf32>
    return %logits, %h0, %h1, %new_cmem0, %new_cmem1, %recon0, %recon1
        : tensor<1x64x256xf32>, tensor<1x64x64xf32>, tensor<1x64x64xf32>, tensor<1x32x64xf32>, tensor<1x32x64xf32>, tensor<f32>, tensor<f32>
  }

  // The cross-entropy plus both reconstruction losses, and the new
  // memories and compressed memories (results 1-4 carried into arguments 2-5).
  func.func @loss(%tokens: tensor<1x64xi32>, %labels: tensor<1x64xi32>, %mem0: tensor<1x64x64xf32>, %mem1: tensor<1x64x64xf32>, %cmem0: tensor<1x32x64xf32>, %cmem1: tensor<1x32x64xf32>)
      -> (tensor<f32>, tensor<1x64x64xf32>, tensor<1x64x64xf32>, tensor<1x32x64xf32>, tensor<1x32x64xf32>) {
    %logits, %m0, %m1, %c0, %c1, %r0, %r1 = call @forward(%tokens, %mem0, %mem1, %cmem0, %cmem1)
        : (tensor<1x64xi32>, tensor<1x64x64xf32>, tensor<1x64x64xf32>, tensor<1x32x64xf32>, tensor<1x32x64xf32>) -> (tensor<1x64x256xf32>, tensor<1x64x64xf32>, tensor<1x64x64xf32>, tensor<1x32x64xf32>, tensor<1x32x64xf32>, tensor<f32>, tensor<f32>)
    %ce = attn.softmax_cross_entropy %logits, %labels : (tensor<1x64x256xf32>, tensor<1x64xi32>) -> tensor<f32>
    %recon = arith.addf %r0, %r1 : tensor<f32>
    %total = arith.addf %ce, %recon : tensor<f32>
    return %total, %m0, %m1, %c0, %c1 : tensor<f32>, tensor<1x64x64xf32>, tensor<1x64x64xf32>, tensor<1x32x64xf32>, tensor<1x32x64xf32>
  }

  // The cross-entropy alone, with the same states.
  func.func @cross_entropy(%tokens: tensor<1x64xi32>, %labels: tensor<1x64xi32>, %mem0: tensor<1x64x64xf32>, %mem1: tensor<1x64x64xf32>, %cmem0: tensor<1x32x64xf32>, %cmem1: tensor<1x32x64xf32>)
      -> (tensor<f32>, tensor<1x64x64xf32>, tensor<1x64x64xf32>, tensor<1x32x64xf32>, tensor<1x32x64xf32>) {
    %logits, %m0, %m1, %c0, %c1, %r0, %r1 = call @forward(%tokens, %mem0, %mem1, %cmem0, %cmem1)
        : (tensor<1x64xi32>, tensor<1x64x64xf32>, tensor<1x64x64xf32>, tensor<1x32x64xf32>, tensor<1x32x64xf32>) -> (tensor<1x64x256xf32>, tensor<1x64x64xf32>, tensor<1x64x64xf32>, tensor<1x32x64xf32>, tensor<1x32x64xf32>, tensor<f32>, tensor<f32>)
    %ce = attn.softmax_cross_entropy %logits, %labels : (tensor<1x64x256xf32>, tensor<1x64xi32>) -> tensor<f32>
    return %ce, %m0, %m1, %c0, %c1 : tensor<f32>, tensor<1x64x64xf32>, tensor<1x64x64xf32>, tensor<1x32x64xf32>, tensor<1x32x64xf32>
  }

  // The two reconstruction losses alone, with the same states.
  func.func @reconstruction(%tokens: tensor<1x64xi32>, %labels: tensor<1x64xi32>, %mem0: tensor<1x64x64xf32>, %mem1: tensor<1x64x64xf32>, %cmem0: tensor<1x32x64xf32>, %cmem1: tensor<1x32x64xf32>)
      -> (tensor<f32>, tensor<1x64x64xf32>, tensor<1x64x64xf32>, tensor<1x32x64xf32>, tensor<1x32x64xf32>) {
    %logits, %m0, %m1, %c0, %c1, %r0, %r1 = call @forward(%tokens, %mem0, %mem1, %cmem0, %cmem1)
        : (tensor<1x64xi32>, tensor<1x64x64xf32>, tensor<1x64x64xf32>, tensor<1x32x64xf32>, tensor<1x32x64xf32>) -> (tensor<1x64x256xf32>, tensor<1x64x64xf32>, tensor<1x64x64xf32>, tensor<1x32x64xf32>, tensor<1x32x64xf32>, tensor<f32>, tensor<f32>)
    %recon = arith.addf %r0, %r1 : tensor<f32>
    return %recon, %m0, %m1, %c0, %c1 : tensor<f32>, tensor<1x64x64xf32>, tensor<1x64x64xf32>, tensor<1x32x64xf32>, tensor<1x32x64xf32>
  }

}
