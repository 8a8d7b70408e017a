// bf16 attention over 200 positions, padded to whole tiles of 16 (run by
// ../attention-bf16-tiles.test).
func.func @forward(%q: tensor<2x2x200x64xbf16>, %k: tensor<2x2x200x64xbf16>,
                   %v: tensor<2x2x200x64xbf16>)
    -> (tensor<2x2x200x64xbf16>, tensor<2x2x200x64xbf16>) {
  %0 = attn.attention %q, %k, %v
      : (tensor<2x2x200x64xbf16>, tensor<2x2x200x64xbf16>,
         tensor<2x2x200x64xbf16>) -> tensor<2x2x200x64xbf16>
  %1 = attn.attention %q, %k, %v {causal = true}
      : (tensor<2x2x200x64xbf16>, tensor<2x2x200x64xbf16>,
         tensor<2x2x200x64xbf16>) -> tensor<2x2x200x64xbf16>
  return %0, %1 : tensor<2x2x200x64xbf16>, tensor<2x2x200x64xbf16>
}
