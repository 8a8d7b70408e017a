// Causal attention with a mask region (a window of the 8 latest keys) and
// a score region (ALiBi's per-head slopes) in one layer over 64 positions:
// a decode step evaluates both at its position (test_decode.py).
func.func @forward(%tokens: tensor<1x64xi32>) -> tensor<1x64x32xf32> {
  %table = attn.param "embed" : tensor<32x16xf32>
  %x = attn.embedding %tokens, %table : (tensor<1x64xi32>, tensor<32x16xf32>) -> tensor<1x64x16xf32>
  %g = attn.param "norm.gamma" : tensor<16xf32>
  %b = attn.param "norm.beta" : tensor<16xf32>
  %n = attn.layer_norm %x, %g, %b : (tensor<1x64x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x64x16xf32>
  %wq = attn.param "wq" : tensor<16x16xf32>
  %wk = attn.param "wk" : tensor<16x16xf32>
  %wv = attn.param "wv" : tensor<16x16xf32>
  %wo = attn.param "wo" : tensor<16x16xf32>
  %h = attn.multi_head_attention %n, query %wq, key %wk, value %wv, output %wo {heads = 2 : i64}
      : (tensor<1x64x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<1x64x16xf32> {
  ^bb0(%q: tensor<1x2x64x8xf32>, %k: tensor<1x2x64x8xf32>, %v: tensor<1x2x64x8xf32>):
    %o = attn.attention %q, %k, %v {causal = true} : (tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32>
        mask {
        ^bb0(%mb: index, %mh: index, %i: index, %j: index):
          %d = arith.subi %i, %j : index
          %w = arith.constant 8 : index
          %near = arith.cmpi slt, %d, %w : index
          attn.yield %near : i1
        }
        score {
        ^bb0(%s: f32, %sb: index, %sh: index, %si: index, %sj: index):
          %one = arith.constant 1 : index
          %h1 = arith.addi %sh, %one : index
          %h64 = arith.index_cast %h1 : index to i64
          %hf = arith.sitofp %h64 : i64 to f32
          %rate = arith.constant -2.77258872 : f32
          %exponent = arith.mulf %hf, %rate : f32
          %slope = math.exp %exponent : f32
          %dd = arith.subi %sj, %si : index
          %d64 = arith.index_cast %dd : index to i64
          %df = arith.sitofp %d64 : i64 to f32
          %bias = arith.mulf %slope, %df : f32
          %t = arith.addf %s, %bias : f32
          attn.yield %t : f32
        }
    attn.yield %o : tensor<1x2x64x8xf32>
  }
  %y = arith.addf %x, %h : tensor<1x64x16xf32>
  %w = attn.param "head.weight" : tensor<16x32xf32>
  %c = attn.param "head.bias" : tensor<32xf32>
  %logits = attn.linear %y, %w, %c : (tensor<1x64x16xf32>, tensor<16x32xf32>, tensor<32xf32>) -> tensor<1x64x32xf32>
  return %logits : tensor<1x64x32xf32>
}
