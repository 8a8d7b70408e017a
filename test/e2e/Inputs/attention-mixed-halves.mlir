// f16 queries with bf16 keys and values (refused by ../attention-f16.test).
func.func @forward(%q: tensor<1x1x32x16xf16>, %k: tensor<1x1x32x16xbf16>,
                   %v: tensor<1x1x32x16xbf16>) -> tensor<1x1x32x16xbf16> {
  %0 = attn.attention %q, %k, %v
      : (tensor<1x1x32x16xf16>, tensor<1x1x32x16xbf16>,
         tensor<1x1x32x16xbf16>) -> tensor<1x1x32x16xbf16>
  return %0 : tensor<1x1x32x16xbf16>
}
