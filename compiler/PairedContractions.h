//===- PairedContractions.h - bf16 dot-product register blocks --*- C++ -*-===//
//
// A contraction of bf16 operands in adjacent pairs of the reduced dimension,
// accumulated in f32 (TensorBuilder::pairedMatmul, once bufferized):
//
//   C[m, n] += sum_{p, j} A[m, p, j] (or A[p, m, j]) * B[p, n, j],  j < 2,
//
// is the layout of AVX-512's bf16 dot product (vdpbf16ps): one instruction
// multiplies a broadcast pair of A by 16 pairs of B and adds both products
// to 16 f32 accumulators. On a CPU with avx512_bf16 it becomes register
// blocks of those; elsewhere it is left to the loop lowering.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_COMPILER_PAIREDCONTRACTIONS_H
#define LCC_COMPILER_PAIREDCONTRACTIONS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>

namespace lcc {

/// The extents of a paired contraction: C is rows x columns, the reduced
/// dimension 2 x pairs.
struct PairedContractionShape {
  int64_t rows, columns, pairs;
  /// A is read as A[p, m, j] (rows of Aᵀ in pairs) rather than A[m, p, j].
  bool aPairsMajor;
};

/// `op`'s shape when it is a buffer contraction of that form whose operands
/// the dot products can load: bf16 A and B, f32 C, each pair and each row
/// of B's pairs contiguous, C's rows contiguous.
std::optional<PairedContractionShape>
matchPairedContraction(mlir::linalg::GenericOp op);

/// Replaces `op` by blocks of `tileRows` x `tileColumns` f32 accumulators
/// (a last block of `restRows` rows when they do not divide C's), each
/// kept in vector registers while the pairs advance: per pair one load of
/// B per 16 columns, one broadcast of A per row and a dot product per
/// accumulator. `tileColumns` is a multiple of 16. With `zeroC` (C holds
/// zeros) the accumulators start from zero rather than from C.
void lowerPairedContractionToDots(mlir::RewriterBase &rewriter,
                                  mlir::linalg::GenericOp op,
                                  const PairedContractionShape &shape,
                                  int64_t tileRows, int64_t tileColumns,
                                  int64_t restRows, bool zeroC);

} // namespace lcc

#endif // LCC_COMPILER_PAIREDCONTRACTIONS_H
