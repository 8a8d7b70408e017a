//===- TrainStep.h - the steps of attn-generate-train-step ------*- C++ -*-===//
//
// The train step is built in four steps, one file each:
//   1. FlattenBlocks.cpp: residual, reversible and multi-head blocks become
//      the ops they are made of, and every attention saves its logsumexp;
//   2. GradientRules.cpp: the reverse sweep, one vector-Jacobian rule per
//      op, giving the gradient of the loss for every parameter;
//   3. FuseRecomputedFeedForward.cpp: a reversible block's recomputed
//      feed-forward and its backward, one op;
//   4. GenerateTrainStep.cpp: clipping, the optimizer update and the
//      writes of the new values (the pass itself).
//
//===----------------------------------------------------------------------===//

#ifndef LCC_PASSES_TRAINING_TRAINSTEP_H
#define LCC_PASSES_TRAINING_TRAINSTEP_H

#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <string>

namespace lcc::training {

/// Rewrites `func`'s body into a flat list of ops the gradient rules know:
/// attn.residual and attn.reversible are inlined (with `keepReversible`,
/// attn.reversible stays and its regions are flattened: its rule recomputes
/// its inputs from its outputs); attn.multi_head_attention
/// becomes its projections (attn.linear), attn.split_heads, its body's
/// attention, attn.merge_heads and the output projection; sparse attention
/// becomes the masked attention it equals; every attn.attention gets its
/// logsumexp result. Other ops (LSH and routed attention among them) have
/// rules of their own and stay as they are. With `keepAttentionForms`,
/// every attention stays as it is too (the decode step's prefill runs each
/// form's own forward).
void flattenForDifferentiation(mlir::func::FuncOp func, bool keepReversible,
                               bool keepAttentionForms = false);

/// The gradient of the loss for each parameter the loss depends on, in the
/// order of the parameters' first use.
struct ParameterGradients {
  llvm::SmallVector<std::string> names;
  /// An attn.param of each name (its current value).
  llvm::SmallVector<mlir::Value> values;
  llvm::SmallVector<mlir::Value> gradients;
};

/// Appends to `func`'s body (before its terminator) the reverse sweep from
/// the 0-d `loss`, and returns every parameter's gradient. Fails, with an
/// error on the op, when an op on the path to the loss has no rule.
mlir::FailureOr<ParameterGradients> differentiate(mlir::func::FuncOp func,
                                                  mlir::Value loss);

/// Fuses each reversible block's recomputed attn.feed_forward with its
/// backward (attn.feed_forward_backward with_output): the hidden
/// activations are recomputed once, chunk by chunk, for the result and the
/// gradients both.
void fuseRecomputedFeedForwards(mlir::func::FuncOp func);

} // namespace lcc::training

#endif // LCC_PASSES_TRAINING_TRAINSTEP_H
