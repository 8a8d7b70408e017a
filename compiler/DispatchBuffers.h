//===- DispatchBuffers.h - dispatches on tensors to buffers ----*- C++ -*-===//
//
// What every target does first with the dispatch functions: give them the
// buffer signature the runtime binds (one memref per binding, outputs last)
// and bufferize their bodies. Targets differ in what follows: the CPU frees
// temporaries on the heap, the GPU places them in shared memory.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_COMPILER_DISPATCHBUFFERS_H
#define LCC_COMPILER_DISPATCHBUFFERS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include <functional>
#include <string>

namespace lcc {

/// The buffer `memref` views: followed through view-like ops (subviews,
/// reshapes, memref.view) and memory-space casts to the value no view
/// defines (an allocation, a kernel argument, the block's shared memory).
mlir::Value viewedBuffer(mlir::Value memref);

/// Receives the IR after each stage (`name`, text) for --dump-ir.
using StageDumper =
    std::function<void(llvm::StringRef name, llvm::StringRef text)>;

/// A dispatch and the shapes of the buffers it binds, in binding order;
/// the last `outputCount` are its outputs. The host program binds an output
/// to bytes no other binding of the dispatch reaches (verifyHostProgram
/// checks it), so an output's pointer is noalias.
struct KernelSignature {
  std::string name;
  llvm::SmallVector<llvm::SmallVector<int64_t>> bindingShapes;
  unsigned outputCount = 0;
};

/// The signature of each dispatch function of `kernels`, from its argument
/// types (tensors before lcc-use-buffer-signatures, memrefs after: the
/// shapes are the same) and its results (before: one output per result;
/// after, none is known and `outputCount` is 0).
mlir::LogicalResult
kernelSignatures(mlir::ModuleOp kernels,
                 llvm::SmallVectorImpl<KernelSignature> &signatures);

/// What every target's kernel stages start with: the dispatch functions
/// alone (lcc-extract-dispatches) with their buffer signatures
/// (lcc-use-buffer-signatures), then one-shot bufferization of their
/// bodies, allocations hoisted out of loops where they can be.
/// Deallocation is the target's business.
void addDispatchBufferizationPasses(mlir::OpPassManager &pm);

/// Makes every memref.copy a linalg.copy: a copy of strided views would
/// otherwise become a call of MLIR's runner library, which no device has.
void copiesToLinalg(mlir::Operation *root);

/// The text of `op` for a --dump-ir stage: with its locations.
std::string printedWithLocations(mlir::Operation *op);

/// Runs the passes `build` adds on `op` (a pass manager anchored on its op
/// name), verifies the result once (after every pass with
/// setVerifyEachPass) and, when `dump` is set, dumps it as `stage`.
mlir::LogicalResult
runDumpedPipeline(mlir::Operation *op, llvm::StringRef stage,
                  const StageDumper &dump,
                  llvm::function_ref<void(mlir::PassManager &)> build);

/// Whether runDumpedPipeline verifies the IR after every pass (lcc
/// --verify-each), to find the pass that broke it, rather than once after
/// each stage: verifying a deep train step's 30,000 ops after each of its
/// passes was a third of a warm compile.
void setVerifyEachPass(bool verify);

} // namespace lcc

#endif // LCC_COMPILER_DISPATCHBUFFERS_H
