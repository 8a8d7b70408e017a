//===- HeadsOverRanks.h - a sequence's shares and the ranks' heads -*- C++
//-*-===//
//
// The steps context parallelism builds between ranks that each hold a
// share of one sequence (docs/training.md, "Context parallel"): the
// shares' layout (rank r chunks r and 2P - 1 - r of 2P), taking a rank's
// share of a tensor every rank holds, and DeepSpeed-Ulysses'
// exchange of an attention's [batch, heads, seq / P, dim] operands for
// [batch, heads / P, seq, dim] (each rank the whole sequence of its share
// of the heads) and of its results back.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_PASSES_PARALLEL_HEADSOVERRANKS_H
#define LCC_PASSES_PARALLEL_HEADSOVERRANKS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace lcc::attn {
class AttentionFormInterface;
} // namespace lcc::attn

namespace lcc::parallel {

/// `type` with dimension `dim` divided by `ranks`.
mlir::RankedTensorType shareOf(mlir::RankedTensorType type, int64_t dim,
                               int64_t ranks);

/// Chunk `chunk` of `count` equal chunks of `v` along `dim`.
mlir::Value chunkOf(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                    int64_t dim, int64_t chunk, int64_t count);

/// This rank's share of `whole` (the same on every rank): block r of the
/// `ranks` equal blocks along `dim`.
mlir::Value takeRankShare(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value whole, int64_t dim, int64_t ranks);

/// Rank r's share of a sequence's positions is chunks r and 2P - 1 - r of
/// 2P equal chunks (zigzag: causal attention's work is then the same on
/// every rank): the chunk that half `half` (0 or 1) of `rank`'s share is.
int64_t chunkOfShare(int64_t rank, int64_t half, int64_t ranks);
/// `positions` (every position along `dim`, in order)
/// rearranged so that rank r's share is its r-th block: chunks 0, 2P - 1,
/// 1, 2P - 2, ...
mlir::Value inShareOrder(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value positions, int64_t dim, int64_t ranks);
/// The inverse of inShareOrder: the ranks' shares laid end to end in rank
/// order, back in position order.
mlir::Value inPositionOrder(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value shares, int64_t dim, int64_t ranks);
/// This rank's share of the positions of `whole` (the same on every rank;
/// every position along `dim`): its two chunks, in order.
mlir::Value takeRankPositions(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::Value whole, int64_t dim, int64_t ranks);

/// Splits `form`, whose sequence operands hold this rank's share of the
/// positions ([batch, heads, seq / ranks, dim]), over the heads: those
/// operands exchanged for the whole sequence of this rank's heads, its
/// per-head operands (getPerHeadOperands) cut to those heads, the form run
/// on them, and its results exchanged back; uses of its results read the
/// exchanged ones. `isShare(v)` says whether operand v is a share of the
/// positions; `shares` gets the values that replace the results (this
/// rank's positions, on axis 2). An error names what cannot be split.
mlir::LogicalResult
splitHeadsOverRanks(lcc::attn::AttentionFormInterface form, int64_t ranks,
                    llvm::function_ref<bool(mlir::Value)> isShare,
                    llvm::SmallVectorImpl<mlir::Value> &shares);

} // namespace lcc::parallel

#endif // LCC_PASSES_PARALLEL_HEADSOVERRANKS_H
