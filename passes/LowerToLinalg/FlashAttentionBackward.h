//===- FlashAttentionBackward.h - the flash backward's steps ----*- C++ -*-===//
//
// FlashAttention-2's backward (Dao, 2023) recomputes each block's
// probabilities from the forward's logsumexp and sums the key and value
// gradients per key tile over the query tiles the forward visited. Dense
// attention's backward (LowerAttentionBackward.cpp) and relative
// attention's (LowerRelativeAttentionBackward.cpp) differ in how a block's
// scores are made and what else a block contributes; these are the steps
// both build.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_PASSES_LOWERTOLINALG_FLASHATTENTIONBACKWARD_H
#define LCC_PASSES_LOWERTOLINALG_FLASHATTENTIONBACKWARD_H

#include "passes/LowerToLinalg/FlashAttention.h"

#include <array>

namespace lcc::lowering {

/// p = exp(s - L) of a block's masked scores [query tile, key tile] and its
/// queries' logsumexp [query tile]; 0 for a query that sees no key (L =
/// -inf: padding, an empty mask row).
mlir::Value recomputedProbabilities(TensorBuilder &t, mlir::Value scores,
                                    mlir::Value logSumExp);

/// One tile pair's operands in a flash backward.
struct BackwardBlock {
  mlir::Value query, key, value, outGrad, rowStatistic, delta;
};

/// A flash backward's operands padded to whole tiles: the forward's query,
/// key and value, the result's gradient `do`, each query's saved row
/// statistic (its logsumexp; -inf past the queries, so that a padded query
/// sees nothing) and delta_i = do_i · o_i.
struct PaddedBackwardOperands {
  int64_t batch, heads, querySeq, keySeq, headDim, valueDim;
  int64_t queryTile, keyTile, queryTiles, keyTiles;
  mlir::Value query, key, value, outGrad, rowStatistic, delta;
  /// The forward's, whose placement of the queries blockAt undoes.
  FlashAttention forward;

  /// Pads the operands of the backward of `flash`, whose result was `out`.
  /// `rowStatisticGrad` (or null) is the gradient with respect to the row
  /// statistic when it is the logsumexp and something read it: since
  /// dL_i/ds_ij = p_ij, it is subtracted from delta.
  static PaddedBackwardOperands
  build(TensorBuilder &t, const FlashAttention &flash, mlir::Value out,
        mlir::Value outGrad, mlir::Value rowStatistic,
        mlir::Value rowStatisticGrad = mlir::Value());
  /// The blocks of the tile pair `at` (its queries placed among the keys,
  /// as the loops over tile pairs give them).
  BackwardBlock blockAt(mlir::OpBuilder &b, mlir::Location loc,
                        const TilePosition &at) const;
  /// A gradient of the queries, or with `ofKeys` of the keys or values
  /// ([batch, heads, padded seq, width]), without its padding.
  mlir::Value unpadded(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                       bool ofKeys) const;
};

/// The state a tile's loop carries through a visited block (a pair of a
/// query tile and a key tile), updated.
using TilePairStep = std::function<llvm::SmallVector<mlir::Value>(
    mlir::OpBuilder &, mlir::Location, const TilePosition &,
    mlir::ValueRange state)>;

/// `block` gets each tile pair with its queries placed among the keys
/// (FlashAttention::placedAmongKeys), as the forward's masks take them.
///
/// The kernel over key tiles: for each (batch, head, key tile), zeros of
/// [key tile, widths[i]] are folded by `block` over the query tiles the
/// forward `flash` visits for that key tile (causally earlier ones never
/// see it; ifTileVisible skips hidden ones); returns [batch, heads,
/// keyTiles * key tile, widths[i]] per width. Parallel, free of atomics.
llvm::SmallVector<mlir::Value>
sumOverQueryTiles(mlir::OpBuilder &builder, mlir::Location loc,
                  const FlashAttention &flash, int64_t batch, int64_t heads,
                  int64_t keyTiles, int64_t queryTiles,
                  llvm::ArrayRef<int64_t> widths, mlir::Type elementType,
                  const TilePairStep &block);

/// The kernel over query tiles: for each (batch, head, query tile), zeros
/// of [query tile, widths[i]] are folded by `block` over the key tiles the
/// forward `flash` visits for that query tile (causally later ones are not
/// visited; ifTileVisible skips hidden ones); returns [batch, heads,
/// queryTiles * query tile, widths[i]] per width.
llvm::SmallVector<mlir::Value>
sumOverKeyTiles(mlir::OpBuilder &builder, mlir::Location loc,
                const FlashAttention &flash, int64_t batch, int64_t heads,
                int64_t keyTiles, int64_t queryTiles,
                llvm::ArrayRef<int64_t> widths, mlir::Type elementType,
                const TilePairStep &block);

/// d(final score)/d(scaled dot product) at one position (the derivative of
/// a score modifier), null when it is 1; failure when it has none.
using ScoreDerivative = std::function<mlir::FailureOr<mlir::Value>(
    mlir::OpBuilder &, mlir::Location, mlir::Value scaledDot,
    const ScorePosition &)>;

/// The flash backward of one attention, whole: two kernels, each parallel
/// and free of atomics, one per key tile summing dk and dv over the query
/// tiles, one per query tile summing dq over the key tiles, both visiting
/// exactly the tiles the forward visits. Dense attention's backward and a
/// plugin form's build it with their forward's configuration.
struct FlashAttentionBackward {
  /// Configured as the forward was.
  FlashAttention forward;
  /// The forward's result, its logsumexp (buildWithLogSumExp) and the
  /// result's gradient.
  mlir::Value out, logSumExp, outGrad;
  /// Null: the scores are the scaled dot products.
  ScoreDerivative scoreDerivative;
  /// The gradient with respect to logSumExp, or null when nothing read it.
  mlir::Value logSumExpGrad = mlir::Value();

  /// Gradients for forward.query, forward.key and forward.value.
  mlir::FailureOr<std::array<mlir::Value, 3>> build(mlir::OpBuilder &builder,
                                                    mlir::Location loc) const;

private:
  /// A block's probabilities p and score gradients ds (scale included).
  mlir::FailureOr<std::pair<mlir::Value, mlir::Value>>
  probabilitiesAndScoreGradients(TensorBuilder &t, const BackwardBlock &block,
                                 const TilePosition &tile,
                                 int64_t keySeq) const;
};

} // namespace lcc::lowering

#endif // LCC_PASSES_LOWERTOLINALG_FLASHATTENTIONBACKWARD_H
