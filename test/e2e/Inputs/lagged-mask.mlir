// Query i sees keys j <= i - 5: the first five queries see no key at all
// and get zeros.
func.func @forward(%q: tensor<1x2x100x8xf32>, %k: tensor<1x2x100x8xf32>, %v: tensor<1x2x100x8xf32>) -> tensor<1x2x100x8xf32> {
  %0 = attn.attention %q, %k, %v : (tensor<1x2x100x8xf32>, tensor<1x2x100x8xf32>, tensor<1x2x100x8xf32>) -> tensor<1x2x100x8xf32>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c5 = arith.constant 5 : index
        %jl = arith.addi %j, %c5 : index
        %t = arith.cmpi sle, %jl, %i : index
        attn.yield %t : i1
      }
  return %0 : tensor<1x2x100x8xf32>
}
