// One causal attention over 262144 positions (lcc-attention-map.test).
func.func @f(%q: tensor<1x1x262144x8xf32>, %k: tensor<1x1x262144x8xf32>, %v: tensor<1x1x262144x8xf32>) -> tensor<1x1x262144x8xf32> {
  %o = attn.attention %q, %k, %v {causal = true} : (tensor<1x1x262144x8xf32>, tensor<1x1x262144x8xf32>, tensor<1x1x262144x8xf32>) -> tensor<1x1x262144x8xf32>
  return %o : tensor<1x1x262144x8xf32>
}
