//===- MaskTiles.h - which key tiles a mask region hides --------*- C++ -*-===//
//
// A mask region of attn.attention holds arith ops only, so which keys it
// hides is known at compile time. This evaluates it over whole tiles with
// interval arithmetic (a tile is hidden when the mask is false for every
// query and key position in it) and, where intervals cannot decide, over
// the tile's positions one by one. The result is the block table the
// lowering embeds as a constant: hidden key tiles are never read.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_PASSES_LOWERTOLINALG_MASKTILES_H
#define LCC_PASSES_LOWERTOLINALG_MASKTILES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Region.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lcc::lowering {

/// The tiling of one attention and the causality the table must honour.
struct MaskTiling {
  int64_t batch, heads, querySeq, keySeq;
  int64_t queryTile, keyTile;
  bool causal;
  /// Where each query and key sits in the whole sequence (attn.attention's
  /// `positions`, as one rank has them), which the mask and causality
  /// compare; empty: at its index. A tile whose positions are not
  /// consecutive is classed by their hull (soundly, less sharply).
  std::vector<int64_t> queryPositions = {}, keyPositions = {};

  /// The tiling of an attention with `query` [batch, heads, seq, d] and
  /// `key` [batch, heads, keys, d] (static shapes) in the given tiles.
  static MaskTiling of(mlir::Value query, mlir::Value key, int64_t queryTile,
                       int64_t keyTile, bool causal);
};

/// What one (query tile, key tile) entry of the table says.
enum TileClass : uint8_t {
  /// No key of the tile is visible to a query of the query tile: the tile
  /// is never read.
  kHiddenTile = 0,
  /// Some keys may be visible: the tile is read and masked.
  kPartialTile = 1,
  /// Every key is visible to every query (the mask holds everywhere, the
  /// tile has no padded key and, if causal, lies wholly below the
  /// diagonal): the tile is read and its scores are not masked.
  kFullTile = 2,
};

/// One TileClass per (query tile, key tile), or per (batch, head, query
/// tile, key tile) when the mask reads its b or h argument.
struct MaskTileTable {
  bool perBatchHead = false;
  int64_t queryTiles = 0, keyTiles = 0;
  std::vector<uint8_t> visible;
  int64_t hiddenTiles = 0, fullTiles = 0;
  /// Tiles kept visible only because deciding them would have taken more
  /// than the evaluation budget (0 when every tile was decided).
  int64_t undecidedTiles = 0;
};

/// The table of `mask` (a verified mask region; null: causality alone),
/// or the reason it cannot be computed (an op the evaluator does not
/// model, such as float arithmetic): then every tile must be visited.
llvm::FailureOr<MaskTileTable> computeMaskTileTable(mlir::Region *mask,
                                                    const MaskTiling &tiling,
                                                    std::string &why);

} // namespace lcc::lowering

#endif // LCC_PASSES_LOWERTOLINALG_MASKTILES_H
