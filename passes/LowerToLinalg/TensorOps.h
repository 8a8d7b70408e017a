//===- TensorOps.h - tensor steps the lowerings share -----------*- C++ -*-===//
//
// Row-wise reductions, normalisation, padding, tiles and slices: the steps
// of more than one lowering, each built from TensorBuilder's linalg.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_PASSES_LOWERTOLINALG_TENSOROPS_H
#define LCC_PASSES_LOWERTOLINALG_TENSOROPS_H

#include "passes/LowerToLinalg/TensorBuilder.h"
#include "passes/Passes.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/APFloat.h"

#include <optional>

namespace lcc::lowering {

inline mlir::RankedTensorType tensorType(mlir::Value v) {
  return llvm::cast<mlir::RankedTensorType>(v.getType());
}

/// Whether every operand of `op` has a static shape (what the lowerings of
/// attention need: their tiles and loops are sized at compile time).
bool hasStaticShapes(mlir::Operation *op);

/// Builds with `build` at `b`'s insertion point and marks every op it
/// creates there recomputed (kRecomputedAttrName). A backward's
/// recomputation of what its forward computed (a feed-forward chunk's
/// hidden activations, LSH's chunk attention) is otherwise the same ops on
/// the same operands, which CSE merges into the forward's: that result
/// would live from the forward to the backward, the very memory
/// recomputing saves. The attribute keeps them apart (CSE compares
/// attributes).
template <typename Build>
auto buildRecomputed(mlir::OpBuilder &b, Build build) {
  return markOpsBuiltBy(b, kRecomputedAttrName, build);
}

/// The attention scale: the op's, or 1/sqrt(head_dim) of `query`
/// ([batch, heads, seq, head_dim]).
double attentionScale(std::optional<llvm::APFloat> scale, mlir::Value query);

/// input (..., in) · weight (in, out) + bias (out); `bias` may be null.
mlir::Value affine(TensorBuilder &tb, mlir::Value input, mlir::Value weight,
                   mlir::Value bias);

/// x + y for two tensors of one type.
mlir::Value addTensors(TensorBuilder &tb, mlir::Value x, mlir::Value y);

/// An i32 tensor of `value` (zeros for bucket counts, cluster histograms).
mlir::Value filledI32(mlir::OpBuilder &b, mlir::Location loc,
                      llvm::ArrayRef<int64_t> shape, int32_t value);
mlir::Value zerosI32(mlir::OpBuilder &b, mlir::Location loc,
                     llvm::ArrayRef<int64_t> shape);

/// The maximum, the sum and the sum of squares of each row (last
/// dimension) of `x`.
mlir::Value rowMax(TensorBuilder &tb, mlir::Value x);
mlir::Value rowSum(TensorBuilder &tb, mlir::Value x);
mlir::Value rowSumOfSquares(TensorBuilder &tb, mlir::Value x);

/// The maximum of each column (over the first dimension) of a 2-D `x`,
/// and `sums` plus the sum of each column: the loop over rows is
/// outermost, so every step is a contiguous, vectorizable pass along a row
/// with no reduction inside it.
mlir::Value columnMax(TensorBuilder &tb, mlir::Value x);
mlir::Value columnSum(TensorBuilder &tb, mlir::Value x, mlir::Value sums);

/// exp(x - maxima) of a 2-D `x` with one maximum per column (expShifted),
/// written over `x`, and `sums` plus each column's sum of them: the
/// exponentials and the sums, in one pass over x instead of two.
std::pair<mlir::Value, mlir::Value> columnExponentials(TensorBuilder &tb,
                                                       mlir::Value x,
                                                       mlir::Value maxima,
                                                       mlir::Value sums);

/// The unnormalised softmax of each row (last dimension) of `x`:
/// exp(x - max) (0 in a row that is all -inf), the row maxima and the sums
/// of the exponentials.
struct RowExponentials {
  mlir::Value exps, maxima, sums;
};
RowExponentials rowExponentials(TensorBuilder &tb, mlir::Value x);

/// The mean of each row (last dimension) of `x` and the inverse of its
/// standard deviation, 1/sqrt(var + epsilon), with the biased variance of
/// the centred values (stable for large means): layer norm's statistics.
std::pair<mlir::Value, mlir::Value>
rowMeanAndInverseStd(TensorBuilder &tb, mlir::Value x, double epsilon);

/// The sum of every element of `x`, as a 0-d tensor, in blocks
/// (passes/Summation.h).
mlir::Value totalSum(TensorBuilder &tb, mlir::Value x);

/// The sum of `x` over its dimension `dim` (the result drops it): over the
/// batch of a per-example gradient, say.
mlir::Value sumOverDim(TensorBuilder &tb, mlir::Value x, unsigned dim);

/// `x` as a matrix of rows: [positions, last dimension] (rank 1 is one
/// row; higher ranks collapse their leading dimensions).
mlir::Value asRows(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x);
/// The inverse of asRows: `rows` reshaped to `type`.
mlir::Value fromRows(mlir::OpBuilder &b, mlir::Location loc, mlir::Value rows,
                     mlir::RankedTensorType type);

/// [batch, heads, seq, dim] viewed as [batch*heads, seq, dim], and back to
/// `attentionType`.
mlir::Value attentionRows(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value x);
mlir::Value fromAttentionRows(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::Value rows,
                              mlir::RankedTensorType attentionType);

/// Index of the largest element of each row (last dimension) of `x`, as
/// i32; of equal maxima the first wins.
mlir::Value argmaxLastDim(mlir::OpBuilder &b, mlir::Location loc,
                          TensorBuilder &tb, mlir::Value x);

/// `x` with its elements widened or rounded to `type` (`x` itself when
/// they are of it).
mlir::Value withElementType(TensorBuilder &tb, mlir::Value x, mlir::Type type);

/// Rows of `x` divided by their L2 norm (floored: see inverseNorm); on
/// half rows the norm is summed in f32 and each row rounded once.
mlir::Value normalizeRows(TensorBuilder &tb, mlir::Value x);

/// The gradient of `x` through normalizeRows, given the gradient of the
/// normalised rows: (dn - n (n · dn)) / ||x|| where the norm is above the
/// floor of inverseNorm, dn / floor below it. f32, computed in f32 on half
/// operands too.
mlir::Value normalizeRowsBackward(TensorBuilder &tb, mlir::Value x,
                                  mlir::Value normalizedGrad);

/// Pads dimension 2 (seq) of `x` with `value` (zeros by default) up to
/// `paddedSeq`.
mlir::Value padSeq(TensorBuilder &tb, mlir::Value x, int64_t paddedSeq,
                   double value = 0.0);

/// The [tile, dim] slice at (b, h, offset) of a [batch, heads, seq, dim]
/// tensor.
mlir::Value tileOf(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                   mlir::Value batch, mlir::Value head, mlir::Value offset,
                   int64_t tile);

/// The [tile] slice at (b, h, offset) of a [batch, heads, seq] tensor (a
/// row statistic: a logsumexp, a delta).
mlir::Value rowTileOf(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                      mlir::Value batch, mlir::Value head, mlir::Value offset,
                      int64_t tile);

/// The slice of `source` at `offsets` of `sizes` (unit strides), typed
/// `type`: a rank-reducing slice when `type` drops unit dimensions.
mlir::Value sliceOf(mlir::OpBuilder &b, mlir::Location loc,
                    mlir::RankedTensorType type, mlir::Value source,
                    llvm::ArrayRef<mlir::OpFoldResult> offsets,
                    llvm::ArrayRef<mlir::OpFoldResult> sizes);

/// In the terminator of an scf.forall, writes `tile` into the shared
/// output `shared` at `offsets` of `sizes` (unit strides). The insertion
/// point must be in that terminator.
void insertIntoShared(mlir::OpBuilder &b, mlir::Location loc, mlir::Value tile,
                      mlir::Value shared,
                      llvm::ArrayRef<mlir::OpFoldResult> offsets,
                      llvm::ArrayRef<mlir::OpFoldResult> sizes);

/// The value a mask or score region (an attention's, of scalar arith and
/// math ops ending in attn.yield) yields for `arguments`, its ops cloned at
/// the builder's insertion point.
mlir::Value inlineScalarRegion(mlir::OpBuilder &b, mlir::Region &region,
                               mlir::ValueRange arguments);

/// Replaces `op` (with a single-block region `region`) by the region's
/// body, its arguments bound to `arguments`, and returns what it yielded.
llvm::SmallVector<mlir::Value> inlineRegion(mlir::PatternRewriter &rewriter,
                                            mlir::Operation *op,
                                            mlir::Region &region,
                                            mlir::ValueRange arguments);

} // namespace lcc::lowering

#endif // LCC_PASSES_LOWERTOLINALG_TENSOROPS_H
