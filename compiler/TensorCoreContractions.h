//===- TensorCoreContractions.h - products on tensor cores ------*- C++ -*-===//
//
// The paired bf16 products of the flash attention and the model's matmuls
// (TensorBuilder::pairedMatmul: A[m][kp][2] x B[kp][n][2] into f32 C[m][n])
// as warp-level mma.sync m16n8k16, and on request f32 products as tf32
// mma.sync m16n8k8, on a GPU block, for lcc-distribute-to-threads.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_COMPILER_TENSORCORECONTRACTIONS_H
#define LCC_COMPILER_TENSORCORECONTRACTIONS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace lcc {

/// The mma.sync lowerProductToMma runs `op` (on tensors or buffers) on: a
/// paired bf16 or f16 product of whole m16n8k16 tiles on bf16 or f16 mma
/// (`half`, one peak), with `tf32` an f32 product of whole m16n8k8 tiles on
/// tf32 mma; none otherwise.
enum class MmaKind { half, tf32 };
std::optional<MmaKind> tensorCoreProductKind(mlir::linalg::LinalgOp op,
                                             bool tf32);


/// Replaces `op`, when it is such a product, by loops in which each warp of
/// the block (`blockSize` threads, whole warps; `threadId` the thread)
/// computes warp tiles of 16 x 8 tiles of C with mma.sync over K, its
/// fragments loaded as the PTX ISA lays them out. Returns the loop it
/// built, or null (and `op` is untouched) when `op` is not such a product.
mlir::Operation *lowerProductToMma(mlir::RewriterBase &rewriter,
                                   mlir::linalg::LinalgOp op,
                                   mlir::Value threadId, int64_t blockSize,
                                   bool tf32);

} // namespace lcc

#endif // LCC_COMPILER_TENSORCORECONTRACTIONS_H
