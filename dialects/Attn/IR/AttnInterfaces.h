//===- AttnInterfaces.h - what passes ask of an op --------------*- C++ -*-===//
//
// AttentionFormInterface and DifferentiableOpInterface (AttnInterfaces.td),
// and the helpers their implementations share, a plugin's included.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_DIALECT_ATTN_IR_ATTNINTERFACES_H
#define LCC_DIALECT_ATTN_IR_ATTNINTERFACES_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"

#include <string>

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace lcc::attn {

/// How an attention form is split over ranks that each hold a share of
/// the sequence (AttentionFormInterface::getSequenceSplit).
enum class SequenceSplit {
  /// All-to-all from sequence shares to head shares and back (Ulysses).
  HeadsOverRanks,
  /// Keys and values passed around the ring of ranks, the partial results
  /// merged by their logsumexps (ring attention); a form other than
  /// attn.attention runs as the attention its buildDenseAttention builds,
  /// which must be exactly itself.
  KeysAroundRing,
};

/// What DifferentiableOpInterface::getSelfTrainedOperand returns.
struct SelfTrainedOperand {
  mlir::OpOperand *operand = nullptr;
  /// For messages: "centroids"; "their moving average".
  llvm::StringRef name, rule;
};

/// The trait of the ops the host program runs through the communicator
/// among the ranks of a job (AttnCollectiveOps.td): lowering leaves them
/// whole and outlining keeps them on the host.
template <typename ConcreteType>
class Collective : public mlir::OpTrait::TraitBase<ConcreteType, Collective> {};

/// The trait of the collectives that move bytes between ranks (all-reduce,
/// all-to-all, ring shift; not a rank's own slice or pad): the runtime
/// starts one and runs the commands after it until one reads its bytes.
template <typename ConcreteType>
class Transfer : public mlir::OpTrait::TraitBase<ConcreteType, Transfer> {};

} // namespace lcc::attn

#include "dialects/Attn/IR/AttnInterfaces.h.inc"

namespace lcc::attn {

/// For an attention's expandForDifferentiation: `op` rebuilt at `builder`
/// with one more result, each query's row statistic [batch, heads, q_seq]
/// (the logsumexp its flash backward recomputes the probabilities from),
/// its attributes and regions moved over. Returns the values that replace
/// `op`'s results; `query` is the operand that gives the statistic's shape.
llvm::SmallVector<mlir::Value> withRowStatistics(mlir::OpBuilder &builder,
                                                 mlir::Operation *op,
                                                 mlir::Value query);

/// Copies of an attention's mask and score regions (`modifiers`) into
/// `into`'s, as many: a backward or a block attends as the forward does.
void copyModifiers(llvm::MutableArrayRef<mlir::Region> modifiers,
                   mlir::Operation *into);

/// A constant tensor of `like`'s float type, every element `value` (a
/// gradient's zeros, a rule's ones).
mlir::Value splatLike(mlir::OpBuilder &builder, mlir::Location loc,
                      mlir::Value like, double value);

/// Attaches DifferentiableOpInterface to the upstream ops a model uses
/// (arith addf, subf, mulf, divf, negf, maximumf, minimumf; math tanh, exp;
/// tensor concat, extract_slice, expand_shape, collapse_shape; linalg
/// transpose) as external models.
void registerUpstreamGradientModels(mlir::DialectRegistry &registry);

} // namespace lcc::attn

#endif // LCC_DIALECT_ATTN_IR_ATTNINTERFACES_H
