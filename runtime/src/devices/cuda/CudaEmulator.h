//===- CudaEmulator.h - a CUDA driver that runs kernels on the CPU -*- C++ -*-===//
//
// `--device=cuda-emulator` is the cuda device (CudaDevice) over this driver
// instead of libcuda: the same entry points (CudaDriver.h), so the device's
// buffers, argument packing and launches run as they will on a GPU. Memory
// is host memory; a module is a CudaEmulator executable (an x86-64 shared
// object of the PTX's kernels, runtime/schema/CudaEmulatorAbi.h); a launch
// runs every block of the grid, each thread of a block a fiber (Fiber.h),
// with CUDA's semantics: shared memory per block, a barrier returns when
// every thread of the block has reached it, and a barrier some threads never
// reach is a finding (a divergent barrier), not a hang.
//
// Checks, as compute-sanitizer's tools (EmulatorChecks):
//  - memcheck: every global and shared access lies inside the buffer its
//    address derives from (the dispatch's binding, shared memory, a module
//    global);
//  - racecheck: two threads of a block touch the same shared byte, at least
//    one writing, with no barrier between.
// A launch with findings fails with CUDA_ERROR_ILLEGAL_ADDRESS (memcheck) or
// CUDA_ERROR_LAUNCH_FAILED; takeFindings() then gives one line per finding
// class, and the process has not faulted: a checked access outside its
// buffer went to a scratch area instead.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_RUNTIME_CUDAEMULATOR_H
#define LCC_RUNTIME_CUDAEMULATOR_H

#include "devices/cuda/CudaDriver.h"

#include <cstdint>
#include <string>
#include <vector>

namespace lcc::runtime::cuda {

/// What the emulator checks, and the order it runs a block's threads in
/// between two barriers (a race that the forward order happens to survive
/// shows in another).
struct EmulatorOptions {
  bool memcheck = false;
  bool racecheck = false;
  enum class ThreadOrder { Forward, Reversed, Shuffled };
  ThreadOrder order = ThreadOrder::Forward;
  uint64_t seed = 0; // of Shuffled

  /// Reads `--check`'s value: "memcheck", "racecheck", both
  /// comma-separated, or "none"; false for anything else.
  bool parseChecks(const std::string &text);
  /// Reads `--thread-order`'s value: "forward", "reversed" or
  /// "shuffled[:SEED]"; false for anything else.
  bool parseThreadOrder(const std::string &text);
  /// "memcheck,racecheck", "none".
  std::string describeChecks() const;
};

/// What the cuda device tells the emulator of its next launch on this
/// thread, for the checks and their messages: the dispatch, its model
/// source location and the bytes of each binding (kernel parameter).
struct EmulatedLaunch {
  std::string dispatch;
  std::string location;
  std::vector<uint64_t> bindingBytes;
  EmulatorOptions options;
};

/// Sets what the next cuLaunchKernel of the calling thread runs with.
void describeNextLaunch(EmulatedLaunch launch);
/// The findings of the calling thread's last failed launch, one line per
/// class, and forgets them; empty when there were none.
std::vector<std::string> takeFindings();

} // namespace lcc::runtime::cuda

#endif // LCC_RUNTIME_CUDAEMULATOR_H
