//===- SparsePatterns.h - Sparse Transformer patterns as masks --*- C++ -*-===//
//
// attn.sparse_attention means dense attention masked by the fixed or
// strided pattern (docs/design.md §3). These build that mask as a mask region,
// so the sparse form is a thin user of masked attention: its lowering is
// masked flash attention with the block table of MaskTiles.h, and
// --attention=dense turns it back into the dense op it equals.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_DIALECT_ATTN_IR_SPARSEPATTERNS_H
#define LCC_DIALECT_ATTN_IR_SPARSEPATTERNS_H

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

/// The two parts of a pattern whose keys lie in every tile (a small
/// stride), each a mask region over (batch, head, query i, key): with
/// `stride` l and summary c,
///   fixed window:   floor(i / l) == floor(j / l);
///   fixed summary:  keys k of the summary columns alone, j = (k / c) l +
///                   l - c + k mod c: j outside i's window (its own window
///                   is the first part's) and, if `causal`, j <= i;
///   strided band:   |i - j| < l;
///   strided column: queries and keys of one residue mod l, as rows t of
///                   it: t' != t (t' == t is i itself, the band's).
/// Each part is attention over its keys; together they are the pattern,
/// every visible key in exactly one.
void buildFixedWindowMask(mlir::OpBuilder &builder, mlir::Location loc,
                          mlir::Region &mask, int64_t stride);
void buildFixedSummaryMask(mlir::OpBuilder &builder, mlir::Location loc,
                           mlir::Region &mask, int64_t stride, int64_t summary,
                           bool causal);
void buildStridedBandMask(mlir::OpBuilder &builder, mlir::Location loc,
                          mlir::Region &mask, int64_t stride);
void buildStridedColumnMask(mlir::OpBuilder &builder, mlir::Location loc,
                            mlir::Region &mask);

/// The attn.attention equal to `op`: same operands, causality and scale,
/// and the pattern as its mask region. Created at the builder's insertion
/// point; `op` is left in place.
attn::AttentionOp createMaskedAttention(mlir::OpBuilder &builder,
                                        attn::SparseAttentionOp op);

} // namespace lcc

#endif // LCC_DIALECT_ATTN_IR_SPARSEPATTERNS_H
