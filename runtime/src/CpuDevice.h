//===- CpuDevice.h - runs modules on the host CPU ---------------*- C++ -*-===//
//
// The CPU device: an Allocator for its buffers, a ThreadPool for the
// workgroups of a dispatch, and the loader of host shared-object
// executables.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_RUNTIME_CPUDEVICE_H
#define LCC_RUNTIME_CPUDEVICE_H

#include "Allocator.h"
#include "CpuExecutable.h"
#include "Tensor.h"
#include "ThreadPool.h"

#include <array>
#include <memory>

namespace lcc::runtime {

class CpuDevice {
public:
  /// `threadCount` 0 means one thread per hardware thread.
  explicit CpuDevice(unsigned threadCount = 0) : threadPool(threadCount) {}

  Allocator &getAllocator() { return allocator; }
  unsigned getThreadCount() const { return threadPool.getThreadCount(); }

  /// Loads `executable` (executables[`index`] of a module); only the
  /// HostSharedObject format runs on this device.
  StatusOr<std::unique_ptr<CpuExecutable>>
  loadExecutable(const lcm::Executable &executable, size_t index);

  /// Runs `kernel` once per workgroup of the grid `workgroupCount` (x
  /// fastest) and returns when every workgroup has finished.
  void dispatch(KernelFunction kernel,
                const std::array<uint32_t, 3> &workgroupCount,
                void *const *bindings);

private:
  Allocator allocator;
  ThreadPool threadPool;
};

} // namespace lcc::runtime

#endif // LCC_RUNTIME_CPUDEVICE_H
