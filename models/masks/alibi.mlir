// ALiBi (Press et al. 2022) as a score region: causal attention whose score
// of key j for query i of head h gains m_h * (j - i), m_h = 2^(-8 (h+1) / H)
// with H = 4 heads; no position embeddings needed.
// Reference: lcc-reference --op=attention --causal --score=alibi
func.func @forward(%q: tensor<1x4x256x16xf32>, %k: tensor<1x4x256x16xf32>, %v: tensor<1x4x256x16xf32>) -> tensor<1x4x256x16xf32> {
  %0 = attn.attention %q, %k, %v {causal = true} : (tensor<1x4x256x16xf32>, tensor<1x4x256x16xf32>, tensor<1x4x256x16xf32>) -> tensor<1x4x256x16xf32>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %one = arith.constant 1 : index
        %h1 = arith.addi %h, %one : index
        %h64 = arith.index_cast %h1 : index to i64
        %hf = arith.sitofp %h64 : i64 to f32
        // ln(2^(-8/H)) = -8 ln 2 / 4
        %rate = arith.constant -1.38629436 : f32
        %exponent = arith.mulf %hf, %rate : f32
        %slope = math.exp %exponent : f32
        %d = arith.subi %j, %i : index
        %d64 = arith.index_cast %d : index to i64
        %df = arith.sitofp %d64 : i64 to f32
        %bias = arith.mulf %slope, %df : f32
        %t = arith.addf %s, %bias : f32
        attn.yield %t : f32
      }
  return %0 : tensor<1x4x256x16xf32>
}
