// A malformed linalg.broadcast: MLIR 22's op parser reports "expected ']'" and
// then dereferences the null attribute it failed to parse (mlir-opt crashes
// too). lcc-errors.test checks that lcc says the first error and exits 1.
func.func @f(%w: tensor<7x5xf32>, %e: tensor<2x7x5xf32>) -> tensor<2x7x5xf32> {
  %b = linalg.broadcast ins(%w : tensor<7x5xf32>) outs(%e : tensor<2x7x5xf32>) dimensions = [0 oops
  return %b : tensor<2x7x5xf32>
}
