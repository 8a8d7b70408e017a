//===- RelativeSteps.h - what relative attention and its backward share --===//
//
// Transformer-XL attention (LowerRelativeAttention.cpp) is FlashAttention
// of q + u, causal with the queries M keys late, plus a position term per
// tile pair: a query tile [qs, qs + Tq) meets a key tile [ks, ks + Tk) at
// the distances M + qs - ks - (Tk - 1) ... M + qs - ks + Tq - 1, a band of
// Tq + Tk - 1 encodings whose products with (q + w) · scale are the
// block's terms along its diagonals. Its backward
// (LowerRelativeAttentionBackward.cpp) recomputes the same blocks and reads
// the position term's gradient along the same diagonals. These are the
// steps both build.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_PASSES_LOWERTOLINALG_RELATIVESTEPS_H
#define LCC_PASSES_LOWERTOLINALG_RELATIVESTEPS_H

#include "passes/LowerToLinalg/FlashAttention.h"
#include "passes/Passes.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/Support/MathExtras.h"

#include <optional>

namespace lcc::lowering {

/// Where the distances of every tile pair fall: the band of a pair starts
/// at row `bandStart(qs, ks)` of a table of the encodings of distances
/// firstDistance, firstDistance + 1, ..., whose row r is that of distance
/// r + firstDistance (clamped into the encodings there are).
struct DistanceBands {
  int64_t memory; // M: keys before the first query
  int64_t queryTile, keyTile;
  int64_t paddedKeySeq;  // key tiles * key tile
  int64_t firstDistance; // of the first row of the table (<= 0)
  int64_t rows;          // of the table

  /// The op's query_offset D (a 0-d i32), or null. Its queries are then
  /// placed D keys on: the table's rows hold the distances D + firstDistance
  /// on (only those its tile pairs meet, whatever D is), and a band is
  /// found from the tile's query index.
  mlir::Value queryOffset;

  DistanceBands(int64_t memory, int64_t queryTile, int64_t keyTile,
                int64_t paddedQuerySeq, int64_t paddedKeySeq);

  /// The Tq + Tk - 1 distances a tile pair meets, rounded up to whole
  /// m16 tiles so that the band's products run on tensor cores; the rows
  /// past them are read by no block and get no gradient.
  int64_t bandRows() const {
    return llvm::alignTo(queryTile + keyTile - 1, 16);
  }

  /// The first row of the band of the tile pair (qs, ks), whose queries
  /// are placed among the keys: distance M + qs - ks - (Tk - 1), never
  /// below row 0 since ks <= paddedKeySeq - Tk.
  mlir::Value bandStart(mlir::OpBuilder &b, mlir::Location loc,
                        const TilePosition &tile) const;
  /// How far the table's distances are moved: D as an index, or 0.
  mlir::Value distanceShift(mlir::OpBuilder &b, mlir::Location loc) const;
};

/// The operands and attributes of attn.relative_attention (or of its
/// backward, which repeats them).
struct RelativeAttentionOperands {
  mlir::Value query, key, value, pos, u, w;
  /// The op's query_offset (a 0-d i32), or null.
  mlir::Value queryOffset;
  std::optional<llvm::APFloat> scale;
  std::optional<int64_t> clampLen, sameLength;
};

/// One relative attention in the flash form: the FlashAttention of q + u
/// (its query), causal with the queries `memory` keys late, `same_length`
/// as visibility and tile skipping; and the position term's operands.
struct RelativeAttentionPlan {
  FlashAttention flash;
  DistanceBands bands;
  int64_t querySeq, keySeq, paddedQuerySeq;
  /// The largest distance with an encoding of its own (clamp_len's).
  int64_t lastDistance;
  /// The encodings `pos` holds (its rows), whose gradient the backward
  /// returns.
  int64_t encodings;
  /// [heads, bands.rows, head_dim]: row r is pos[h, clamp(r +
  /// firstDistance, 0, lastDistance)].
  mlir::Value table;
  /// (q + w) · scale, padded to whole query tiles: [batch, heads, padded
  /// q_seq, head_dim].
  mlir::Value positionQueries;

  /// The run-time position of the first query among the keys (a 0-d
  /// i32; FlashAttention::queryPosition): a decode step's, or the op's
  /// query_offset; or null.
  mlir::Value queryPosition;

  /// The band of encodings the tile pair meets, [band rows, head_dim].
  mlir::Value band(mlir::OpBuilder &b, mlir::Location loc,
                   const TilePosition &tile) const;
  /// The forward's position term of every block: the band times the query
  /// tile's (q + w) · scale, added along the block's diagonals.
  BlockScoreTerm positionTerm(TensorBuilder &tb) const;
};

/// The plan of `op`; with `queryPosition` (a 0-d i32), of a decode step's
/// one query at that run-time position among the keys, the distances and
/// causality counted from there. The op's query_offset places its queries
/// likewise, meeting any distance its encodings hold.
RelativeAttentionPlan planRelativeAttention(TensorBuilder &tb,
                                            const RelativeAttentionOperands &op,
                                            AttentionTiling tiling,
                                            mlir::Value queryPosition = {});

/// `dots` (a block laid out as `layout`, scaled) plus the position term,
/// read from `bandProducts` ([band rows, query tile]: the band times the
/// query tile's (q + w) · scale) along the block's diagonals: the term of
/// query q and key k is bandProducts[q - k + Tk - 1, q].
mlir::Value addPositionTerm(TensorBuilder &t, mlir::Value dots,
                            mlir::Value bandProducts, ScoreBlockLayout layout);

} // namespace lcc::lowering

#endif // LCC_PASSES_LOWERTOLINALG_RELATIVESTEPS_H
