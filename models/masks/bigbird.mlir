// BigBird (Zaheer et al. 2020) in blocks of 32 positions: each query block
// sees its own and the neighbouring key blocks (window), the first block is
// global, and a fixed pseudo-random choice of further blocks is visible:
// block kb to block qb iff (qb * 31 + kb * 17 + 5) mod 101 < 20 (seed 5,
// about 20% of the pairs). The choice is a constant of the model, so the
// block table is computed once, at compile time.
// Reference: lcc-reference --op=attention --mask=bigbird:32,1,20,5
func.func @forward(%q: tensor<1x4x256x16xf32>, %k: tensor<1x4x256x16xf32>, %v: tensor<1x4x256x16xf32>) -> tensor<1x4x256x16xf32> {
  %0 = attn.attention %q, %k, %v : (tensor<1x4x256x16xf32>, tensor<1x4x256x16xf32>, tensor<1x4x256x16xf32>) -> tensor<1x4x256x16xf32>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %block = arith.constant 32 : index
        %qb = arith.divui %i, %block : index
        %kb = arith.divui %j, %block : index
        %d = arith.subi %qb, %kb : index
        %e = arith.subi %kb, %qb : index
        %distance = arith.maxsi %d, %e : index
        %one = arith.constant 1 : index
        %window = arith.cmpi sle, %distance, %one : index
        %globalQuery = arith.cmpi slt, %qb, %one : index
        %globalKey = arith.cmpi slt, %kb, %one : index
        %c31 = arith.constant 31 : index
        %c17 = arith.constant 17 : index
        %seed = arith.constant 5 : index
        %c101 = arith.constant 101 : index
        %c20 = arith.constant 20 : index
        %x = arith.muli %qb, %c31 : index
        %y = arith.muli %kb, %c17 : index
        %xy = arith.addi %x, %y : index
        %hash = arith.addi %xy, %seed : index
        %bucket = arith.remui %hash, %c101 : index
        %random = arith.cmpi ult, %bucket, %c20 : index
        %global = arith.ori %globalQuery, %globalKey : i1
        %local = arith.ori %window, %global : i1
        %visible = arith.ori %local, %random : i1
        attn.yield %visible : i1
      }
  return %0 : tensor<1x4x256x16xf32>
}
