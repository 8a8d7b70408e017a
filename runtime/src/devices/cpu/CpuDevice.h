//===- CpuDevice.h - runs modules on the host CPU ---------------*- C++ -*-===//
//
// The CPU device: host memory from a HostAllocator, a ThreadPool for the
// workgroups of a dispatch, and the loader of host shared-object
// executables. Its device addresses are host pointers: inputs are copied in
// with memcpy and results are read where the kernels wrote them.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_RUNTIME_CPUDEVICE_H
#define LCC_RUNTIME_CPUDEVICE_H

#include "devices/cpu/CpuExecutable.h"
#include "devices/Device.h"
#include "support/Tensor.h"
#include "devices/cpu/ThreadPool.h"

#include <array>
#include <memory>

namespace lcc::runtime {

class CpuDevice final : public Device {
public:
  /// `threadCount` 0 means one thread per hardware thread.
  explicit CpuDevice(unsigned threadCount = 0);
  /// Its threads end, freeing the kernel temporaries they kept; so are
  /// those of the thread that destroys it (KernelTemporaries.h).
  ~CpuDevice() override;

  const char *getKind() const override { return "cpu"; }
  std::string getName() const override { return "host"; }
  std::string getArchitecture() const override;
  DeviceTarget getTarget() const override { return DeviceTarget::cpu(); }
  unsigned getThreadCount() const override {
    return threadPool.getThreadCount();
  }

  bool isHostAddressable() const override { return true; }
  Status copyToDevice(void *target, const void *source, uint64_t size) override;
  Status copyToHost(void *target, const void *source, uint64_t size) override;
  Status copyOnDevice(void *target, const void *source, uint64_t size) override;

  /// Loads `executable` (executables[`index`] of a module); only the
  /// HostSharedObject format runs on this device.
  StatusOr<std::unique_ptr<DeviceExecutable>>
  loadExecutable(const lcm::Executable &executable, size_t index) override;
  StatusOr<std::unique_ptr<CommandList>>
  createCommandList(const DeviceExecutable *executable,
                    std::vector<DeviceCommand> commands,
                    const std::string &path) override;

  /// Runs `kernel` once per workgroup of the grid `workgroupCount` (x
  /// fastest) and returns when every workgroup has finished.
  void dispatch(KernelFunction kernel,
                const std::array<uint32_t, 3> &workgroupCount,
                void *const *bindings);

private:
  ThreadPool threadPool;
};

} // namespace lcc::runtime

#endif // LCC_RUNTIME_CPUDEVICE_H
