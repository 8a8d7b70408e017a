//===- PairedContractions.h - bf16 dot-product register blocks --*- C++ -*-===//
//
// A contraction of bf16 operands in adjacent pairs of the reduced dimension,
// accumulated in f32 (TensorBuilder::pairedMatmul, once bufferized):
//
//   C[m, n] += sum_{p, j} A[m, p, j] * B[p, n, j],  j < 2,
//
// is the layout of AVX-512's bf16 dot product (vdpbf16ps): one instruction
// multiplies a broadcast pair of A by 16 pairs of B and adds both products
// to 16 f32 accumulators. It is also the layout of AMX's tile product
// (tdpbf16ps): a tile of A is 16 rows of 32 k, a tile of B 16 rows of 16
// pairs. On a CPU with amx_bf16 it becomes tile products; with avx512_bf16
// register blocks of dot products; elsewhere it is left to the loop
// lowering.
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

/// Whether AMX's tile products can compute `op` (of `shape`, as
/// matchPairedContraction gave it): C in whole 16 x 16 tiles of f32, the
/// pairs in whole steps of 16 (a tile row of A is 32 bf16, 64 bytes), at
/// most 16 steps, and each row of A's pairs contiguous.
bool fitsMatrixTiles(mlir::linalg::GenericOp op,
                     const PairedContractionShape &shape);

/// Replaces `op` by AMX tile products (`amx` dialect, tdpbf16ps): C in
/// blocks of up to 2 x 2 tiles (32 x 32 f32; 4 accumulator tiles, 2 of A,
/// 2 of B: the 8 tile registers), each loaded (or zeroed, with `zeroC`),
/// advanced over every step of 16 pairs, and stored. The steps are
/// unrolled, so that no tile lives across a loop.
void lowerPairedContractionToTiles(mlir::RewriterBase &rewriter,
                                   mlir::linalg::GenericOp op,
                                   const PairedContractionShape &shape,
                                   bool zeroC);

} // namespace lcc

#endif // LCC_COMPILER_PAIREDCONTRACTIONS_H
