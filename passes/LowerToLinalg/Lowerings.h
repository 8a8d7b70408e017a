//===- Lowerings.h - the lowering patterns of each op family ----*- C++ -*-===//
//
// The lowerings of the model ops, the train step's ops and the attention
// ops built into the flash attention here (relative, adaptive span), each
// family's patterns in the file named after it; and the flash attention of
// an attention op, which the forms' folders build on. The forms' own
// patterns are declared in their folders (forms/<form>/<Form>Form.h).
//
//===----------------------------------------------------------------------===//

#ifndef LCC_PASSES_LOWERTOLINALG_LOWERINGS_H
#define LCC_PASSES_LOWERTOLINALG_LOWERINGS_H

#include "passes/LowerToLinalg/FlashAttention.h"
#include "passes/Passes.h"

#include "llvm/ADT/APFloat.h"

#include <optional>

namespace lcc {

/// Embedding, layer norm, linear, feed-forward, residual, reversible,
/// multi-head attention and softmax cross-entropy (LowerModelOps.cpp).
void populateModelOpLoweringPatterns(mlir::RewritePatternSet &patterns);

/// What configures the flash form of an attention (forward or backward):
/// its operands, attributes and regions.
struct AttentionSpec {
  mlir::Operation *op; // for remarks and locations
  mlir::Value query, key, value;
  bool causal, sharedQK;
  std::optional<llvm::APFloat> scale;
  mlir::Region *mask, *score; // null when absent
  /// Whether to remark on the mask's tile skipping (the forward does; its
  /// backward visits the same tiles and says nothing new).
  bool remarks = true;
  /// A decode step's query against its caches (FlashAttention's
  /// queryPosition, a 0-d i32 tensor): the keys are then the cache as
  /// given (shared QK's already unit), and a mask is evaluated per score
  /// only, its tile table needing the query positions at compile time.
  mlir::Value queryPosition = nullptr;
  /// attn.attention's `positions`: where each query and key sits in the
  /// whole sequence (1-D i64), as the regions and causality see them.
  /// Null: at its index.
  mlir::Value queryPositions = nullptr, keyPositions = nullptr;

  /// The attention `op` computes (an attn.attention), or whose backward it
  /// is (an attn.attention_backward: no remarks, the forward made them).
  template <typename AttentionLikeOp>
  static AttentionSpec of(AttentionLikeOp op, bool remarks) {
    return {op,
            op.getQuery(),
            op.getKey(),
            op.getValue(),
            op.getCausal(),
            op.getSharedQk(),
            op.getScale(),
            op.getMaskRegion(),
            op.getScoreRegion(),
            remarks,
            nullptr,
            op.getQueryPositions(),
            op.getKeyPositions()};
  }
};

/// Where the score at `at` (its indices) sits in the whole sequence, as the
/// regions of `spec` see it: at its indices, or at `spec`'s positions.
ScorePosition positionInSequence(mlir::OpBuilder &b, mlir::Location loc,
                                 const AttentionSpec &spec,
                                 const ScorePosition &at);

/// The FlashAttention that computes `spec` (ConfigureFlashAttention.cpp):
/// shared-QK keys normalised (at the builder's insertion point) and their self
/// score, the mask region as the visibility and its block table as the tile
/// skipping, the score region as the score modifier.
FlashAttention configureFlashAttention(mlir::OpBuilder &builder,
                                       const AttentionSpec &spec,
                                       AttentionTiling tiling);

/// `op` (static shapes) as FlashAttention at the builder's insertion point:
/// its mask and score regions inlined, the mask's block table as the tile
/// skipping. Returns the result; `op` is left in place.
mlir::Value buildFlashAttention(mlir::OpBuilder &builder, attn::AttentionOp op,
                                AttentionTiling tiling);

/// Whether the half-precision lowering computes an attention op (or an
/// attention backward op) on bf16 or f16: dense (shared-QK too), masked,
/// sparse, adaptive-span, relative, LSH and routed attention and their
/// backward ops do (LowerToLinalg.cpp); ring attention computes in f32
/// only. The lowering's
/// refusal and attn-half-precision-attention's choice both ask it.
bool computesInHalfPrecision(mlir::Operation *op);

/// The half type `op` computes in: "bf16" or "f16" when a tensor operand or
/// result is of it (the verifiers keep one op to one half type), else
/// empty.
llvm::StringRef halfPrecisionOf(mlir::Operation *op);

/// For a form's checkLowering: `size`, which `op` multiplies in pairs of
/// its half type, is even; else one error, "<half> <multiplies> in pairs;
/// <name> <size> is odd".
mlir::LogicalResult checkPairedSize(mlir::Operation *op,
                                    llvm::StringRef multiplies,
                                    llvm::StringRef name, int64_t size);

/// The train step's ops: the backward of each model op, head split and
/// merge, clipping and optimizer updates (LowerTrainingOps.cpp).
void populateTrainingOpLoweringPatterns(mlir::RewritePatternSet &patterns);

/// attn.merge_partials and its backward, ring attention's merge of partial
/// results by their logsumexps, and attn.gate_select
/// (LowerMergePartials.cpp).
void populateMergePartialsLoweringPatterns(mlir::RewritePatternSet &patterns);

/// attn.relative_attention, Transformer-XL's attention in the flash form
/// with the position term per tile pair (LowerRelativeAttention.cpp).
void populateRelativeAttentionLoweringPatterns(
    mlir::RewritePatternSet &patterns, AttentionTiling tiling);

/// attn.relative_attention_backward, the flash backward with the position
/// term's gradient read along each tile pair's band
/// (LowerRelativeAttentionBackward.cpp).
void populateRelativeAttentionBackwardLoweringPatterns(
    mlir::RewritePatternSet &patterns, AttentionTiling tiling);

/// attn.adaptive_span_attention: FlashAttention with the soft span mask
/// after the softmax, tiles beyond the span skipped
/// (LowerAdaptiveSpanAttention.cpp).
void populateAdaptiveSpanAttentionLoweringPatterns(
    mlir::RewritePatternSet &patterns, AttentionTiling tiling);

/// attn.adaptive_span_attention_backward, the flash backward with the span
/// mask's gradient (LowerAdaptiveSpanAttentionBackward.cpp).
void populateAdaptiveSpanAttentionBackwardLoweringPatterns(
    mlir::RewritePatternSet &patterns, AttentionTiling tiling);

} // namespace lcc

#endif // LCC_PASSES_LOWERTOLINALG_LOWERINGS_H
