//===- LSHSteps.h - the steps LSH attention and its backward share -*- C++
//-*-===//
//
// Reformer LSH attention (LowerLSHAttention.cpp) hashes, sorts, attends
// chunks and combines rounds; its backward (LowerLSHAttentionBackward.cpp)
// hashes and sorts identically, from the same rotations, and differentiates
// the rest. These are the steps both build.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_PASSES_LOWERTOLINALG_LSHSTEPS_H
#define LCC_PASSES_LOWERTOLINALG_LSHSTEPS_H

#include "passes/LowerToLinalg/CountingSort.h"
#include "passes/LowerToLinalg/FlashAttention.h"
#include "passes/LowerToLinalg/TensorBuilder.h"

#include "llvm/ADT/APFloat.h"

#include <optional>

namespace lcc::lowering {

/// The sizes of one LSH attention, its sequence padded to a multiple of two
/// chunks (of one, with n_buckets given).
struct LSHShape {
  int64_t rows; // batch * heads
  int64_t seq, padded, dim, valueDim;
  /// Chunks of `bucket` tokens per round (padded / bucket); `buckets` the
  /// tokens hash into, by default as many.
  int64_t rounds, bucket, chunks, buckets;
  /// Rotation columns per round: buckets / 2, or with factorized hashing
  /// (n1 + n2) / 2 for the bucket pair `factors` (n1 * n2 = buckets).
  int64_t half;
  std::optional<std::pair<int64_t, int64_t>> factors;
  bool causal;
  double scale;

  static LSHShape of(mlir::Value queryKey, mlir::Value value, int64_t nHashes,
                     int64_t bucketSize, bool causal,
                     std::optional<llvm::APFloat> scale,
                     bool factorizedHash = false,
                     std::optional<int64_t> nBuckets = std::nullopt);
};

/// `attend` on `chunks` groups of the batch * heads rows of the [batch,
/// heads, seq, *] `operands`, one group after another, each given as [1,
/// rows, seq, *]; its [1, rows, seq, *] results are put together into
/// [batch, heads, seq, *]. Every group's intermediates are tensors of their
/// own, which the memory planner gives the same bytes (Reformer's attention
/// chunking). One group is `attend(operands)` itself.
llvm::SmallVector<mlir::Value>
inRowGroups(mlir::OpBuilder &b, mlir::Location loc, mlir::ValueRange operands,
            int64_t chunks,
            llvm::function_ref<llvm::SmallVector<mlir::Value>(mlir::ValueRange)>
                attend);

/// The N(0, 1) rotations of LSH hashing, [dim, rounds, half], drawn at
/// compile time from `seed`: a compiled model hashes the same way on every
/// call and every device.
mlir::Value lshRotationsOf(mlir::OpBuilder &b, mlir::Location loc,
                           const LSHShape &s, uint64_t seed);

/// Step 1: the bucket of every token of `qk` ([rows, padded, dim]) in
/// every round, [rows, rounds, padded] i32 (argmax over [xR; -xR], or
/// factorized), hashed `s.bucket` tokens at a time; tokens from `s.seq` on
/// are padding, in bucket n_buckets.
mlir::Value hashTokens(mlir::OpBuilder &b, mlir::Location loc,
                       const LSHShape &s, mlir::Value qk,
                       mlir::Value rotations);

/// What hashing and sorting leave: the padded [rows, padded, dim] inputs,
/// 1/||q|| of every token ([rows, padded]; keys are the normalised
/// queries), every token's bucket in every round ([rows, rounds, padded]
/// i32; padding in bucket n_buckets) and each round's sort ([rows, rounds,
/// padded] sorted positions and their inverse).
struct LSHSorting {
  mlir::Value queryKey, value, invNorm;
  mlir::Value buckets;
  SortedRows sorted;
};

/// Steps 1 and 2: pads and flattens [batch, heads, seq, *] `queryKey` and
/// `value`, hashes every token in every round with the rotations drawn
/// from `seed`, and sorts each round by (bucket, position).
LSHSorting hashAndSort(mlir::OpBuilder &b, mlir::Location loc,
                       const LSHShape &s, mlir::Value queryKey,
                       mlir::Value value, uint64_t seed);

/// Where one chunk of one (row, round) sits in the sorted order. The
/// rounds' sorted orders run end to end, so the chunk before a round's
/// first is the previous round's last (the last round's, for round 0).
struct Chunk {
  mlir::Value row, round;
  mlir::Value start;                   // its first sorted position
  mlir::Value previousRound, previous; // the round and first sorted position
                                       // of the chunk before it
};

/// Chunk `index` of (row, round).
Chunk chunkAt(mlir::OpBuilder &b, mlir::Location loc, const LSHShape &s,
              mlir::Value row, mlir::Value round, mlir::Value index);

/// The original positions of a chunk's queries ([bucket] i32) and of its
/// keys ([2 * bucket] i32: the previous chunk, then the chunk itself, as
/// the forward's groups of chunks read them).
std::pair<mlir::Value, mlir::Value> chunkPositions(TensorBuilder &t,
                                                   const LSHShape &s,
                                                   const Chunk &chunk,
                                                   mlir::Value sortedPositions);

/// Rows `positions` ([count] i32) of `source` ([rows, padded, width]) in
/// row `row`, each times its `invNorm` ([rows, padded]) when given and
/// times `scale`.
mlir::Value gatherRows(TensorBuilder &t, mlir::Value source, mlir::Value row,
                       mlir::Value positions, int64_t count,
                       mlir::Value invNorm = {}, double scale = 1.0);

/// The scaled scores of a chunk from its dot products `dots`: [bucket,
/// 2 * bucket] of q·kᵀ (queriesByKeys), or [2 * bucket, bucket] of
/// k·(q·scale)ᵀ (scaledKeysByQueries). A token's score with itself is
/// -1e5; padded keys, and later keys if causal, are -inf.
mlir::Value
chunkScores(TensorBuilder &t, const LSHShape &s, mlir::Value dots,
            mlir::Value queryPos, mlir::Value keyPos,
            ScoreBlockLayout layout = ScoreBlockLayout::queriesByKeys);

/// Step 3's results: every round's output of each sorted position,
/// [rows, rounds, padded, v_dim], and its logsumexp, [rows, rounds, padded].
struct RoundResults {
  mlir::Value outputs, logSumExp;
};

/// Step 3: attention within chunks of the sorted order, with look-back.
RoundResults attendChunks(mlir::OpBuilder &b, mlir::Location loc,
                          const LSHShape &s, const LSHSorting &sorting);

/// Per (row, position, round) of `inverse` ([rows, rounds, padded]): where
/// the round's sort put the token, [rows, positions, rounds] i32 for the
/// first `positions` tokens.
mlir::Value sortedPlaces(TensorBuilder &tb, const LSHShape &s,
                         mlir::Value inverse, int64_t positions);

} // namespace lcc::lowering

#endif // LCC_PASSES_LOWERTOLINALG_LSHSTEPS_H
