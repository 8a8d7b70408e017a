// bf16 attention over 15 positions, fewer than a tile and odd: the tile is
// 16, one padded key (run by ../attention-bf16.test).
func.func @forward(%q: tensor<1x2x15x16xbf16>, %k: tensor<1x2x15x16xbf16>,
                   %v: tensor<1x2x15x16xbf16>) -> tensor<1x2x15x16xbf16> {
  %0 = attn.attention %q, %k, %v {causal = true}
      : (tensor<1x2x15x16xbf16>, tensor<1x2x15x16xbf16>,
         tensor<1x2x15x16xbf16>) -> tensor<1x2x15x16xbf16>
  return %0 : tensor<1x2x15x16xbf16>
}
