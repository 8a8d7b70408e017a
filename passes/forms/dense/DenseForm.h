//===- DenseForm.h - the dense attention form -------------------*- C++ -*-===//
//
// What the files of the dense form share: its rewrite pass (Passes.td), its
// lowering patterns and its registration (AttentionForms.h), which
// registerBuiltinAttentionForms calls (forms/BuiltinForms.def).
//
//===----------------------------------------------------------------------===//

#ifndef LCC_PASSES_FORMS_DENSE_DENSEFORM_H
#define LCC_PASSES_FORMS_DENSE_DENSEFORM_H

#include "passes/DecodeStep.h"
#include "passes/Passes.h"

namespace lcc {

#define GEN_PASS_DECL
#include "passes/forms/dense/Passes.h.inc"

/// Registers the form with lcc (AttentionForms.h) and its rewrite pass.
void registerDenseAttentionForm();

/// attn.attention in the flash form (LowerDenseAttention.cpp).
void populateDenseAttentionLoweringPatterns(mlir::RewritePatternSet &patterns,
                                            AttentionTiling tiling);

/// attn.attention_backward, the flash backward
/// (LowerAttentionBackward.cpp).
void populateAttentionBackwardLoweringPatterns(
    mlir::RewritePatternSet &patterns, AttentionTiling tiling);

/// Whether every op of a score region that depends on the score has a
/// derivative the attention backward builds; an error on the first that
/// has none (LowerAttentionBackward.cpp).
mlir::LogicalResult checkScoreRegionDifferentiable(mlir::Region &region);

/// For lcc --decode: causal attn.attention's key and value caches,
/// written by prefill, and its step from a run-time position
/// (DenseDecodeStep.cpp; AttentionFormDefinition's hooks).
DecodeCacheFill fillDenseDecodeCaches;
DecodeStepBuild buildDenseDecodeStep;

#define GEN_PASS_REGISTRATION
#include "passes/forms/dense/Passes.h.inc"

} // namespace lcc

#endif // LCC_PASSES_FORMS_DENSE_DENSEFORM_H
