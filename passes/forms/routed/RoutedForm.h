//===- RoutedForm.h - the routed attention form -----------------*- C++ -*-===//
//
// What the files of the routed form share: its rewrite pass (Passes.td), its
// lowering patterns and its registration (AttentionForms.h), which
// registerBuiltinAttentionForms calls (forms/BuiltinForms.def).
//
//===----------------------------------------------------------------------===//

#ifndef LCC_PASSES_FORMS_ROUTED_ROUTEDFORM_H
#define LCC_PASSES_FORMS_ROUTED_ROUTEDFORM_H

#include "passes/DecodeStep.h"
#include "passes/KeySelection.h"
#include "passes/Passes.h"

namespace lcc {

#define GEN_PASS_DECL
#include "passes/forms/routed/Passes.h.inc"

/// Registers the form with lcc (AttentionForms.h) and its rewrite pass.
void registerRoutedAttentionForm();

/// For lcc --decode: causal attn.routed_attention with trained centroids:
/// key, value and key-centroid cosine caches, and its step as the op
/// attends the last of the tokens so far (RoutedDecodeStep.cpp).
DecodeCacheFill fillRoutedDecodeCaches;
DecodeStepBuild buildRoutedDecodeStep;

/// attn.routed_attention (LowerRoutedAttention.cpp).
void populateRoutedAttentionLoweringPatterns(mlir::RewritePatternSet &patterns);

/// attn.routed_attention_backward: the routing recomputed, each window's
/// attention differentiated (LowerRoutedAttentionBackward.cpp).
void populateRoutedAttentionBackwardLoweringPatterns(
    mlir::RewritePatternSet &patterns);

/// The form's checkLowering: on a half type a query's scores and output
/// sum over its cluster's window in pairs, and the backward a tile of
/// sorted queries and the values' head_dim; one error where one is odd
/// (LowerRoutedAttentionBackward.cpp).
mlir::LogicalResult checkRoutedAttentionLowering(mlir::Operation *root);

/// attn.routed_centroid_update, the centroids' moving average
/// (LowerRoutedCentroidUpdate.cpp).
void populateRoutedCentroidUpdateLoweringPatterns(
    mlir::RewritePatternSet &patterns);

/// For lcc --emit=attention-map --input: the routing of
/// attn.routed_attention `op` (each query's cluster, each cluster's window
/// of keys), built after it, and the keys it gives each query
/// (RoutedKeySelection.cpp).
mlir::FailureOr<KeySelectionProbe>
buildRoutedKeySelectionProbe(mlir::OpBuilder &b, mlir::Operation *op,
                             std::string &whyNot);

#define GEN_PASS_REGISTRATION
#include "passes/forms/routed/Passes.h.inc"

} // namespace lcc

#endif // LCC_PASSES_FORMS_ROUTED_ROUTEDFORM_H
