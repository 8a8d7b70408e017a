//===- FlashAttention.h - the tiled online-softmax builder ------*- C++ -*-===//
//
// Attention in the flash form (Dao et al.): for each tile of queries, key
// tiles are folded one at a time into a running row maximum, row sum and
// output accumulator, so no seq x seq tensor is ever built. Every form that
// attends with dense scores composes it; what differs between forms is
// which keys a query sees, which key tiles a query tile may skip, and how a
// score is modified. A new form sets those three and calls build().
//
//===----------------------------------------------------------------------===//

#ifndef LCC_PASSES_LOWERTOLINALG_FLASHATTENTION_H
#define LCC_PASSES_LOWERTOLINALG_FLASHATTENTION_H

#include "passes/LowerToLinalg/TensorBuilder.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

#include <functional>

namespace lcc {

/// Where one score sits: its batch and head, and the positions of its
/// query and key in their sequences (index values).
struct ScorePosition {
  mlir::Value batch, head, query, key;
};

/// Where one (query tile, key tile) pair sits: batch, head and the first
/// position of each tile (index values).
struct TilePosition {
  mlir::Value batch, head, queryStart, keyStart;
};

/// Whether the key is visible to the query (an i1), built inside a
/// linalg.generic body.
using VisibilityPredicate = std::function<mlir::Value(
    mlir::OpBuilder &, mlir::Location, const ScorePosition &)>;

/// Whether the key tile can hold a key visible to some query of the query
/// tile (an i1), built in the loop over key tiles.
using TileVisibilityPredicate = std::function<mlir::Value(
    mlir::OpBuilder &, mlir::Location, const TilePosition &)>;

/// The new value of one scaled score (an f32), built inside a
/// linalg.generic body.
using ScoreModifier =
    std::function<mlir::Value(mlir::OpBuilder &, mlir::Location,
                              mlir::Value score, const ScorePosition &)>;

/// A term added to one block's scaled dot products `dots` ([key tile, query
/// tile], f32), built in the loop over key tiles: returns the sum.
using BlockScoreTerm = std::function<mlir::Value(
    TensorBuilder &, mlir::Value dots, const TilePosition &)>;

/// Weights of one block's probabilities ([key tile, query tile], f32, as
/// the forward lays out its scores), built in the loop over key tiles.
using BlockWeights =
    std::function<mlir::Value(TensorBuilder &, const TilePosition &)>;

/// Whether attention on `elt` runs its products on pairs of half-precision
/// values (bf16 or f16, f32 accumulation); f32 runs them on f32.
bool isPairedHalf(mlir::Type elt);

/// The tile of a flash loop over `seq` positions: `tile`, or the whole
/// sequence when it is shorter; on half operands (`elt`) even, since their
/// products sum in pairs along the tiles (an odd sequence then gets one
/// padded position).
int64_t flashTile(int64_t tile, int64_t seq, mlir::Type elt);

/// A block `x` ([rows, columns], f32 or `half`) as an operand of
/// TensorBuilder::pairedMatmul, rounded to `half`: its summed dimension k
/// (the columns when `kAlongColumns`, else the rows) in adjacent pairs, as
/// A ([other, k / 2, 2]) or, with `asB`, as B ([k / 2, other, 2]). A view
/// when nothing moves or rounds.
mlir::Value pairedOperand(TensorBuilder &t, mlir::Value x, mlir::Type half,
                          bool kAlongColumns, bool asB);

/// A block's products on the attention's operand type (a flash backward's
/// five, relative attention's band products, LSH's chunk products): on f32
/// directly; on bf16 or f16 in pairs of the summed dimension with f32 sums,
/// both operands rounded to the half type (FlashAttention-2 rounds p and ds
/// so). Each is init += a b, each operand read along its rows or columns as
/// the summed dimension k.
struct BlockProducts {
  TensorBuilder &t;
  /// Null: f32.
  mlir::Type half;

  /// The products of an attention whose operands are of `operand`'s type.
  static BlockProducts of(TensorBuilder &t, mlir::Value operand);

  /// sum_k a(m, k) b(k, n).
  mlir::Value plain(mlir::Value a, mlir::Value b, mlir::Value init) const;
  /// sum_k a(m, k) b(n, k).
  mlir::Value transposedB(mlir::Value a, mlir::Value b, mlir::Value init) const;
  /// sum_k a(k, m) b(k, n).
  mlir::Value transposedA(mlir::Value a, mlir::Value b, mlir::Value init) const;

private:
  mlir::Value paired(mlir::Value a, bool aKAlongColumns, mlir::Value b,
                     bool bKAlongColumns, mlir::Value init) const;
};

/// How a block of dot products is laid out: [query tile, key tile] of
/// q·kᵀ, [key tile, query tile] of k·(q·scale)ᵀ, already scaled, or
/// [query tile, key tile] already scaled.
enum class ScoreBlockLayout {
  queriesByKeys,
  scaledKeysByQueries,
  scaledQueriesByKeys
};

/// One attention of `query` [batch, heads, q_seq, head_dim], `key`
/// [batch, heads, k_seq, head_dim] and `value` [batch, heads, k_seq, v_dim],
///
///   out_i = sum_j softmax_j(s_ij) v_j over the keys j visible to query i,
///   s_ij = modifyScore(q_i · k_j · scale),
///
/// in tiles of `queryTile` queries and `keyTile` keys. A query that sees no
/// key, or whose every score is -inf, gets zeros when `emptyRowsGetZeros`
/// is set; a form whose queries always see some key with a finite score
/// (themselves, say) leaves it unset and saves the test.
///
/// On bf16 operands both products take A by rows of the summed dimension
/// and B in adjacent pairs of it, and accumulate in f32 (the form of
/// AVX-512's bf16 dot products and of AMX's tile products): k·qᵀ, and the
/// output transposed, vᵀ·pᵀ, from values transposed once. head_dim, the
/// key tile and the key sequence padded to it must be even. Scores, the
/// softmax and its state stay f32; the probabilities are rounded to bf16
/// for the second product, the output at the end.
struct FlashAttention {
  mlir::Value query, key, value;
  double scale;
  /// Key j is visible to query i only if j <= i + causalOffset; key tiles
  /// wholly after a query tile are not visited.
  bool causal = false;
  /// Under causality, how many keys come before the first query: a memory
  /// of earlier segments (Transformer-XL) puts query i at key position
  /// i + causalOffset.
  int64_t causalOffset = 0;
  /// A 0-d i32 tensor: the position among the keys of the first query when
  /// it is known only at run time (a decode step's query against its
  /// caches). Query i is then at that position + i: causality, the
  /// visibility and the score modifier see it there, and key tiles after
  /// it are not visited, so the work follows the position. causalOffset
  /// must be 0. Null: query i is at i.
  mlir::Value queryPosition;
  int64_t queryTile, keyTile;
  /// Which keys a query sees (besides causality). Null: every key.
  VisibilityPredicate visible;
  /// Which key tiles a query tile visits; the others are never read. It
  /// must hold wherever `visible` holds for a key of the tile. Null: every
  /// tile is visited.
  TileVisibilityPredicate tileVisible;
  /// Which visited key tiles need no masking at all: every key of the tile
  /// is visible to every query of the query tile, none is padding and none
  /// is causally hidden. Their scores skip the mask. Null: every tile is
  /// masked.
  TileVisibilityPredicate tileFull;
  /// Applied to every scaled score, before masking. Null: none.
  ScoreModifier modifyScore;
  /// Added to every block of scaled scores of the forward (f32 on every
  /// operand type), before `modifyScore` and masking. Null: none.
  BlockScoreTerm addToScores;
  /// Weights m applied after the softmax, renormalised (adaptive span):
  /// out_i = sum_j e_ij m_ij v_j / sum_j e_ij (m_ij + weightFloor) with
  /// e_ij = exp(s_ij) over the visible keys; the logsumexp is then that
  /// denominator's log. The weights are f32 on every operand type. Null:
  /// plain softmax.
  BlockWeights weighProbabilities;
  double weightFloor = 0.0;
  /// Whether a query may see no key at all, or see only -inf scores (a
  /// user's mask or score region).
  bool emptyRowsGetZeros = false;

  /// Builds the attention at the builder's insertion point and returns its
  /// result, [batch, heads, q_seq, v_dim].
  mlir::Value build(mlir::OpBuilder &builder, mlir::Location loc) const;
  /// As build, and also each query's logsumexp of its visible scores
  /// ([batch, heads, q_seq]; -inf for a query that sees no key), which the
  /// backward recomputes the probabilities from.
  std::pair<mlir::Value, mlir::Value>
  buildWithLogSumExp(mlir::OpBuilder &builder, mlir::Location loc) const;

  /// The scores of one block from its dot products `dots` (laid out as
  /// `layout` says): scaled (unless they are), modified and, with `mask`,
  /// masked (padded keys, later keys if causal and keys not `visible` get
  /// -inf). The backward recomputes them with this.
  mlir::Value
  maskedScores(TensorBuilder &t, mlir::Value dots, const TilePosition &tile,
               int64_t keySeq, bool mask,
               ScoreBlockLayout layout = ScoreBlockLayout::queriesByKeys) const;

  /// The first query tile that sees a key of the key tile from `keyStart`
  /// (0 unless causal: a query i sees key j from i = j - causalOffset on,
  /// or from j - queryPosition on).
  mlir::Value firstQueryTile(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::Value keyStart) const;

  /// Where the query from `queryStart` (an index into the queries) sits
  /// among the keys: moved by queryPosition when it is set. The masks,
  /// tile predicates and loop bounds take tiles placed so.
  mlir::Value placedAmongKeys(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::Value queryStart) const;
  /// The other way: the index into the queries of a query placed at
  /// `placedStart` among the keys, to slice the queries' tensors with.
  mlir::Value queryIndex(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value placedStart) const;
  /// One past the last key tile the query tile from `queryStart` sees, of
  /// `keyTiles` (all unless causal).
  mlir::Value keyTileEnd(TensorBuilder &t, mlir::Value queryStart,
                         int64_t keyTiles) const;

  /// Builds `body` only where `tileVisible` allows (everywhere when it is
  /// null); a hidden tile passes `state` through unchanged. For the loops
  /// of a backward, which visit the tiles the forward visits.
  llvm::SmallVector<mlir::Value> ifTileVisible(
      mlir::OpBuilder &b, mlir::Location loc, const TilePosition &tile,
      mlir::ValueRange state,
      llvm::function_ref<llvm::SmallVector<mlir::Value>(mlir::OpBuilder &,
                                                        mlir::Location)>
          body) const;

private:
  std::pair<mlir::Value, mlir::Value> buildTiles(mlir::OpBuilder &builder,
                                                 mlir::Location loc,
                                                 bool logSumExp) const;
  llvm::SmallVector<mlir::Value>
  updateOnline(TensorBuilder &t, mlir::Value scaledQueriesT,
               mlir::Value keyBlock, mlir::Value valueBlock,
               const TilePosition &tile, int64_t keySeq, mlir::ValueRange state,
               bool mask, mlir::Value wholeTileVisible) const;
  std::pair<mlir::Value, mlir::Value>
  weighedExponentials(TensorBuilder &t, mlir::Value scores, mlir::Value maxima,
                      mlir::Value sums, const TilePosition &tile) const;
  mlir::Value scaledQueriesInPairs(TensorBuilder &t,
                                   mlir::Value queryBlock) const;
  mlir::Value transposedValueTile(mlir::OpBuilder &b, mlir::Location loc,
                                  mlir::Value transposedValue,
                                  const TilePosition &tile) const;
  mlir::Value unpaddedAndPast(mlir::OpBuilder &b, mlir::Location loc,
                              const TilePosition &tile, int64_t keySeq) const;
  llvm::SmallVector<mlir::Value>
  attendKeyTiles(mlir::OpBuilder &b, mlir::Location loc, mlir::Value paddedKey,
                 mlir::Value paddedValue, mlir::Value scaledQueriesT,
                 const TilePosition &where, int64_t keySeq,
                 int64_t keyTiles) const;
};

} // namespace lcc

#endif // LCC_PASSES_LOWERTOLINALG_FLASHATTENTION_H
