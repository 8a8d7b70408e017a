// transformer-tiny: a 2-layer decoder-only transformer with dense causal
// attention. d_model 128, 4 heads of 32, d_ff 512 (GELU), vocab 256 (bytes),
// seq 512, pre-norm residual blocks, learned positions.
//
// Input: token ids [1, 512] i32. Output: next-token logits [1, 512, 256].
// @loss(tokens, labels) is the training objective `lcc --train` differentiates.
module {
  func.func @forward(%tokens: tensor<1x512xi32>) -> tensor<1x512x256xf32> {
  %table = attn.param "embed.tokens" : tensor<256x128xf32>
  %tok_emb = attn.embedding %tokens, %table : (tensor<1x512xi32>, tensor<256x128xf32>) -> tensor<1x512x128xf32>
  %pos = attn.param "embed.positions" : tensor<1x512x128xf32>
  %x0 = arith.addf %tok_emb, %pos : tensor<1x512x128xf32>
  %x0_attn = attn.residual %x0 : tensor<1x512x128xf32> {
  ^bb0(%a: tensor<1x512x128xf32>):
    %n_g = attn.param "layers.0.attn_norm.gamma" : tensor<128xf32>
    %n_b = attn.param "layers.0.attn_norm.beta" : tensor<128xf32>
    %n = attn.layer_norm %a, %n_g, %n_b
        : (tensor<1x512x128xf32>, tensor<128xf32>, tensor<128xf32>) -> tensor<1x512x128xf32>
    %h_wq = attn.param "layers.0.attn.wq" : tensor<128x128xf32>
    %h_wk = attn.param "layers.0.attn.wk" : tensor<128x128xf32>
    %h_wv = attn.param "layers.0.attn.wv" : tensor<128x128xf32>
    %h_wo = attn.param "layers.0.attn.wo" : tensor<128x128xf32>
    %h = attn.multi_head_attention %n, query %h_wq, key %h_wk, value %h_wv, output %h_wo
        {heads = 4 : i64}
        : (tensor<1x512x128xf32>, tensor<128x128xf32>, tensor<128x128xf32>, tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<1x512x128xf32> {
    ^bb0(%q: tensor<1x4x512x32xf32>, %k: tensor<1x4x512x32xf32>, %v: tensor<1x4x512x32xf32>):
      %o = attn.attention %q, %k, %v {causal = true}
          : (tensor<1x4x512x32xf32>, tensor<1x4x512x32xf32>, tensor<1x4x512x32xf32>) -> tensor<1x4x512x32xf32>
      attn.yield %o : tensor<1x4x512x32xf32>
    }
    attn.yield %h : tensor<1x512x128xf32>
  }
  %x1 = attn.residual %x0_attn : tensor<1x512x128xf32> {
  ^bb0(%a: tensor<1x512x128xf32>):
    %n_g = attn.param "layers.0.ff_norm.gamma" : tensor<128xf32>
    %n_b = attn.param "layers.0.ff_norm.beta" : tensor<128xf32>
    %n = attn.layer_norm %a, %n_g, %n_b
        : (tensor<1x512x128xf32>, tensor<128xf32>, tensor<128xf32>) -> tensor<1x512x128xf32>
    %h_w1 = attn.param "layers.0.ff.w1" : tensor<128x512xf32>
    %h_b1 = attn.param "layers.0.ff.b1" : tensor<512xf32>
    %h_w2 = attn.param "layers.0.ff.w2" : tensor<512x128xf32>
    %h_b2 = attn.param "layers.0.ff.b2" : tensor<128xf32>
    %h = attn.feed_forward gelu %n, %h_w1, %h_b1, %h_w2, %h_b2
        : (tensor<1x512x128xf32>, tensor<128x512xf32>, tensor<512xf32>, tensor<512x128xf32>, tensor<128xf32>) -> tensor<1x512x128xf32>
    attn.yield %h : tensor<1x512x128xf32>
  }
  %x1_attn = attn.residual %x1 : tensor<1x512x128xf32> {
  ^bb0(%a: tensor<1x512x128xf32>):
    %n_g = attn.param "layers.1.attn_norm.gamma" : tensor<128xf32>
    %n_b = attn.param "layers.1.attn_norm.beta" : tensor<128xf32>
    %n = attn.layer_norm %a, %n_g, %n_b
        : (tensor<1x512x128xf32>, tensor<128xf32>, tensor<128xf32>) -> tensor<1x512x128xf32>
    %h_wq = attn.param "layers.1.attn.wq" : tensor<128x128xf32>
    %h_wk = attn.param "layers.1.attn.wk" : tensor<128x128xf32>
    %h_wv = attn.param "layers.1.attn.wv" : tensor<128x128xf32>
    %h_wo = attn.param "layers.1.attn.wo" : tensor<128x128xf32>
    %h = attn.multi_head_attention %n, query %h_wq, key %h_wk, value %h_wv, output %h_wo
        {heads = 4 : i64}
        : (tensor<1x512x128xf32>, tensor<128x128xf32>, tensor<128x128xf32>, tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<1x512x128xf32> {
    ^bb0(%q: tensor<1x4x512x32xf32>, %k: tensor<1x4x512x32xf32>, %v: tensor<1x4x512x32xf32>):
      %o = attn.attention %q, %k, %v {causal = true}
          : (tensor<1x4x512x32xf32>, tensor<1x4x512x32xf32>, tensor<1x4x512x32xf32>) -> tensor<1x4x512x32xf32>
      attn.yield %o : tensor<1x4x512x32xf32>
    }
    attn.yield %h : tensor<1x512x128xf32>
  }
  %x2 = attn.residual %x1_attn : tensor<1x512x128xf32> {
  ^bb0(%a: tensor<1x512x128xf32>):
    %n_g = attn.param "layers.1.ff_norm.gamma" : tensor<128xf32>
    %n_b = attn.param "layers.1.ff_norm.beta" : tensor<128xf32>
    %n = attn.layer_norm %a, %n_g, %n_b
        : (tensor<1x512x128xf32>, tensor<128xf32>, tensor<128xf32>) -> tensor<1x512x128xf32>
    %h_w1 = attn.param "layers.1.ff.w1" : tensor<128x512xf32>
    %h_b1 = attn.param "layers.1.ff.b1" : tensor<512xf32>
    %h_w2 = attn.param "layers.1.ff.w2" : tensor<512x128xf32>
    %h_b2 = attn.param "layers.1.ff.b2" : tensor<128xf32>
    %h = attn.feed_forward gelu %n, %h_w1, %h_b1, %h_w2, %h_b2
        : (tensor<1x512x128xf32>, tensor<128x512xf32>, tensor<512xf32>, tensor<512x128xf32>, tensor<128xf32>) -> tensor<1x512x128xf32>
    attn.yield %h : tensor<1x512x128xf32>
  }
  %n_g = attn.param "final_norm.gamma" : tensor<128xf32>
  %n_b = attn.param "final_norm.beta" : tensor<128xf32>
  %n = attn.layer_norm %x2, %n_g, %n_b
      : (tensor<1x512x128xf32>, tensor<128xf32>, tensor<128xf32>) -> tensor<1x512x128xf32>
  %w_out = attn.param "lm_head.weight" : tensor<128x256xf32>
  %b_out = attn.param "lm_head.bias" : tensor<256xf32>
  %logits = attn.linear %n, %w_out, %b_out
      : (tensor<1x512x128xf32>, tensor<128x256xf32>, tensor<256xf32>) -> tensor<1x512x256xf32>
  return %logits : tensor<1x512x256xf32>
  }
  // The training objective: the mean next-token cross-entropy of forward's
  // logits against `labels` (the tokens shifted by one). `lcc --train`
  // differentiates it into `train_step`.
  func.func @loss(%tokens: tensor<1x512xi32>, %labels: tensor<1x512xi32>) -> tensor<f32> {
  %logits = call @forward(%tokens) : (tensor<1x512xi32>) -> tensor<1x512x256xf32>
  %l = attn.softmax_cross_entropy %logits, %labels
      : (tensor<1x512x256xf32>, tensor<1x512xi32>) -> tensor<f32>
  return %l : tensor<f32>
  }
}
