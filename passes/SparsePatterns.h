//===- SparsePatterns.h - Sparse Transformer patterns as masks --*- C++ -*-===//
//
// attn.sparse_attention means dense attention masked by the fixed or
// strided pattern (DESIGN.md §3). These build that mask as a mask region,
// so the sparse form is a thin user of masked attention: its lowering is
// masked flash attention with the block table of MaskTiles.h, and
// --attention=dense turns it back into the dense op it equals.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_PASSES_SPARSEPATTERNS_H
#define LCC_PASSES_SPARSEPATTERNS_H

#include "dialects/Attn/IR/AttnOps.h"

#include "mlir/IR/Builders.h"

namespace lcc {

/// Fills the empty `mask` region with the pattern: for query i and key j,
///   strided: |i - j| < stride or (i - j) mod stride == 0;
///   fixed:   floor(i / stride) == floor(j / stride)
///            or j mod stride >= stride - summary.
void buildSparsePatternMask(mlir::OpBuilder &builder, mlir::Location loc,
                            mlir::Region &mask, attn::SparsePattern pattern,
                            int64_t stride, int64_t summary);

/// The attn.attention equal to `op`: same operands, causality and scale,
/// and the pattern as its mask region. Created at the builder's insertion
/// point; `op` is left in place.
attn::AttentionOp createMaskedAttention(mlir::OpBuilder &builder,
                                        attn::SparseAttentionOp op);

} // namespace lcc

#endif // LCC_PASSES_SPARSEPATTERNS_H
