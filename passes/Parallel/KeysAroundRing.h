//===- KeysAroundRing.h - ring attention over a job's ranks -----*- C++ -*-===//
//
// Ring attention (docs/training.md, "Context parallel"): each rank keeps
// its share of the queries and passes its keys and values around the ring
// of ranks, attending to each block as it arrives and merging the partial
// results by their logsumexps (attn.merge_partials).
//
//===----------------------------------------------------------------------===//

#ifndef LCC_PASSES_PARALLEL_KEYSAROUNDRING_H
#define LCC_PASSES_PARALLEL_KEYSAROUNDRING_H

#include "mlir/IR/Builders.h"

namespace lcc::attn {
class AttentionOp;
} // namespace lcc::attn

namespace lcc::parallel {

/// Replaces `attention`, whose query, key and value each hold this rank's
/// share of the positions ([batch, heads, seq / ranks, dim]; rank r chunks
/// r and 2P - 1 - r of 2P), by ring attention over `ranks` ranks: step s
/// attends the keys and values of rank r - s, causal attention the chunk
/// pairs its positions allow (two of four a step on every rank). `share`
/// gets the value that replaces the result (this rank's positions, axis
/// 2).
mlir::LogicalResult splitKeysAroundRing(lcc::attn::AttentionOp attention,
                                        int64_t ranks, mlir::Value &share);

} // namespace lcc::parallel

#endif // LCC_PASSES_PARALLEL_KEYSAROUNDRING_H
