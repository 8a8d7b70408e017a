// one-layer: the smallest whole model, as docs/user-guide.md writes it. A
// decoder-only transformer of one pre-norm layer: d_model 64, 2 heads of 32,
// d_ff 256 (GELU), vocab 256 (bytes), seq 128, learned positions.
//
// Input: token ids [1, 128] i32. Output: next-token logits [1, 128, 256].
// @loss(tokens, labels) is the objective `lcc --train` differentiates.
module {
  func.func @forward(%tokens: tensor<1x128xi32>) -> tensor<1x128x256xf32> {
    // Token and position embeddings.
    %table = attn.param "embed.tokens" : tensor<256x64xf32>
    %emb = attn.embedding %tokens, %table
        : (tensor<1x128xi32>, tensor<256x64xf32>) -> tensor<1x128x64xf32>
    %pos = attn.param "embed.positions" : tensor<1x128x64xf32>
    %x = arith.addf %emb, %pos : tensor<1x128x64xf32>
    // x + attention(norm(x)): causal, 2 heads.
    %x1 = attn.residual %x : tensor<1x128x64xf32> {
    ^bb0(%a: tensor<1x128x64xf32>):
      %g = attn.param "attn_norm.gamma" : tensor<64xf32>
      %b = attn.param "attn_norm.beta" : tensor<64xf32>
      %n = attn.layer_norm %a, %g, %b
          : (tensor<1x128x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x128x64xf32>
      %wq = attn.param "attn.wq" : tensor<64x64xf32>
      %wk = attn.param "attn.wk" : tensor<64x64xf32>
      %wv = attn.param "attn.wv" : tensor<64x64xf32>
      %wo = attn.param "attn.wo" : tensor<64x64xf32>
      %h = attn.multi_head_attention %n, query %wq, key %wk, value %wv, output %wo
          {heads = 2 : i64}
          : (tensor<1x128x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<1x128x64xf32> {
      ^bb0(%q: tensor<1x2x128x32xf32>, %k: tensor<1x2x128x32xf32>, %v: tensor<1x2x128x32xf32>):
        %o = attn.attention %q, %k, %v {causal = true}
            : (tensor<1x2x128x32xf32>, tensor<1x2x128x32xf32>, tensor<1x2x128x32xf32>) -> tensor<1x2x128x32xf32>
        attn.yield %o : tensor<1x2x128x32xf32>
      }
      attn.yield %h : tensor<1x128x64xf32>
    }
    // x + feed_forward(norm(x)).
    %x2 = attn.residual %x1 : tensor<1x128x64xf32> {
    ^bb0(%a: tensor<1x128x64xf32>):
      %g = attn.param "ff_norm.gamma" : tensor<64xf32>
      %b = attn.param "ff_norm.beta" : tensor<64xf32>
      %n = attn.layer_norm %a, %g, %b
          : (tensor<1x128x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x128x64xf32>
      %w1 = attn.param "ff.w1" : tensor<64x256xf32>
      %b1 = attn.param "ff.b1" : tensor<256xf32>
      %w2 = attn.param "ff.w2" : tensor<256x64xf32>
      %b2 = attn.param "ff.b2" : tensor<64xf32>
      %h = attn.feed_forward gelu %n, %w1, %b1, %w2, %b2
          : (tensor<1x128x64xf32>, tensor<64x256xf32>, tensor<256xf32>, tensor<256x64xf32>, tensor<64xf32>) -> tensor<1x128x64xf32>
      attn.yield %h : tensor<1x128x64xf32>
    }
    // The logits of the next token.
    %g = attn.param "final_norm.gamma" : tensor<64xf32>
    %b = attn.param "final_norm.beta" : tensor<64xf32>
    %n = attn.layer_norm %x2, %g, %b
        : (tensor<1x128x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x128x64xf32>
    %w = attn.param "lm_head.weight" : tensor<64x256xf32>
    %logits = attn.linear %n, %w
        : (tensor<1x128x64xf32>, tensor<64x256xf32>) -> tensor<1x128x256xf32>
    return %logits : tensor<1x128x256xf32>
  }

  // The mean cross-entropy of the logits against the next tokens.
  func.func @loss(%tokens: tensor<1x128xi32>, %labels: tensor<1x128xi32>) -> tensor<f32> {
    %logits = call @forward(%tokens) : (tensor<1x128xi32>) -> tensor<1x128x256xf32>
    %l = attn.softmax_cross_entropy %logits, %labels
        : (tensor<1x128x256xf32>, tensor<1x128xi32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}
