//===- Device.h - what a session runs a module on ---------------*- C++ -*-===//
//
// A device owns memory and runs command lists; Session and Function are
// written against this interface only, so one command list runs on the CPU
// (CpuDevice) or on a CUDA GPU (CudaDevice). As in IREE's HAL, a device
// selects and loads the module's code for itself, and a function's commands
// are prepared once (device addresses resolved, kernels looked up) and run
// by every call.
//
// Device memory is named by address. The CPU's addresses are host pointers;
// a GPU's are not, so the runtime moves data in and out with copyToDevice
// and copyToHost only.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_RUNTIME_DEVICE_H
#define LCC_RUNTIME_DEVICE_H

#include "comm/Communicator.h"
#include "devices/Allocator.h"
#include "module/ExecutableSelection.h"
#include "support/Status.h"

#include "lcc/lcm_generated.h"

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace lcc::runtime {

/// A module's executable loaded on a device, its entry points resolved.
class DeviceExecutable {
public:
  virtual ~DeviceExecutable();
};

/// What an exchange command sends where (lcm.fbs Exchange), at device
/// addresses.
struct ExchangeSpec {
  lcm::ExchangePattern pattern;
  uint64_t blocks;    // but Ring: one per rank of the job compiled for
  int64_t ringOffset; // Ring
  const void *source;
  void *target;
  uint64_t sourceBytes, targetBytes;
};

/// One command of a function, its bindings resolved to device addresses.
struct DeviceCommand {
  lcm::CommandKind kind = lcm::CommandKind::Dispatch;
  std::string name;     // for errors and reports
  std::string location; // of its model op, "model.mlir:12:8", or ""
  // Dispatch: an index into the module's common entry point list.
  uint32_t entryPoint = 0;
  std::array<uint32_t, 3> workgroupCount{};
  // Dispatch: one address per binding. Copy: the target, then the source.
  std::vector<void *> bindings;
  // Dispatch: the bytes of each binding.
  std::vector<uint64_t> bindingLengths;
  uint64_t copyLength = 0;
  // AllReduce: run on the host once every command before it has finished
  // (a collective among the ranks, through the communicator); the
  // commands after it start when it returns.
  std::function<Status()> hostStep;
  // Run on the host before the command, when set: waits for the transfers
  // still moving the bytes it touches (TransfersInFlight).
  std::function<Status()> beforeRun;
};

/// A function's commands made ready for a device, once, for every call.
class CommandList {
public:
  virtual ~CommandList();
  /// Runs every command in order and returns when all have finished,
  /// writing the time each took to `nanoseconds[i]`.
  virtual Status run(uint64_t *nanoseconds) = 0;
  /// Points binding `binding` of command `command` at `address` from the
  /// next run on: a function input read where its caller holds it. Only a
  /// host-addressable device's lists are asked; the others refuse.
  virtual Status rebind(size_t command, size_t binding, void *address);
};

class Device {
public:
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;
  virtual ~Device();

  /// "cpu", "cuda" or "cuda-emulator".
  virtual const char *getKind() const = 0;
  /// What runs the code: "NVIDIA H200"; the CPU's is "host".
  virtual std::string getName() const = 0;
  /// The code it runs: "x86_64", "sm_90".
  virtual std::string getArchitecture() const = 0;
  /// The kind of executable it runs (ExecutableSelection.h).
  virtual DeviceTarget getTarget() const = 0;
  /// Worker threads of the CPU device; 0 for a GPU.
  virtual unsigned getThreadCount() const { return 0; }

  /// Every byte of device memory comes from here, counted.
  Allocator &getAllocator() { return *allocator; }
  /// Whether device addresses are host pointers that the runtime may read
  /// and write directly, saving the copies in and out.
  virtual bool isHostAddressable() const = 0;
  /// Copies `size` bytes of host memory into device memory, and back. They
  /// return when the bytes are in place.
  virtual Status copyToDevice(void *target, const void *source,
                              uint64_t size) = 0;
  virtual Status copyToHost(void *target, const void *source,
                            uint64_t size) = 0;
  /// Copies `size` bytes between two buffers of this device without
  /// passing through the host (a result carried to the next call's input);
  /// returns when the bytes are in place.
  virtual Status copyOnDevice(void *target, const void *source,
                              uint64_t size) = 0;

  /// Fills `exchange.target` with what the ranks of `job` send this one
  /// (an all-to-all or a ring shift), after every command before it, on an
  /// engine of the device's own; returns false, having done nothing, when
  /// the device has none (as allReduceOnDevice).
  virtual StatusOr<bool> exchangeOnDevice(Communicator &job,
                                          const ExchangeSpec &exchange) {
    return false;
  }

  /// Replaces the `count` floats at device address `data` by their sum, or
  /// with `mean` their mean, over the ranks of `job`, after every command
  /// before it, on an engine of the device's own (NCCL on CUDA); returns
  /// false, having done nothing, when the device has none and the runtime
  /// stages them through host memory and `job` instead.
  virtual StatusOr<bool> allReduceOnDevice(Communicator &job, void *data,
                                           size_t count, bool mean) {
    return false;
  }

  /// Loads `executable` (executables[`index`] of a module, which
  /// selectExecutable chose for this device) and resolves its entry points.
  virtual StatusOr<std::unique_ptr<DeviceExecutable>>
  loadExecutable(const lcm::Executable &executable, size_t index) = 0;
  /// Prepares `commands`, whose dispatches run entry points of `executable`
  /// (null when there are none). `path` names the function in errors.
  virtual StatusOr<std::unique_ptr<CommandList>>
  createCommandList(const DeviceExecutable *executable,
                    std::vector<DeviceCommand> commands,
                    const std::string &path) = 0;

protected:
  explicit Device(std::unique_ptr<Allocator> allocator)
      : allocator(std::move(allocator)) {}

private:
  std::unique_ptr<Allocator> allocator;
};

} // namespace lcc::runtime

#endif // LCC_RUNTIME_DEVICE_H
