//===- KeysAroundRing.h - ring attention over a job's ranks -----*- C++ -*-===//
//
// Ring attention (docs/training.md, "Context parallel"): each rank keeps
// its share of the queries and passes its keys and values around the ring
// of ranks, attending to each block as it arrives and merging the partial
// results by their logsumexps (attn.merge_partials). attn-context-parallel
// writes it as attn.ring_attention, which the train step differentiates
// as a whole (attn.ring_attention_backward) and attn-expand-ring-attention
// writes out in exchanges and attention on blocks before lowering.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_PASSES_PARALLEL_KEYSAROUNDRING_H
#define LCC_PASSES_PARALLEL_KEYSAROUNDRING_H

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallVector.h"

namespace lcc::attn {
class AttentionOp;
class AttentionFormInterface;
class RingAttentionOp;
class RingAttentionBackwardOp;
} // namespace lcc::attn

namespace lcc::parallel {

/// Replaces `attention`, whose query, key and value each hold this rank's
/// share of the positions ([batch, heads, seq / ranks, dim]; rank r chunks
/// r and 2P - 1 - r of 2P), by attn.ring_attention over `ranks` ranks;
/// returns its result (this rank's positions, axis 2).
mlir::Value splitKeysAroundRing(lcc::attn::AttentionOp attention,
                                int64_t ranks);
/// The same for a form that attends at a query offset (relative and
/// adaptive-span attention): attn.ring_attention with the form, its other
/// operands and its attributes, each step the form on chunk pairs.
mlir::Value splitFormAroundRing(lcc::attn::AttentionFormInterface form,
                                int64_t ranks);

/// `ring` written out before `ring` at `b`: step s attends the keys and
/// values of rank r - s, causal attention the chunk pairs its positions
/// allow (two of four a step on every rank), the partial results merged.
/// Returns the result and each query's logsumexp.
std::pair<mlir::Value, mlir::Value>
expandRingAttention(mlir::OpBuilder &b, lcc::attn::RingAttentionOp ring);

/// `backward` written out before it at `b`: the keys and values passed
/// around again, each block's flash backward with the whole sequence's
/// result and logsumexp, each block's key and value gradients sent back
/// to its rank. Returns the query, key and value gradients, and with a
/// form those of its other operands.
llvm::SmallVector<mlir::Value>
expandRingAttentionBackward(mlir::OpBuilder &b,
                            lcc::attn::RingAttentionBackwardOp backward);

} // namespace lcc::parallel

#endif // LCC_PASSES_PARALLEL_KEYSAROUNDRING_H
