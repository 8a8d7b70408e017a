//===- Lowerings.h - the lowering patterns of each op family ----*- C++ -*-===//
//
// attn-lower-to-linalg applies these; each family's patterns live in the
// file named after it.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_PASSES_LOWERTOLINALG_LOWERINGS_H
#define LCC_PASSES_LOWERTOLINALG_LOWERINGS_H

#include "passes/Passes.h"

namespace lcc {

/// Embedding, layer norm, linear, feed-forward, residual, reversible,
/// multi-head attention and softmax cross-entropy (LowerModelOps.cpp).
void populateModelOpLoweringPatterns(mlir::RewritePatternSet &patterns);

/// attn.attention in the flash form (LowerDenseAttention.cpp).
void populateDenseAttentionLoweringPatterns(mlir::RewritePatternSet &patterns,
                                            AttentionTiling tiling);

/// `op` (static shapes) as FlashAttention at the builder's insertion point:
/// its mask and score regions inlined, the mask's block table as the tile
/// skipping. Returns the result; `op` is left in place.
mlir::Value buildFlashAttention(mlir::OpBuilder &builder, attn::AttentionOp op,
                                AttentionTiling tiling);

/// attn.sparse_attention, block-sparse flash (LowerSparseAttention.cpp).
void populateSparseAttentionLoweringPatterns(mlir::RewritePatternSet &patterns);

/// attn.lsh_attention (LowerLSHAttention.cpp).
void populateLSHAttentionLoweringPatterns(mlir::RewritePatternSet &patterns);

/// attn.routed_attention (LowerRoutedAttention.cpp).
void populateRoutedAttentionLoweringPatterns(mlir::RewritePatternSet &patterns);

} // namespace lcc

#endif // LCC_PASSES_LOWERTOLINALG_LOWERINGS_H
