// Longformer (Beltagy et al. 2020): a sliding window of 32 keys on each side
// plus 16 global tokens that see, and are seen by, every position.
// Reference: lcc-reference --op=attention --mask=longformer:32,16
func.func @forward(%q: tensor<1x4x256x16xf32>, %k: tensor<1x4x256x16xf32>, %v: tensor<1x4x256x16xf32>) -> tensor<1x4x256x16xf32> {
  %0 = attn.attention %q, %k, %v : (tensor<1x4x256x16xf32>, tensor<1x4x256x16xf32>, tensor<1x4x256x16xf32>) -> tensor<1x4x256x16xf32>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %d = arith.subi %i, %j : index
        %e = arith.subi %j, %i : index
        %distance = arith.maxsi %d, %e : index
        %w = arith.constant 32 : index
        %near = arith.cmpi slt, %distance, %w : index
        %g = arith.constant 16 : index
        %globalQuery = arith.cmpi slt, %i, %g : index
        %globalKey = arith.cmpi slt, %j, %g : index
        %global = arith.ori %globalQuery, %globalKey : i1
        %visible = arith.ori %near, %global : i1
        attn.yield %visible : i1
      }
  return %0 : tensor<1x4x256x16xf32>
}
