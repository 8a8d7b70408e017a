// Document masking: four documents of 100, 60, 40 and 56 tokens packed into
// one sequence; a token attends within its own document only (causal, as in
// packed language-model training). The mask is block-diagonal; tiles across
// two documents are never read.
// Reference: lcc-reference --op=attention --causal --mask=documents:100,60,40,56
func.func @forward(%q: tensor<1x4x256x16xf32>, %k: tensor<1x4x256x16xf32>, %v: tensor<1x4x256x16xf32>) -> tensor<1x4x256x16xf32> {
  %0 = attn.attention %q, %k, %v {causal = true} : (tensor<1x4x256x16xf32>, tensor<1x4x256x16xf32>, tensor<1x4x256x16xf32>) -> tensor<1x4x256x16xf32>
      mask {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %end0 = arith.constant 100 : index
        %end1 = arith.constant 160 : index
        %end2 = arith.constant 200 : index
        %i0 = arith.cmpi uge, %i, %end0 : index
        %i1 = arith.cmpi uge, %i, %end1 : index
        %i2 = arith.cmpi uge, %i, %end2 : index
        %j0 = arith.cmpi uge, %j, %end0 : index
        %j1 = arith.cmpi uge, %j, %end1 : index
        %j2 = arith.cmpi uge, %j, %end2 : index
        %a0 = arith.extui %i0 : i1 to i64
        %a1 = arith.extui %i1 : i1 to i64
        %a2 = arith.extui %i2 : i1 to i64
        %b0 = arith.extui %j0 : i1 to i64
        %b1 = arith.extui %j1 : i1 to i64
        %b2 = arith.extui %j2 : i1 to i64
        %a01 = arith.addi %a0, %a1 : i64
        %docI = arith.addi %a01, %a2 : i64
        %b01 = arith.addi %b0, %b1 : i64
        %docJ = arith.addi %b01, %b2 : i64
        %same = arith.cmpi eq, %docI, %docJ : i64
        attn.yield %same : i1
      }
  return %0 : tensor<1x4x256x16xf32>
}
