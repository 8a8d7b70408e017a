//===- HintBlocksPerSm.cpp - registers up to the shared-memory occupancy --===//
//
// ptxas, told only a kernel's block size (.maxntid), keeps its registers
// down for an occupancy that the kernel's shared memory may already rule
// out, and spills to get there: the relative, routed and compressive
// attention kernels spilled 8 to 24 bytes at 48 to 96 registers with one to
// five blocks an SM by shared memory. Told how many blocks the shared
// memory lets an SM hold (.minnctapersm), it takes every register that does
// not lower that occupancy.
//
//===----------------------------------------------------------------------===//

#include "compiler/CudaArch.h"
#include "compiler/Passes.h"
#include "passes/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Builders.h"

namespace lcc {
#define GEN_PASS_DEF_HINTBLOCKSPERSM
#include "compiler/Passes.h.inc"
} // namespace lcc

using namespace mlir;

namespace {

/// ptxas meets the count at any cost, so it is told only where the count
/// leaves it this many registers a thread: at 13 blocks (39 registers) it
/// spilled 1.5 KB, at 6 (85) 16 bytes, where untold it spilled none.
constexpr int64_t kMinRegistersLeft = 96;

struct HintBlocksPerSmPass
    : lcc::impl::HintBlocksPerSmBase<HintBlocksPerSmPass> {
  using HintBlocksPerSmBase::HintBlocksPerSmBase;

  void runOnOperation() override {
    const lcc::CudaArch *found = lcc::findCudaArch(arch);
    if (!found) {
      getOperation().emitError()
          << "lcc-hint-blocks-per-sm: unknown CUDA architecture '" << arch
          << "'; expected one of " << lcc::supportedCudaArchs();
      return signalPassFailure();
    }
    if (failed(lcc::checkOptionRanges(getOperation(), "lcc-hint-blocks-per-sm",
                                      {{lcc::knobs::kCudaBlockSize,
                                        blockSize}})))
      return signalPassFailure();
    for (auto kernel : getOperation().getOps<gpu::GPUFuncOp>())
      hint(kernel, *found);
  }

  void hint(gpu::GPUFuncOp kernel, const lcc::CudaArch &sm) {
    auto bytes =
        kernel->getAttrOfType<IntegerAttr>("lcc.workgroup_memory_bytes");
    if (!bytes)
      return;
    int64_t blocks =
        lcc::blocksPerSmBySharedMemory(sm, blockSize, bytes.getInt());
    if (blocks >= lcc::blocksPerSmByThreads(sm, blockSize))
      return;
    blocks = std::max<int64_t>(1, blocks);
    int64_t threads = (blockSize + 31) / 32 * 32;
    if (sm.registersPerSm / (blocks * threads) < kMinRegistersLeft)
      return;
    kernel->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                    Builder(kernel).getI32IntegerAttr(blocks));
  }
};

} // namespace
