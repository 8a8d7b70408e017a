//===- Passes.h - lcc passes ------------------------------------*- C++ -*-===//

#ifndef LCC_PASSES_PASSES_H
#define LCC_PASSES_PASSES_H

#include "dialects/Attn/IR/AttnDialect.h"
#include "dialects/Attn/IR/Knobs.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/Pass.h"

#include <limits>

namespace mlir {
class RewritePatternSet;
class RewriterBase;
} // namespace mlir

namespace lcc::attn {
class AttentionOp;
} // namespace lcc::attn

namespace lcc {

/// Marks an op that recomputes what the forward already computed: the
/// train step's clones of a reversible block's regions (not part of the
/// forward: routed attention's centroid update reads the forward's), and
/// the lowered recomputations of a backward, which CSE must not merge into
/// the forward's ops (the attribute keeps them apart), or the forward's
/// result would live on to the backward.
constexpr llvm::StringLiteral kRecomputedAttrName = "lcc.recomputed";

/// Marks an op of the backward of a reversible block's recomputed clone
/// (its operands are the recomputed forward values, never the forward's):
/// what its lowering recomputes is the same ops on the same operands as
/// the clone's, which CSE may then share, rather than be kept apart from
/// the forward's (kRecomputedAttrName).
constexpr llvm::StringLiteral kBackwardOfRecomputedAttrName =
    "lcc.backward_of_recomputed";

/// Runs `build` at `b`'s insertion point and sets the unit attribute
/// `name` on every op it created there; returns what `build` returns.
template <typename Build>
auto markOpsBuiltBy(mlir::OpBuilder &b, llvm::StringRef name, Build build) {
  mlir::Block *block = b.getInsertionBlock();
  mlir::Block::iterator point = b.getInsertionPoint();
  mlir::Operation *before =
      point == block->begin() ? nullptr : &*std::prev(point);
  auto result = build();
  mlir::Block::iterator first =
      before ? std::next(before->getIterator()) : block->begin();
  for (mlir::Operation &op : llvm::make_range(first, b.getInsertionPoint()))
    op.setAttr(name, b.getUnitAttr());
  return result;
}

/// Marks the exp of a softmax, exp(x - m) with m the row's maximum or
/// logsumexp: its argument is at most 0 up to rounding, which the CPU's
/// exp expansion (lcc-approximate-math) uses for a shorter polynomial.
constexpr llvm::StringLiteral kShiftedExpAttrName = "lcc.shifted_exp";

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

/// Tile sizes of the flash form of dense attention (knobs::kQueryTile,
/// knobs::kKeyTile).
struct AttentionTiling {
  int64_t queryTile = knobs::kPortableAttentionTile;
  int64_t keyTile = knobs::kPortableAttentionTile;

  /// These tiles, with each one a user gave (0: not given) in its place.
  AttentionTiling withGiven(int64_t givenQueryTile,
                            int64_t givenKeyTile) const {
    return {givenQueryTile > 0 ? givenQueryTile : queryTile,
            givenKeyTile > 0 ? givenKeyTile : keyTile};
  }
};

/// A pass option's value and the knob it sets.
struct KnobValue {
  const IntegerKnob &knob;
  int64_t value;
};

/// Reports the first option out of its knob's range on `root` as one error
/// naming that option alone: "<pass>: expected <option> >= <minimum>, got
/// <value>" (checkKnob).
mlir::LogicalResult checkOptionRanges(mlir::Operation *root,
                                      llvm::StringRef pass,
                                      llvm::ArrayRef<KnobValue> options);

/// The power of two nearest sqrt(n): the default sparse stride and the
/// default number of routed clusters, as the Sparse and Routing
/// Transformers choose them.
int64_t nearestPowerOfTwoSqrt(int64_t n);

/// Patterns lowering each attn op (except attn.param, which the pass turns
/// into function arguments) to linalg/tensor/arith/math/scf on tensors.
void populateLowerToLinalgPatterns(mlir::RewritePatternSet &patterns,
                                   AttentionTiling tiling);

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace lcc

#endif // LCC_PASSES_PASSES_H
