// Feed-forward with exact GELU in 3 chunks of a 10-token sequence (two full
// chunks of 4 rows and a tail of 2), and with ReLU unchunked, against the
// reference.
// RUN: lcc %s -o %t.lcm
// RUN: lcc-testdata --output=%t.x.npy --shape=2,10,16
// RUN: lcc-testdata --output=%t.w1.npy --shape=16,40
// RUN: lcc-testdata --output=%t.b1.npy --shape=40
// RUN: lcc-testdata --output=%t.w2.npy --shape=40,16
// RUN: lcc-testdata --output=%t.b2.npy --shape=16
// RUN: rm -rf %t.out && mkdir %t.out
// RUN: lcc-run %t.lcm --input=%t.x.npy --input=%t.w1.npy --input=%t.b1.npy --input=%t.w2.npy --input=%t.b2.npy --output-dir=%t.out
// RUN: lcc-reference --op=feed_forward --activation=gelu --input=%t.x.npy --input=%t.w1.npy --input=%t.b1.npy --input=%t.w2.npy --input=%t.b2.npy --output=%t.gelu.npy
// RUN: lcc-compare %t.out/result0.npy %t.gelu.npy --rtol=1e-5
// RUN: lcc-reference --op=feed_forward --activation=relu --input=%t.x.npy --input=%t.w1.npy --input=%t.b1.npy --input=%t.w2.npy --input=%t.b2.npy --output=%t.relu.npy
// RUN: lcc-compare %t.out/result1.npy %t.relu.npy --rtol=1e-5
func.func @forward(%x: tensor<2x10x16xf32>, %w1: tensor<16x40xf32>, %b1: tensor<40xf32>,
                   %w2: tensor<40x16xf32>, %b2: tensor<16xf32>)
    -> (tensor<2x10x16xf32>, tensor<2x10x16xf32>) {
  %0 = attn.feed_forward gelu %x, %w1, %b1, %w2, %b2 {chunks = 3 : i64}
      : (tensor<2x10x16xf32>, tensor<16x40xf32>, tensor<40xf32>, tensor<40x16xf32>,
         tensor<16xf32>) -> tensor<2x10x16xf32>
  %1 = attn.feed_forward relu %x, %w1, %b1, %w2, %b2
      : (tensor<2x10x16xf32>, tensor<16x40xf32>, tensor<40xf32>, tensor<40x16xf32>,
         tensor<16xf32>) -> tensor<2x10x16xf32>
  return %0, %1 : tensor<2x10x16xf32>, tensor<2x10x16xf32>
}
