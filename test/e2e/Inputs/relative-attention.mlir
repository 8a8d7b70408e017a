// attn.relative_attention at the shapes of relative-attention.test: a
// segment with no memory, a memory as long as the segment and twice as
// long, clamp_len and same_length. Each shape spans several tiles.
module {
  func.func @no_memory(%q: tensor<1x2x100x16xf32>, %k: tensor<1x2x100x16xf32>, %v: tensor<1x2x100x16xf32>, %pos: tensor<2x100x16xf32>, %u: tensor<2x16xf32>, %w: tensor<2x16xf32>) -> tensor<1x2x100x16xf32> {
    %0 = attn.relative_attention %q, %k, %v, %pos, %u, %w
        : (tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32>, tensor<2x100x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<1x2x100x16xf32>
    return %0 : tensor<1x2x100x16xf32>
  }
  func.func @memory(%q: tensor<2x2x100x16xf32>, %k: tensor<2x2x200x16xf32>, %v: tensor<2x2x200x8xf32>, %pos: tensor<2x200x16xf32>, %u: tensor<2x16xf32>, %w: tensor<2x16xf32>) -> tensor<2x2x100x8xf32> {
    %0 = attn.relative_attention %q, %k, %v, %pos, %u, %w
        : (tensor<2x2x100x16xf32>, tensor<2x2x200x16xf32>, tensor<2x2x200x8xf32>, tensor<2x200x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x2x100x8xf32>
    return %0 : tensor<2x2x100x8xf32>
  }
  func.func @two_memories(%q: tensor<1x2x70x16xf32>, %k: tensor<1x2x210x16xf32>, %v: tensor<1x2x210x16xf32>, %pos: tensor<2x210x16xf32>, %u: tensor<2x16xf32>, %w: tensor<2x16xf32>) -> tensor<1x2x70x16xf32> {
    %0 = attn.relative_attention %q, %k, %v, %pos, %u, %w
        : (tensor<1x2x70x16xf32>, tensor<1x2x210x16xf32>, tensor<1x2x210x16xf32>, tensor<2x210x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<1x2x70x16xf32>
    return %0 : tensor<1x2x70x16xf32>
  }
  func.func @clamped(%q: tensor<1x2x50x16xf32>, %k: tensor<1x2x150x16xf32>, %v: tensor<1x2x150x16xf32>, %pos: tensor<2x150x16xf32>, %u: tensor<2x16xf32>, %w: tensor<2x16xf32>) -> tensor<1x2x50x16xf32> {
    %0 = attn.relative_attention %q, %k, %v, %pos, %u, %w {clamp_len = 40 : i64}
        : (tensor<1x2x50x16xf32>, tensor<1x2x150x16xf32>, tensor<1x2x150x16xf32>, tensor<2x150x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<1x2x50x16xf32>
    return %0 : tensor<1x2x50x16xf32>
  }
  func.func @same_length(%q: tensor<1x2x64x16xf32>, %k: tensor<1x2x192x16xf32>, %v: tensor<1x2x192x16xf32>, %pos: tensor<2x192x16xf32>, %u: tensor<2x16xf32>, %w: tensor<2x16xf32>) -> tensor<1x2x64x16xf32> {
    %0 = attn.relative_attention %q, %k, %v, %pos, %u, %w {same_length = 100 : i64, scale = 0.3 : f32}
        : (tensor<1x2x64x16xf32>, tensor<1x2x192x16xf32>, tensor<1x2x192x16xf32>, tensor<2x192x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<1x2x64x16xf32>
    return %0 : tensor<1x2x64x16xf32>
  }
}
