//===- CudaArch.cpp - what lcc knows of each NVIDIA architecture ----------===//

#include "compiler/CudaArch.h"

#include <algorithm>

using namespace lcc;

namespace {

constexpr int64_t KiB = 1024;
// name, PTX ISA, bf16 mma, shared per block, per SM, reserved per block,
// warps per SM, blocks per SM.
constexpr CudaArch kCudaArchs[] = {
    {"sm_75", "+ptx63", false, 64 * KiB, 64 * KiB, 0, 32, 16},
    {"sm_80", "+ptx70", true, 163 * KiB, 164 * KiB, KiB, 64, 32},
    {"sm_86", "+ptx71", true, 99 * KiB, 100 * KiB, KiB, 48, 16},
    {"sm_87", "+ptx74", true, 163 * KiB, 164 * KiB, KiB, 48, 16},
    {"sm_89", "+ptx78", true, 99 * KiB, 100 * KiB, KiB, 48, 24},
    {"sm_90", "+ptx78", true, 227 * KiB, 228 * KiB, KiB, 64, 32},
    {"sm_90a", "+ptx80", true, 227 * KiB, 228 * KiB, KiB, 64, 32},
    {"sm_100", "+ptx86", true, 227 * KiB, 228 * KiB, KiB, 64, 32},
    {"sm_120", "+ptx87", true, 99 * KiB, 100 * KiB, KiB, 48, 32},
};

} // namespace

const CudaArch *lcc::findCudaArch(llvm::StringRef name) {
  for (const CudaArch &arch : kCudaArchs)
    if (arch.name == name)
      return &arch;
  return nullptr;
}

llvm::StringRef lcc::supportedCudaArchs() {
  return "sm_75, sm_80, sm_86, sm_87, sm_89, sm_90, sm_90a, sm_100, sm_120";
}

bool lcc::hasBF16TensorCores(llvm::StringRef name) {
  const CudaArch *arch = findCudaArch(name);
  return arch && arch->bf16TensorCores;
}

int64_t lcc::blocksPerSmByThreads(const CudaArch &arch, int64_t threads) {
  int64_t warps = (threads + 31) / 32;
  return std::min(arch.maxBlocksPerSm, arch.maxWarpsPerSm / warps);
}

int64_t lcc::blocksPerSmBySharedMemory(const CudaArch &arch, int64_t threads,
                                       int64_t sharedBytes) {
  if (sharedBytes <= 0)
    return blocksPerSmByThreads(arch, threads);
  return arch.sharedBytesPerSm /
         (sharedBytes + arch.reservedSharedBytesPerBlock);
}
