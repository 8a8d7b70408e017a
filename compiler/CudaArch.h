//===- CudaArch.h - what lcc knows of each NVIDIA architecture -*- C++ -*-===//
//
// One table of the architectures lcc compiles for: the PTX ISA each needs
// and the published limits of its SMs (CUDA C++ Programming Guide, the
// compute capabilities table). The CUDA pipeline sizes shared memory and
// asks ptxas for registers by it; the kernel report computes occupancy
// from it.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_COMPILER_CUDAARCH_H
#define LCC_COMPILER_CUDAARCH_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace lcc {

/// Threads of a warp on every architecture lcc compiles for.
constexpr int64_t kCudaWarpSize = 32;

struct CudaArch {
  llvm::StringLiteral name;
  /// The oldest PTX ISA that has the arch, so that older drivers can still
  /// JIT the PTX.
  llvm::StringLiteral ptxFeature;
  /// Whether it has mma.sync m16n8k16 with bf16 operands (sm_80 and up).
  bool bf16TensorCores;
  /// The most shared memory a block may have: a kernel asking more fails
  /// to launch.
  int64_t sharedBytesPerBlock;
  /// The shared memory of an SM that its blocks share.
  int64_t sharedBytesPerSm;
  /// What the system reserves of it for each resident block.
  int64_t reservedSharedBytesPerBlock;
  int64_t maxWarpsPerSm;
  int64_t maxBlocksPerSm;
  int64_t registersPerSm = 65536;
  /// Registers are given to a warp in units of this many.
  int64_t registerUnitPerWarp = 256;
};

/// The arch named `name` ("sm_90"), or null.
const CudaArch *findCudaArch(llvm::StringRef name);

/// "sm_75, sm_80, ...": the names findCudaArch knows, for messages.
llvm::StringRef supportedCudaArchs();

/// Whether `name` is an arch with mma.sync m16n8k16 on bf16 operands, which
/// the kernels' paired bf16 products then use.
bool hasBF16TensorCores(llvm::StringRef name);

/// How many blocks of `threads` threads, each asking `sharedBytes` of
/// shared memory, fit an SM of `arch` by shared memory alone (no limit:
/// the most blocks the SM holds).
int64_t blocksPerSmBySharedMemory(const CudaArch &arch, int64_t threads,
                                  int64_t sharedBytes);

/// How many blocks of `threads` threads fit an SM by its warps and its
/// block slots.
int64_t blocksPerSmByThreads(const CudaArch &arch, int64_t threads);

} // namespace lcc

#endif // LCC_COMPILER_CUDAARCH_H
