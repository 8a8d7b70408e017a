//===- TensorBuilder.h - building linalg on tensors -------------*- C++ -*-===//
//
// The small vocabulary the lowerings of attn ops are written in: elementwise
// maps, reductions over the last dimension and contractions, each one
// linalg.generic on tensors, so later fusion and tiling see ordinary linalg.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_PASSES_LOWERTOLINALG_TENSORBUILDER_H
#define LCC_PASSES_LOWERTOLINALG_TENSORBUILDER_H

#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace lcc {

/// Body of a linalg.generic: receives the scalar of every input, then the
/// output (accumulator) scalar, and returns the value to yield.
using ScalarBody = llvm::function_ref<mlir::Value(
    mlir::OpBuilder &, mlir::Location, mlir::ValueRange)>;

/// acc + x * y with the flags of a contraction (reassociable sums), so that
/// LLVM may vectorise the loops around it.
mlir::Value multiplyAccumulate(mlir::OpBuilder &b, mlir::Location loc,
                               mlir::Value x, mlir::Value y, mlir::Value acc);

class TensorBuilder {
public:
  TensorBuilder(mlir::OpBuilder &builder, mlir::Location loc)
      : b(builder), loc(loc) {}

  mlir::OpBuilder &builder() { return b; }
  mlir::Location location() const { return loc; }

  mlir::Value index(int64_t value);
  mlir::Value scalar(mlir::Type type, double value);

  /// tensor.empty of a static shape.
  mlir::Value empty(llvm::ArrayRef<int64_t> shape, mlir::Type elementType);
  /// A tensor of `shape` filled with `value`.
  mlir::Value filled(llvm::ArrayRef<int64_t> shape, mlir::Type elementType,
                     double value);

  /// One linalg.generic with a single result written into `init`. `maps`
  /// holds one map per input followed by the output's map.
  mlir::Value generic(mlir::Value init, mlir::ValueRange inputs,
                      llvm::ArrayRef<mlir::AffineMap> maps,
                      llvm::ArrayRef<mlir::utils::IteratorType> iterators,
                      ScalarBody body);

  /// Elementwise map producing a fresh tensor of `shape`; `inputMaps` index
  /// each input from the result's dimensions (for broadcasting).
  mlir::Value map(llvm::ArrayRef<int64_t> shape, mlir::Type elementType,
                  mlir::ValueRange inputs,
                  llvm::ArrayRef<mlir::AffineMap> inputMaps, ScalarBody body);
  /// Elementwise map over inputs that all have the result's shape.
  mlir::Value mapSameShape(mlir::ValueRange inputs, ScalarBody body);

  /// Reduces the last dimension of the inputs (all of the same shape)
  /// starting from `initValue`; the body combines (inputs..., acc).
  mlir::Value reduceLastDim(mlir::ValueRange inputs, double initValue,
                            ScalarBody body);
  /// As reduceLastDim, with extra inputs broadcast along the last dimension
  /// (shape without it), e.g. a row maximum already computed.
  mlir::Value reduceLastDim(mlir::ValueRange inputs, mlir::ValueRange rowInputs,
                            double initValue, ScalarBody body);

  /// sum_k a(i..., k) * b(k, n) accumulated into `init` (i..., n).
  mlir::Value matmul(mlir::Value a, mlir::Value b, mlir::Value init);
  /// sum_k a(m, k) * b(n, k) accumulated into `init` (m, n).
  mlir::Value matmulTransposedB(mlir::Value a, mlir::Value b, mlir::Value init);
  /// sum_k a(k, m) * b(k, n) accumulated into `init` (m, n): a weight's
  /// gradient, summed over positions k.
  mlir::Value matmulTransposedA(mlir::Value a, mlir::Value b, mlir::Value init);
  /// A contraction over k = 2p + j of half-precision operands in pairs,
  /// accumulated in f32: init(m, n) += sum_{p,j} a(m, p, j) * b(p, n, j).
  /// A is read by rows of k and B in adjacent pairs of k (the layout of
  /// AVX-512's bf16 dot products and AMX's tile products); loops
  /// (m, n, p, j).
  mlir::Value pairedMatmul(mlir::Value a, mlir::Value b, mlir::Value init);

  /// Affine map helpers over `rank` loop dimensions.
  mlir::AffineMap identityMap(unsigned rank);
  /// (d0, ..., d{rank-1}) -> (d0, ..., d{rank-2}).
  mlir::AffineMap dropLastMap(unsigned rank);
  /// (d0, ..., d{rank-1}) -> (d{rank-1}).
  mlir::AffineMap lastDimMap(unsigned rank);
  mlir::AffineMap map(unsigned rank, llvm::ArrayRef<unsigned> dims);

private:
  mlir::OpBuilder &b;
  mlir::Location loc;
};

} // namespace lcc

#endif // LCC_PASSES_LOWERTOLINALG_TENSORBUILDER_H
