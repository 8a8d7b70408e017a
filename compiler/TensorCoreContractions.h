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

/// The warp instructions of one tensor-core product as lowerProductToMma
/// builds it for a block of `blockSize` threads: its mma.sync and the
/// scalar loads and stores of its fragments (per k step 8 for an A fragment
/// and 4 for a B fragment in bf16 pairs, 4 and 2 in tf32, each shared by
/// the tiles of a warp tile; 4 loads and 4 stores of each 16 x 8 tile's C).
struct MmaInstructions {
  bool tf32 = false;
  int64_t mmas = 0;
  int64_t fragmentAccesses = 0;
};

/// `op`'s (on tensors or buffers) instructions when it is a product
/// lowerProductToMma puts on tensor cores: a paired bf16 product of whole
/// m16n8k16 tiles, or with `tf32` an f32 product of whole m16n8k8 tiles.
std::optional<MmaInstructions> mmaInstructionsOf(mlir::linalg::LinalgOp op,
                                                 bool tf32, int64_t blockSize);

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
