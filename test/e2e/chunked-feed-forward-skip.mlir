// Two chunked feed-forwards whose first result is still read after the
// second runs (a skip connection), against the reference graph in
// Inputs/chunked-feed-forward-skip.json. Their chunks were assembled into one
// CSE'd tensor.empty, so the second overwrote the first while the add still
// needed it (relative error ~1). The same with a third chunked op writing
// into a chain that branches: every assembly must own its bytes.
// RUN: lcc %s -o %t.lcm
// RUN: lcc-testdata --output=%t.x.npy --shape=2,12,16 --seed=1
// RUN: lcc-testdata --output=%t.w1.npy --shape=16,24 --seed=2
// RUN: lcc-testdata --output=%t.b1.npy --shape=24 --seed=3
// RUN: lcc-testdata --output=%t.w2.npy --shape=24,16 --seed=4
// RUN: lcc-testdata --output=%t.b2.npy --shape=16 --seed=5
// RUN: rm -rf %t.out %t.ref && mkdir %t.out %t.ref
// RUN: lcc-run %t.lcm --input=%t.x.npy --input=%t.w1.npy --input=%t.b1.npy --input=%t.w2.npy --input=%t.b2.npy --output-dir=%t.out
// RUN: lcc-reference --graph=%S/Inputs/chunked-feed-forward-skip.json --input=%t.x.npy --input=%t.w1.npy --input=%t.b1.npy --input=%t.w2.npy --input=%t.b2.npy --output-dir=%t.ref
// RUN: lcc-compare %t.out/result0.npy %t.ref/result0.npy --rtol=1e-5
// RUN: lcc-compare %t.out/result1.npy %t.ref/result1.npy --rtol=1e-5
func.func @forward(%x: tensor<2x12x16xf32>, %w1: tensor<16x24xf32>, %b1: tensor<24xf32>,
                   %w2: tensor<24x16xf32>, %b2: tensor<16xf32>)
    -> (tensor<2x12x16xf32>, tensor<2x12x16xf32>) {
  %0 = attn.feed_forward relu %x, %w1, %b1, %w2, %b2 {chunks = 2 : i64}
      : (tensor<2x12x16xf32>, tensor<16x24xf32>, tensor<24xf32>, tensor<24x16xf32>, tensor<16xf32>) -> tensor<2x12x16xf32>
  %1 = attn.feed_forward gelu %0, %w1, %b1, %w2, %b2 {chunks = 2 : i64}
      : (tensor<2x12x16xf32>, tensor<16x24xf32>, tensor<24xf32>, tensor<24x16xf32>, tensor<16xf32>) -> tensor<2x12x16xf32>
  %2 = arith.addf %0, %1 : tensor<2x12x16xf32>
  %3 = attn.feed_forward relu %2, %w1, %b1, %w2, %b2 {chunks = 3 : i64}
      : (tensor<2x12x16xf32>, tensor<16x24xf32>, tensor<24xf32>, tensor<24x16xf32>, tensor<16xf32>) -> tensor<2x12x16xf32>
  %4 = arith.mulf %3, %0 : tensor<2x12x16xf32>
  return %2, %4 : tensor<2x12x16xf32>, tensor<2x12x16xf32>
}
