//===- TensorCoreContractions.h - bf16 products on tensor cores -*- C++ -*-===//
//
// The paired bf16 products of the flash attention and the model's matmuls
// (TensorBuilder::pairedMatmul: A[m][kp][2] x B[kp][n][2] into f32 C[m][n])
// as warp-level mma.sync m16n8k16 on a GPU block, for
// lcc-distribute-to-threads.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_COMPILER_TENSORCORECONTRACTIONS_H
#define LCC_COMPILER_TENSORCORECONTRACTIONS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace lcc {

/// Whether `op` (on tensors or buffers) is a paired bf16 product of whole
/// mma tiles, which lowerPairedProductToMma puts on tensor cores.
bool isTensorCoreProduct(mlir::linalg::LinalgOp op);

/// Replaces `op`, when it is a paired bf16 product whose sizes are whole
/// mma tiles (M a multiple of 16, N of 8, K of 16), by loops in which each
/// warp of the block (`blockSize` threads, whole warps; `threadId` the
/// thread) computes 16 x 8 tiles of C with mma.sync.aligned.m16n8k16 over
/// K, its fragments loaded as the PTX ISA lays them out. Returns the loop
/// it built, or null (and `op` is untouched) when `op` is not such a
/// product.
mlir::Operation *lowerPairedProductToMma(mlir::RewriterBase &rewriter,
                                         mlir::linalg::LinalgOp op,
                                         mlir::Value threadId,
                                         int64_t blockSize);

} // namespace lcc

#endif // LCC_COMPILER_TENSORCORECONTRACTIONS_H
