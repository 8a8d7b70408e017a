// Mask and score regions that divide by zero, divide the most negative
// value by -1 and shift by more than the width, at some (query, key):
// each has the one result docs/masks.md gives it, never a trap, and
// region-arithmetic.test checks each against the reference's
// expression (Expressions.h), written beside its function.

// divui_by_key: expr:(ult (divui i j) 3)
func.func @divui_by_key(%q: tensor<1x2x64x8xf32>, %k: tensor<1x2x64x8xf32>, %v: tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32> {
  %0 = attn.attention %q, %k, %v : (tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c3 = arith.constant 3 : index
        %d = arith.divui %i, %j : index
        %t = arith.cmpi ult, %d, %c3 : index
        attn.yield %t : i1
      }
  return %0 : tensor<1x2x64x8xf32>
}

// divsi_by_distance: expr:(sle (divsi i (subi j i)) 2)
func.func @divsi_by_distance(%q: tensor<1x2x64x8xf32>, %k: tensor<1x2x64x8xf32>, %v: tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32> {
  %0 = attn.attention %q, %k, %v : (tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c2 = arith.constant 2 : index
        %dist = arith.subi %j, %i : index
        %d = arith.divsi %i, %dist : index
        %t = arith.cmpi sle, %d, %c2 : index
        attn.yield %t : i1
      }
  return %0 : tensor<1x2x64x8xf32>
}

// remui_by_key: expr:(eq (remui i j) 0)
func.func @remui_by_key(%q: tensor<1x2x64x8xf32>, %k: tensor<1x2x64x8xf32>, %v: tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32> {
  %0 = attn.attention %q, %k, %v : (tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c0 = arith.constant 0 : index
        %r = arith.remui %i, %j : index
        %t = arith.cmpi eq, %r, %c0 : index
        attn.yield %t : i1
      }
  return %0 : tensor<1x2x64x8xf32>
}

// ceildivsi_by_distance: expr:(sge (ceildivsi (addi i 1) (subi j i)) -1)
func.func @ceildivsi_by_distance(%q: tensor<1x2x64x8xf32>, %k: tensor<1x2x64x8xf32>, %v: tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32> {
  %0 = attn.attention %q, %k, %v : (tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c1 = arith.constant 1 : index
        %cm1 = arith.constant -1 : index
        %n = arith.addi %i, %c1 : index
        %dist = arith.subi %j, %i : index
        %d = arith.ceildivsi %n, %dist : index
        %t = arith.cmpi sge, %d, %cm1 : index
        attn.yield %t : i1
      }
  return %0 : tensor<1x2x64x8xf32>
}

// floordivsi_by_distance: expr:(slt (floordivsi j (subi i j)) 1)
func.func @floordivsi_by_distance(%q: tensor<1x2x64x8xf32>, %k: tensor<1x2x64x8xf32>, %v: tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32> {
  %0 = attn.attention %q, %k, %v : (tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c1 = arith.constant 1 : index
        %dist = arith.subi %i, %j : index
        %d = arith.floordivsi %j, %dist : index
        %t = arith.cmpi slt, %d, %c1 : index
        attn.yield %t : i1
      }
  return %0 : tensor<1x2x64x8xf32>
}

// constant_zero: expr:(andi (ult (divui i 0) j) (sge (remsi i 0) j))
func.func @constant_zero(%q: tensor<1x2x64x8xf32>, %k: tensor<1x2x64x8xf32>, %v: tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32> {
  %0 = attn.attention %q, %k, %v : (tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c0 = arith.constant 0 : index
        %d = arith.divui %i, %c0 : index
        %after = arith.cmpi ult, %d, %j : index
        %r = arith.remsi %i, %c0 : index
        %before = arith.cmpi sge, %r, %j : index
        %t = arith.andi %after, %before : i1
        attn.yield %t : i1
      }
  return %0 : tensor<1x2x64x8xf32>
}

// min_by_minus_one: expr:(ori (slt (divsi (addi -9223372036854775808 i) -1) (addi -9223372036854775808 j)) (eq (remsi -9223372036854775808 (subi j (addi i 1))) 0))
func.func @min_by_minus_one(%q: tensor<1x2x64x8xf32>, %k: tensor<1x2x64x8xf32>, %v: tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32> {
  %0 = attn.attention %q, %k, %v : (tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %min = arith.constant -9223372036854775808 : index
        %cm1 = arith.constant -1 : index
        %c1 = arith.constant 1 : index
        %x = arith.addi %min, %i : index
        %quot = arith.divsi %x, %cm1 : index
        %y = arith.addi %min, %j : index
        %lt = arith.cmpi slt, %quot, %y : index
        %i1 = arith.addi %i, %c1 : index
        %by = arith.subi %j, %i1 : index
        %r = arith.remsi %min, %by : index
        %c0 = arith.constant 0 : index
        %zero = arith.cmpi eq, %r, %c0 : index
        %t = arith.ori %lt, %zero : i1
        attn.yield %t : i1
      }
  return %0 : tensor<1x2x64x8xf32>
}

// shifts: expr:(ugt (shrui (shli i j) (subi j 1)) (shrsi (subi i j) j))
func.func @shifts(%q: tensor<1x2x64x8xf32>, %k: tensor<1x2x64x8xf32>, %v: tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32> {
  %0 = attn.attention %q, %k, %v : (tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c1 = arith.constant 1 : index
        %l = arith.shli %i, %j : index
        %jm = arith.subi %j, %c1 : index
        %u = arith.shrui %l, %jm : index
        %d = arith.subi %i, %j : index
        %s = arith.shrsi %d, %j : index
        %t = arith.cmpi ugt, %u, %s : index
        attn.yield %t : i1
      }
  return %0 : tensor<1x2x64x8xf32>
}

// score_divui: expr:(addf s (mulf (sitofp (divui 7 j)) 0.5))
func.func @score_divui(%q: tensor<1x2x64x8xf32>, %k: tensor<1x2x64x8xf32>, %v: tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32> {
  %0 = attn.attention %q, %k, %v : (tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %c7 = arith.constant 7 : index
        %d = arith.divui %c7, %j : index
        %w = arith.index_cast %d : index to i64
        %f = arith.sitofp %w : i64 to f32
        %half = arith.constant 5.0e-01 : f32
        %b2 = arith.mulf %f, %half : f32
        %new = arith.addf %s, %b2 : f32
        attn.yield %new : f32
      }
  return %0 : tensor<1x2x64x8xf32>
}
