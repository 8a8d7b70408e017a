// f16 attention, non-causal and causal (run by ../attention-f16.test).
func.func @forward(%q: tensor<2x2x100x64xf16>, %k: tensor<2x2x100x64xf16>,
                   %v: tensor<2x2x100x64xf16>)
    -> (tensor<2x2x100x64xf16>, tensor<2x2x100x64xf16>) {
  %0 = attn.attention %q, %k, %v
      : (tensor<2x2x100x64xf16>, tensor<2x2x100x64xf16>,
         tensor<2x2x100x64xf16>) -> tensor<2x2x100x64xf16>
  %1 = attn.attention %q, %k, %v {causal = true}
      : (tensor<2x2x100x64xf16>, tensor<2x2x100x64xf16>,
         tensor<2x2x100x64xf16>) -> tensor<2x2x100x64xf16>
  return %0, %1 : tensor<2x2x100x64xf16>, tensor<2x2x100x64xf16>
}
