//===- CudaDevice.h - runs modules on an NVIDIA GPU -------------*- C++ -*-===//
//
// The cuda device: GPU 0 through the CUDA driver API (CudaDriver.h, loaded
// at run time). It uses the device's primary context and one stream of its
// own; buffers come from cuMemAlloc (device memory, never managed memory),
// inputs and parameters are copied in and results copied back by the
// Function. It runs a module with a cubin of its architecture, else PTX
// the driver JITs (ExecutableSelection.h). A dispatch launches
// grid = workgroup_count, block = the entry point's block_size, with its
// dynamic shared memory and one device pointer per binding as the kernel's
// parameters; a copy is a device-to-device copy on the stream. Events around
// every command time it on the GPU.
//
// Over the CUDA emulator's driver (CudaEmulator.h) it is the cuda-emulator
// device: it runs a module's CudaEmulator executable, and tells the emulator
// before each launch which dispatch it is and how long its bindings are,
// for the checks; a launch's findings are the error of the run.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_RUNTIME_CUDADEVICE_H
#define LCC_RUNTIME_CUDADEVICE_H

#include "comm/NcclCommunicator.h"
#include "devices/Device.h"
#include "devices/cuda/CudaDriver.h"
#include "devices/cuda/CudaEmulator.h"

#include <array>
#include <functional>
#include <map>
#include <memory>

namespace lcc::runtime {

class CudaDevice final : public Device {
public:
  /// Loads the driver and opens GPU `ordinal`. Without a driver or a GPU
  /// the error starts with "cuda device unavailable: " and says why.
  static StatusOr<std::shared_ptr<CudaDevice>> create(int ordinal = 0);
  /// The cuda device over the CUDA emulator.
  static StatusOr<std::shared_ptr<CudaDevice>>
  createEmulator(const cuda::EmulatorOptions &options);
  ~CudaDevice() override;

  /// What the emulator checks from the next launch on (emulator only).
  void setEmulatorOptions(const cuda::EmulatorOptions &options) {
    *emulatorOptions = options;
  }
  bool isEmulator() const { return driver->isEmulator(); }

  const char *getKind() const override {
    return isEmulator() ? "cuda-emulator" : "cuda";
  }
  std::string getName() const override { return name; }
  std::string getArchitecture() const override;
  DeviceTarget getTarget() const override {
    if (isEmulator())
      return DeviceTarget::cudaEmulator();
    return DeviceTarget::cuda(unsigned(limits.major), unsigned(limits.minor));
  }
  /// Bytes of memory on the GPU.
  uint64_t getTotalMemory() const { return totalMemory; }

  bool isHostAddressable() const override { return false; }
  Status copyToDevice(void *target, const void *source, uint64_t size) override;
  Status copyToHost(void *target, const void *source, uint64_t size) override;
  Status copyOnDevice(void *target, const void *source, uint64_t size) override;

  /// On a GPU (not the emulator): NCCL on the device's stream, its
  /// communicator made from `job` the first time.
  StatusOr<bool> allReduceOnDevice(Communicator &job, void *data, size_t count,
                                   bool mean) override;
  /// On a GPU (not the emulator): NCCL's grouped sends and receives.
  StatusOr<bool> exchangeOnDevice(Communicator &job,
                                  const ExchangeSpec &exchange) override;

  /// Loads a Cubin or Ptx executable with the driver (PTX is JIT-compiled;
  /// its compiler's errors are in the message) and looks up each entry
  /// point's kernel, allowing it the dynamic shared memory it asks for.
  StatusOr<std::unique_ptr<DeviceExecutable>>
  loadExecutable(const lcm::Executable &executable, size_t index) override;
  StatusOr<std::unique_ptr<CommandList>>
  createCommandList(const DeviceExecutable *executable,
                    std::vector<DeviceCommand> commands,
                    const std::string &path) override;

  /// What the GPU allows, read once when the device is opened.
  struct Limits {
    int major = 0, minor = 0; // compute capability
    std::array<int, 3> maxBlock{};
    int maxThreadsPerBlock = 0;
    std::array<int, 3> maxGrid{};
    int maxSharedMemoryPerBlock = 0; // with opt-in, as cuFuncSetAttribute
  };

private:
  static StatusOr<std::shared_ptr<CudaDevice>>
  open(std::shared_ptr<const cuda::CudaDriver> driver, int ordinal);
  CudaDevice(std::shared_ptr<const cuda::CudaDriver> driver,
             cuda::CUdevice device, cuda::CUcontext context,
             cuda::CUstream stream, std::string name, uint64_t totalMemory,
             const Limits &limits);
  /// "the cuda device sm_90", as messages name it.
  std::string describe() const;
  /// NCCL's communicator of `job`'s ranks, made the first time.
  StatusOr<NcclCommunicator *> ncclOf(Communicator &job);
  /// Enqueues `what` ("an all-reduce") on the device's stream with NCCL's
  /// communicator of `job`, and waits for it.
  Status runOnNccl(Communicator &job, const char *what,
                   const std::function<Status(NcclCommunicator &)> &enqueue);

  std::shared_ptr<const cuda::CudaDriver> driver;
  cuda::CUdevice device;
  cuda::CUcontext context;
  cuda::CUstream stream;
  std::string name;
  uint64_t totalMemory = 0;
  Limits limits;
  std::shared_ptr<cuda::EmulatorOptions> emulatorOptions =
      std::make_shared<cuda::EmulatorOptions>();
  /// NCCL's communicator of each job (or group of a job) this device has
  /// run collectives among, made by the first.
  std::map<const Communicator *, std::unique_ptr<NcclCommunicator>> nccl;
};

} // namespace lcc::runtime

#endif // LCC_RUNTIME_CUDADEVICE_H
