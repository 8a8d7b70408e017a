//===- LSHForm.h - the LSH attention form -----------------------*- C++ -*-===//
//
// What the files of the lsh form share: its rewrite pass (Passes.td), its
// lowering patterns and its registration (AttentionForms.h), which
// registerBuiltinAttentionForms calls (forms/BuiltinForms.def).
//
//===----------------------------------------------------------------------===//

#ifndef LCC_PASSES_FORMS_LSH_LSHFORM_H
#define LCC_PASSES_FORMS_LSH_LSHFORM_H

#include "passes/DecodeStep.h"
#include "passes/KeySelection.h"
#include "passes/Passes.h"

namespace lcc {

namespace attn {
class LSHAttentionOp;
} // namespace attn

#define GEN_PASS_DECL
#include "passes/forms/lsh/Passes.h.inc"

/// Registers the form with lcc (AttentionForms.h) and its rewrite pass.
void registerLSHAttentionForm();

/// attn.lsh_attention (LowerLSHAttention.cpp).
void populateLSHAttentionLoweringPatterns(mlir::RewritePatternSet &patterns);

/// attn.lsh_attention_backward: hashing and sorting recomputed, the chunks'
/// attention and the rounds' combine differentiated
/// (LowerLSHAttentionBackward.cpp).
void populateLSHAttentionBackwardLoweringPatterns(
    mlir::RewritePatternSet &patterns);

/// The form's checkLowering: on a half type the backward multiplies a
/// chunk's queries and the values' head_dim in pairs; one error where
/// bucket_size or it is odd (LowerLSHAttentionBackward.cpp).
mlir::LogicalResult checkLSHAttentionLowering(mlir::Operation *root);

/// n_buckets from which "auto" hashes LSH attention factorized: 16K tokens
/// in buckets of 64. Below it the plain hash costs little (at 4K, 32
/// rotation columns beside the chunks' 256 multiply-adds per dimension);
/// above it the plain hash grows with the sequence and soon dominates.
constexpr int64_t kFactorizedHashBuckets = 256;

/// Whether LSH attention over `seq` tokens in buckets of `bucketSize`
/// hashes factorized under `mode` ("plain", "factorized", "auto": from
/// kFactorizedHashBuckets buckets when they factor); failure, with `whyNot`,
/// for "factorized" when n_buckets is not a multiple of 4 or an unknown mode.
mlir::FailureOr<bool> lshFactorizedHash(llvm::StringRef mode, int64_t seq,
                                        int64_t bucketSize,
                                        std::string &whyNot);

/// Replaces shared-QK `op` by the equivalent attn.lsh_attention (the one
/// rewrite behind attn-dense-to-lsh and the form's for --attention=auto).
attn::LSHAttentionOp rewriteToLSH(mlir::RewriterBase &rewriter,
                                  attn::AttentionOp op, int64_t nHashes,
                                  int64_t bucketSize, int64_t seed,
                                  bool factorizedHash = false);

/// For lcc --emit=attention-map --input: the buckets and sorted orders of
/// attn.lsh_attention `op`, built after it, and the keys they give each
/// query (LSHKeySelection.cpp).
mlir::FailureOr<KeySelectionProbe>
buildLSHKeySelectionProbe(mlir::OpBuilder &b, mlir::Operation *op,
                          std::string &whyNot);

/// For lcc --decode: causal attn.lsh_attention's caches (unit keys,
/// values, every round's buckets), written by prefill, and its step, as
/// the op attends the last token of the tokens so far (LSHDecodeStep.cpp;
/// AttentionFormDefinition's hooks).
DecodeCacheFill fillLSHDecodeCaches;
DecodeStepBuild buildLSHDecodeStep;

#define GEN_PASS_REGISTRATION
#include "passes/forms/lsh/Passes.h.inc"

} // namespace lcc

#endif // LCC_PASSES_FORMS_LSH_LSHFORM_H
