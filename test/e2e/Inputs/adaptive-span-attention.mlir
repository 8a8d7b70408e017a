// attn.adaptive_span_attention at the shapes of adaptive-span-attention.test:
// a segment with no memory, a memory as long as the segment and twice as
// long (all causal), and a non-causal one whose queries also see later
// keys. Each shape spans several tiles.
module {
  func.func @no_memory(%q: tensor<1x2x100x16xf32>, %k: tensor<1x2x100x16xf32>, %v: tensor<1x2x100x16xf32>, %z: tensor<2xf32>) -> tensor<1x2x100x16xf32> {
    %0 = attn.adaptive_span_attention %q, %k, %v, %z {max_span = 64 : i64, ramp = 16 : i64, causal = true}
        : (tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32>, tensor<2xf32>) -> tensor<1x2x100x16xf32>
    return %0 : tensor<1x2x100x16xf32>
  }
  func.func @memory(%q: tensor<2x2x100x16xf32>, %k: tensor<2x2x200x16xf32>, %v: tensor<2x2x200x8xf32>, %z: tensor<2xf32>) -> tensor<2x2x100x8xf32> {
    %0 = attn.adaptive_span_attention %q, %k, %v, %z {max_span = 150 : i64, causal = true}
        : (tensor<2x2x100x16xf32>, tensor<2x2x200x16xf32>, tensor<2x2x200x8xf32>, tensor<2xf32>) -> tensor<2x2x100x8xf32>
    return %0 : tensor<2x2x100x8xf32>
  }
  func.func @two_memories(%q: tensor<1x2x70x16xf32>, %k: tensor<1x2x210x16xf32>, %v: tensor<1x2x210x16xf32>, %z: tensor<2xf32>) -> tensor<1x2x70x16xf32> {
    %0 = attn.adaptive_span_attention %q, %k, %v, %z {max_span = 100 : i64, ramp = 20 : i64, causal = true}
        : (tensor<1x2x70x16xf32>, tensor<1x2x210x16xf32>, tensor<1x2x210x16xf32>, tensor<2xf32>) -> tensor<1x2x70x16xf32>
    return %0 : tensor<1x2x70x16xf32>
  }
  func.func @noncausal(%q: tensor<1x2x64x16xf32>, %k: tensor<1x2x96x16xf32>, %v: tensor<1x2x96x16xf32>, %z: tensor<2xf32>) -> tensor<1x2x64x16xf32> {
    %0 = attn.adaptive_span_attention %q, %k, %v, %z {max_span = 40 : i64, ramp = 8 : i64, scale = 0.3 : f32}
        : (tensor<1x2x64x16xf32>, tensor<1x2x96x16xf32>, tensor<1x2x96x16xf32>, tensor<2xf32>) -> tensor<1x2x64x16xf32>
    return %0 : tensor<1x2x64x16xf32>
  }
}
