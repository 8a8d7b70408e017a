// A sliding window (Longformer's local attention, Mistral's window): query i
// sees key j iff |i - j| < 64. With 64-token tiles, a query tile reads only
// the key tiles next to it: the other 10 of 16 are never touched.
// Reference: lcc-reference --op=attention --mask=sliding:64
func.func @forward(%q: tensor<1x4x256x16xf32>, %k: tensor<1x4x256x16xf32>, %v: tensor<1x4x256x16xf32>) -> tensor<1x4x256x16xf32> {
  %0 = attn.attention %q, %k, %v : (tensor<1x4x256x16xf32>, tensor<1x4x256x16xf32>, tensor<1x4x256x16xf32>) -> tensor<1x4x256x16xf32>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %d = arith.subi %i, %j : index
        %e = arith.subi %j, %i : index
        %distance = arith.maxsi %d, %e : index
        %w = arith.constant 64 : index
        %near = arith.cmpi slt, %distance, %w : index
        attn.yield %near : i1
      }
  return %0 : tensor<1x4x256x16xf32>
}
