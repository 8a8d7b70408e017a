// The upstream ops models use beside the attn dialect, compiled and run
// against the reference graph in Inputs/upstream-ops.json:
// - tensor.concat along the feature and the sequence axes (used to fail:
//   "'tensor.concat' op was left outside every dispatch");
// - positional embeddings [seq, d] added to a batch of 2 through
//   linalg.broadcast (arith.addf needs equal shapes);
// - linalg.fill + linalg.batch_matmul with a broadcast weight.
// RUN: lcc %s -o %t.lcm
// RUN: lcc-testdata --output=%t.x.npy --shape=2,6,4 --seed=1
// RUN: lcc-testdata --output=%t.y.npy --shape=2,6,3 --seed=2
// RUN: lcc-testdata --output=%t.pos.npy --shape=6,7 --seed=3
// RUN: lcc-testdata --output=%t.w.npy --shape=7,5 --seed=4
// RUN: rm -rf %t.out %t.ref && mkdir %t.out %t.ref
// RUN: lcc-run %t.lcm --input=%t.x.npy --input=%t.y.npy --input=%t.pos.npy --input=%t.w.npy --output-dir=%t.out
// RUN: lcc-reference --graph=%S/Inputs/upstream-ops.json --input=%t.x.npy --input=%t.y.npy --input=%t.pos.npy --input=%t.w.npy --output-dir=%t.ref
// RUN: lcc-compare %t.out/result0.npy %t.ref/result0.npy --rtol=1e-5
// RUN: lcc-compare %t.out/result1.npy %t.ref/result1.npy --rtol=1e-5
// RUN: lcc-compare %t.out/result2.npy %t.ref/result2.npy --rtol=1e-5
func.func @forward(%x: tensor<2x6x4xf32>, %y: tensor<2x6x3xf32>, %pos: tensor<6x7xf32>, %w: tensor<7x5xf32>)
    -> (tensor<2x6x7xf32>, tensor<2x12x4xf32>, tensor<2x6x5xf32>) {
  %c = tensor.concat dim(2) %x, %y : (tensor<2x6x4xf32>, tensor<2x6x3xf32>) -> tensor<2x6x7xf32>
  %e = tensor.empty() : tensor<2x6x7xf32>
  %b = linalg.broadcast ins(%pos : tensor<6x7xf32>) outs(%e : tensor<2x6x7xf32>) dimensions = [0]
  %s = arith.addf %c, %b : tensor<2x6x7xf32>
  %c2 = tensor.concat dim(1) %x, %x : (tensor<2x6x4xf32>, tensor<2x6x4xf32>) -> tensor<2x12x4xf32>
  %ew = tensor.empty() : tensor<2x7x5xf32>
  %wb = linalg.broadcast ins(%w : tensor<7x5xf32>) outs(%ew : tensor<2x7x5xf32>) dimensions = [0]
  %e2 = tensor.empty() : tensor<2x6x5xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e2 : tensor<2x6x5xf32>) -> tensor<2x6x5xf32>
  %m = linalg.batch_matmul ins(%s, %wb : tensor<2x6x7xf32>, tensor<2x7x5xf32>) outs(%f : tensor<2x6x5xf32>) -> tensor<2x6x5xf32>
  return %s, %c2, %m : tensor<2x6x7xf32>, tensor<2x12x4xf32>, tensor<2x6x5xf32>
}
