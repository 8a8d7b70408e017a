//===- SparseForm.h - the sparse attention form -----------------*- C++ -*-===//
//
// What the files of the sparse form share: its rewrite pass (Passes.td), its
// lowering patterns and its registration (AttentionForms.h), which
// registerBuiltinAttentionForms calls (forms/BuiltinForms.def).
//
//===----------------------------------------------------------------------===//

#ifndef LCC_PASSES_FORMS_SPARSE_SPARSEFORM_H
#define LCC_PASSES_FORMS_SPARSE_SPARSEFORM_H

#include "passes/DecodeStep.h"
#include "passes/Passes.h"

namespace lcc {

#define GEN_PASS_DECL
#include "passes/forms/sparse/Passes.h.inc"

/// Registers the form with lcc (AttentionForms.h) and its rewrite pass.
void registerSparseAttentionForm();

/// attn.sparse_attention, block-sparse flash (LowerSparseAttention.cpp).
void populateSparseAttentionLoweringPatterns(mlir::RewritePatternSet &patterns);

/// What attn-dense-to-sparse builds; 0 for stride or summary picks the
/// default (see the pass description).
struct SparseAttentionOptions {
  attn::SparsePattern pattern;
  int64_t block;
  int64_t stride;
  int64_t summary;
};

/// For lcc --decode: causal attn.sparse_attention as the masked attention
/// it equals, with dense attention's caches and step
/// (SparseDecodeStep.cpp; AttentionFormDefinition's hooks).
DecodeCacheFill fillSparseDecodeCaches;
DecodeStepBuild buildSparseDecodeStep;

#define GEN_PASS_REGISTRATION
#include "passes/forms/sparse/Passes.h.inc"

} // namespace lcc

#endif // LCC_PASSES_FORMS_SPARSE_SPARSEFORM_H
