// attn.sinusoidal_encoding compiled and run against the reference at 1e-5:
// 3000 positions of 64 features (angles up to 2999 radians) and the
// smallest, 5 x 2 (one frequency, 1).
// RUN: lcc %s -o %t.lcm
// RUN: rm -rf %t.out %t.ref && mkdir %t.out %t.ref
// RUN: lcc-run %t.lcm --output-dir=%t.out
// RUN: lcc-reference --graph=%S/Inputs/sinusoidal-encoding.json --output-dir=%t.ref
// RUN: lcc-compare %t.out/result0.npy %t.ref/result0.npy --rtol=1e-5
// RUN: lcc-compare %t.out/result1.npy %t.ref/result1.npy --rtol=1e-5
func.func @forward() -> (tensor<3000x64xf32>, tensor<5x2xf32>) {
  %r = attn.sinusoidal_encoding : tensor<3000x64xf32>
  %s = attn.sinusoidal_encoding : tensor<5x2xf32>
  return %r, %s : tensor<3000x64xf32>, tensor<5x2xf32>
}
