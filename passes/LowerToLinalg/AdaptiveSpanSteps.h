//===- AdaptiveSpanSteps.h - adaptive span's soft mask per tile -*- C++ -*-===//
//
// Adaptive span's soft mask m(x) = clamp((reach - x) / ramp, 0, 1), with
// the distance x = M + i - j and each head's reach span_h + ramp, built a
// block of a tile pair at a time: the keys beyond the reach hidden, the
// weights m, whether a tile pair holds any key within reach. The forward
// (LowerAdaptiveSpanAttention.cpp) and the backward
// (LowerAdaptiveSpanAttentionBackward.cpp) build the same blocks.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_PASSES_LOWERTOLINALG_ADAPTIVESPANSTEPS_H
#define LCC_PASSES_LOWERTOLINALG_ADAPTIVESPANSTEPS_H

#include "passes/LowerToLinalg/FlashAttention.h"
#include "passes/Passes.h"

#include "llvm/ADT/APFloat.h"

#include <optional>

namespace lcc::lowering {

/// The renormalisation's floor: a'_ij = a_ij m / (sum_j a_ij m + 1e-8), as
/// facebookresearch/adaptive-span adds it.
constexpr double kAdaptiveSpanFloor = 1e-8;

/// The soft mask of one adaptive-span attention.
struct AdaptiveSpanMask {
  /// [heads] f32: each head's span as a fraction of maxSpan.
  mlir::Value z;
  int64_t maxSpan, ramp;
  /// M = k_seq - q_seq: query i sits at key position M + i.
  int64_t memory;

  /// span_h + ramp of `head` (an f32 scalar), read in a loop, not inside a
  /// linalg body.
  mlir::Value reach(mlir::OpBuilder &b, mlir::Location loc,
                    mlir::Value head) const;
  /// Whether the tile pair `tile` (key tile `keyTile` long) holds a key
  /// within reach of one of its queries (an i1): a tile pair that holds
  /// none is never read.
  mlir::Value tileWithinReach(mlir::OpBuilder &b, mlir::Location loc,
                              const TilePosition &tile, int64_t keyTile) const;
  /// `dots` (a block of scores, [key tile, query tile] if `keysByQueries`,
  /// else [query tile, key tile]) with -inf where the key is beyond the
  /// reach (m = 0).
  mlir::Value hideBeyondReach(TensorBuilder &t, mlir::Value dots,
                              const TilePosition &tile,
                              bool keysByQueries) const;
  /// The weights m of a block of `shape`, laid out as hideBeyondReach's.
  mlir::Value weights(TensorBuilder &t, llvm::ArrayRef<int64_t> shape,
                      const TilePosition &tile, bool keysByQueries) const;
  /// dm/dz of a block of `shape` over maxSpan / ramp: 1 on the ramp (span
  /// <= x < span + ramp), 0 elsewhere, laid out as hideBeyondReach's. At
  /// the ramp's kinks (x = span, x = span + ramp: a whole-number span) it is
  /// the derivative from below, as torch.clamp's is at x = span.
  mlir::Value onRamp(TensorBuilder &t, llvm::ArrayRef<int64_t> shape,
                     const TilePosition &tile, bool keysByQueries) const;

private:
  /// reach - x at element (linalg.index 0, 1) of a block, an f32.
  mlir::Value reachLeft(mlir::OpBuilder &b, mlir::Location loc,
                        const TilePosition &tile, mlir::Value reach,
                        bool keysByQueries) const;
};

/// What the forward and backward ops share: operands and attributes.
struct AdaptiveSpanOperands {
  mlir::Value query, key, value, z;
  /// The op's query_offset (a 0-d i32), or null.
  mlir::Value queryOffset;
  int64_t maxSpan, ramp;
  bool causal;
  std::optional<llvm::APFloat> scale;
};

/// The attention as FlashAttention: causal with the queries M keys late
/// (if causal), keys beyond the reach hidden and their tiles skipped, the
/// probabilities weighed by m and renormalised with the floor. Also
/// returns the mask it uses, for the backward. With `queryPosition` (a
/// 0-d i32): a decode step's one query at that run-time position among
/// the keys, its distances counted from there; the op's query_offset
/// places its queries likewise.
std::pair<FlashAttention, AdaptiveSpanMask>
planAdaptiveSpanAttention(const AdaptiveSpanOperands &op,
                          AttentionTiling tiling,
                          mlir::Value queryPosition = {});

} // namespace lcc::lowering

#endif // LCC_PASSES_LOWERTOLINALG_ADAPTIVESPANSTEPS_H
