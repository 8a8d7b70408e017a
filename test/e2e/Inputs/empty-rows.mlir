// Queries 0-3 score every key -inf (score region): once without a mask
// region, once under a mask that hides nothing, once under a mask that
// hides every key from them instead. One rule for all three (docs/masks.md):
// those rows are zeros.
func.func @score_only(%q: tensor<1x2x80x8xf32>, %k: tensor<1x2x80x8xf32>, %v: tensor<1x2x80x8xf32>) -> tensor<1x2x80x8xf32> {
  %0 = attn.attention %q, %k, %v : (tensor<1x2x80x8xf32>, tensor<1x2x80x8xf32>, tensor<1x2x80x8xf32>) -> tensor<1x2x80x8xf32>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %c4 = arith.constant 4 : index
        %early = arith.cmpi slt, %i, %c4 : index
        %ninf = arith.constant 0xFF800000 : f32
        %t = arith.select %early, %ninf, %s : f32
        attn.yield %t : f32
      }
  return %0 : tensor<1x2x80x8xf32>
}

func.func @score_and_mask(%q: tensor<1x2x80x8xf32>, %k: tensor<1x2x80x8xf32>, %v: tensor<1x2x80x8xf32>) -> tensor<1x2x80x8xf32> {
  %0 = attn.attention %q, %k, %v : (tensor<1x2x80x8xf32>, tensor<1x2x80x8xf32>, tensor<1x2x80x8xf32>) -> tensor<1x2x80x8xf32>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %true = arith.constant true
        attn.yield %true : i1
      } score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %c4 = arith.constant 4 : index
        %early = arith.cmpi slt, %i, %c4 : index
        %ninf = arith.constant 0xFF800000 : f32
        %t = arith.select %early, %ninf, %s : f32
        attn.yield %t : f32
      }
  return %0 : tensor<1x2x80x8xf32>
}

func.func @mask_only(%q: tensor<1x2x80x8xf32>, %k: tensor<1x2x80x8xf32>, %v: tensor<1x2x80x8xf32>) -> tensor<1x2x80x8xf32> {
  %0 = attn.attention %q, %k, %v : (tensor<1x2x80x8xf32>, tensor<1x2x80x8xf32>, tensor<1x2x80x8xf32>) -> tensor<1x2x80x8xf32>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c4 = arith.constant 4 : index
        %late = arith.cmpi sge, %i, %c4 : index
        attn.yield %late : i1
      }
  return %0 : tensor<1x2x80x8xf32>
}
