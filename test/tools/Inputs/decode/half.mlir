// lsh.mlir's model with its LSH attention written in bf16 (arith.truncf
// before, arith.extf after): --decode refuses it with one error, since the
// caches and the cached step are f32 (--attention-precision=bf16 on the f32
// model is the way to decode in half).
func.func @forward(%tokens: tensor<2x64xi32>) -> tensor<2x64x32xf32> {
  %table = attn.param "embed" : tensor<32x16xf32>
  %x = attn.embedding %tokens, %table : (tensor<2x64xi32>, tensor<32x16xf32>) -> tensor<2x64x16xf32>
  %g = attn.param "norm.gamma" : tensor<16xf32>
  %b = attn.param "norm.beta" : tensor<16xf32>
  %n = attn.layer_norm %x, %g, %b : (tensor<2x64x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x64x16xf32>
  %wqk = attn.param "wqk" : tensor<16x16xf32>
  %wv = attn.param "wv" : tensor<16x16xf32>
  %wo = attn.param "wo" : tensor<16x16xf32>
  %h = attn.multi_head_attention %n, query %wqk, value %wv, output %wo {heads = 2 : i64}
      : (tensor<2x64x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<2x64x16xf32> {
  ^bb0(%qk: tensor<2x2x64x8xf32>, %v: tensor<2x2x64x8xf32>):
    %qh = arith.truncf %qk : tensor<2x2x64x8xf32> to tensor<2x2x64x8xbf16>
    %vh = arith.truncf %v : tensor<2x2x64x8xf32> to tensor<2x2x64x8xbf16>
    %oh = attn.lsh_attention %qh, %vh {bucket_size = 8 : i64, n_hashes = 3 : i64, n_buckets = 8 : i64, causal = true, seed = 5 : i64}
        : (tensor<2x2x64x8xbf16>, tensor<2x2x64x8xbf16>) -> tensor<2x2x64x8xbf16>
    %o = arith.extf %oh : tensor<2x2x64x8xbf16> to tensor<2x2x64x8xf32>
    attn.yield %o : tensor<2x2x64x8xf32>
  }
  %y = arith.addf %x, %h : tensor<2x64x16xf32>
  %w = attn.param "head.weight" : tensor<16x32xf32>
  %c = attn.param "head.bias" : tensor<32xf32>
  %logits = attn.linear %y, %w, %c : (tensor<2x64x16xf32>, tensor<16x32xf32>, tensor<32xf32>) -> tensor<2x64x32xf32>
  return %logits : tensor<2x64x32xf32>
}
