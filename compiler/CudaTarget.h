//===- CudaTarget.h - dispatches to PTX and a cubin -------------*- C++ -*-===//
//
// Turns the dispatch functions of a module into GPU kernels of the Ptx/Cubin
// ABI of runtime/schema/lcm.fbs: one `.entry` per dispatch taking one
// pointer per binding, launched with grid = workgroup count, a block of
// `blockSize` threads and the kernel's dynamic shared memory.
//
// dispatches -> bufferized -> shared-memory tiles and thread loops (gpu
// dialect) -> NVVM -> LLVM IR -> PTX (LLVM's NVPTX backend) -> cubin (ptxas,
// when found).
//
//===----------------------------------------------------------------------===//

#ifndef LCC_COMPILER_CUDATARGET_H
#define LCC_COMPILER_CUDATARGET_H

#include "compiler/CudaArch.h"
#include "compiler/DispatchBuffers.h"
#include "compiler/KernelReport.h"

#include <cstdint>
#include <optional>
#include <string>

namespace lcc {

struct CudaTargetOptions {
  /// The GPU architecture, "sm_90".
  std::string arch = "sm_90";
  /// A CUDA installation to take ptxas from first (`--cuda-path`).
  std::string cudaPath;
  /// Threads per block of every kernel.
  int64_t blockSize = 128;
  /// Whether to compile the kernels for the CUDA emulator too (an artifact
  /// holds them; --emit=ptx and the kernel report do not need them).
  bool emulator = true;
  /// Dumps each stage when set.
  StageDumper dump;
  /// Whether f32 products run on tensor cores in tf32 (lcc --cuda-tf32).
  bool tf32 = false;
};

struct CudaKernel {
  std::string name;
  unsigned bindingCount = 0;
  int64_t sharedMemoryBytes = 0;
  /// What ptxas reported, when it was found.
  std::optional<KernelResources> resources;
  /// What one block issues on the tensor cores and to shared memory.
  BlockSharedWork blockWork;
};

struct CudaImage {
  std::string arch;
  std::string ptx;
  /// Empty when no ptxas was found; `ptxasSearch` then says where lcc
  /// looked.
  std::string cubin;
  std::string ptxasSearch;
  /// The kernels for the host, as a CudaEmulator executable's shared object
  /// (CudaEmulatorTarget.h).
  std::string emulator;
  int64_t blockSize = 0;
  /// Whether its f32 products run on tensor cores in tf32.
  bool tf32 = false;
  llvm::SmallVector<CudaKernel> kernels;
};

/// The CUDA kernel stages, as lcc runs them and lcc-lower-to-kernels names
/// them: the dispatches bufferized and outlined into a gpu.module; their
/// loops spread over `blockSize` threads with shared-memory staging (on
/// `arch`'s tensor cores where it has them, within its shared memory per
/// block; a supported arch); math expanded and loops lowered to control
/// flow; then NVVM.
void buildCudaBufferizePipeline(mlir::OpPassManager &pm);
void buildCudaThreadsPipeline(mlir::OpPassManager &pm, int64_t blockSize,
                              llvm::StringRef arch, bool tf32);
void buildCudaLoopsPipeline(mlir::OpPassManager &pm);
void buildCudaToNVVMPipeline(mlir::OpPassManager &pm);

/// Compiles `kernels` (a module holding only dispatch functions on tensors,
/// outputs last; consumed) to PTX, and to a cubin when ptxas is found.
/// Emits an error on `kernels` and fails if any step fails.
mlir::LogicalResult compileDispatchesForCuda(mlir::ModuleOp kernels,
                                             const CudaTargetOptions &options,
                                             CudaImage &image);

/// Finds ptxas: `cudaPath`/bin, then PATH, then /usr/local/cuda/bin. Returns
/// nullopt and fills `searched` with the places tried when there is none.
std::optional<std::string> findPtxas(llvm::StringRef cudaPath,
                                     std::string &searched);

} // namespace lcc

#endif // LCC_COMPILER_CUDATARGET_H
