// Two sequences at once, no learned positions: one pre-norm layer of causal
// attention over 48 positions, vocab 32 (lcc-generate.test).
func.func @forward(%tokens: tensor<2x48xi32>) -> tensor<2x48x32xf32> {
  %table = attn.param "embed" : tensor<32x16xf32>
  %x = attn.embedding %tokens, %table : (tensor<2x48xi32>, tensor<32x16xf32>) -> tensor<2x48x16xf32>
  %g = attn.param "norm.gamma" : tensor<16xf32>
  %b = attn.param "norm.beta" : tensor<16xf32>
  %n = attn.layer_norm %x, %g, %b : (tensor<2x48x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x48x16xf32>
  %wq = attn.param "wq" : tensor<16x16xf32>
  %wk = attn.param "wk" : tensor<16x16xf32>
  %wv = attn.param "wv" : tensor<16x16xf32>
  %wo = attn.param "wo" : tensor<16x16xf32>
  %h = attn.multi_head_attention %n, query %wq, key %wk, value %wv, output %wo {heads = 2 : i64}
      : (tensor<2x48x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<2x48x16xf32> {
  ^bb0(%q: tensor<2x2x48x8xf32>, %k: tensor<2x2x48x8xf32>, %v: tensor<2x2x48x8xf32>):
    %o = attn.attention %q, %k, %v {causal = true} : (tensor<2x2x48x8xf32>, tensor<2x2x48x8xf32>, tensor<2x2x48x8xf32>) -> tensor<2x2x48x8xf32>
    attn.yield %o : tensor<2x2x48x8xf32>
  }
  %y = arith.addf %x, %h : tensor<2x48x16xf32>
  %w = attn.param "head.weight" : tensor<16x32xf32>
  %c = attn.param "head.bias" : tensor<32xf32>
  %logits = attn.linear %y, %w, %c : (tensor<2x48x16xf32>, tensor<16x32xf32>, tensor<32xf32>) -> tensor<2x48x32xf32>
  return %logits : tensor<2x48x32xf32>
}
