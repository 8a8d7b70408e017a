//===- CpuDevice.cpp - runs modules on the host CPU -----------------------===//

#include "devices/cpu/CpuDevice.h"
#include "devices/cpu/CpuFeatures.h"

#include "module/KernelTemporaries.h"
#include "support/File.h"

#include <chrono>
#include <cstring>

namespace lcc::runtime {
namespace {

uint64_t nowNanoseconds() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count());
}

/// Commands with their kernels resolved; each runs synchronously on the
/// calling thread and the pool, timed by the host clock.
class CpuCommandList final : public CommandList {
public:
  CpuCommandList(CpuDevice &device, std::vector<DeviceCommand> commands,
                 std::vector<KernelFunction> kernels)
      : device(device), commands(std::move(commands)),
        kernels(std::move(kernels)) {}

  Status run(uint64_t *nanoseconds) override {
    for (size_t c = 0; c < commands.size(); ++c) {
      const DeviceCommand &command = commands[c];
      uint64_t start = nowNanoseconds();
      if (command.beforeRun)
        LCC_RETURN_IF_ERROR(command.beforeRun());
      if (command.kind == lcm::CommandKind::Dispatch) {
        device.dispatch(kernels[c], command.workgroupCount,
                        command.bindings.data());
      } else if (command.hostStep) {
        LCC_RETURN_IF_ERROR(command.hostStep());
      } else {
        // memmove: the planner may place a copy's source and target in
        // overlapping arena bytes.
        std::memmove(command.bindings[0], command.bindings[1],
                     command.copyLength);
      }
      nanoseconds[c] = nowNanoseconds() - start;
    }
    return Status();
  }

  Status rebind(size_t command, size_t binding, void *address) override {
    commands[command].bindings[binding] = address;
    return Status();
  }

private:
  CpuDevice &device;
  std::vector<DeviceCommand> commands;
  std::vector<KernelFunction> kernels; // per command; null for copies
};

} // namespace

CpuDevice::CpuDevice(unsigned threadCount)
    : Device(std::make_unique<HostAllocator>()), threadPool(threadCount) {
  // More than the machine has would only end in the OOM killer.
  getAllocator().setLimit(physicalMemoryBytes());
}

CpuDevice::~CpuDevice() { freeKeptTemporaries(); }

std::string CpuDevice::getArchitecture() const {
#if defined(__x86_64__)
  return "x86_64";
#elif defined(__aarch64__)
  return "aarch64";
#else
  return "unknown";
#endif
}

Status CpuDevice::copyToDevice(void *target, const void *source,
                               uint64_t size) {
  if (size > 0)
    std::memcpy(target, source, size);
  return Status();
}

Status CpuDevice::copyToHost(void *target, const void *source, uint64_t size) {
  if (size > 0)
    std::memcpy(target, source, size);
  return Status();
}

Status CpuDevice::copyOnDevice(void *target, const void *source,
                               uint64_t size) {
  if (size > 0 && target != source)
    std::memmove(target, source, size);
  return Status();
}

StatusOr<std::unique_ptr<DeviceExecutable>>
CpuDevice::loadExecutable(const lcm::Executable &executable, size_t index) {
  std::string what = "executables[" + std::to_string(index) + "]";
  if (executable.format() != lcm::ExecutableFormat::HostSharedObject)
    return Status::error(StatusCode::Unavailable, what, " is ",
                         lcm::EnumNameExecutableFormat(executable.format()),
                         ", which the cpu device cannot run");
  std::vector<std::string> required;
  if (executable.cpu_features())
    for (const flatbuffers::String *feature : *executable.cpu_features())
      required.push_back(feature->str());
  std::vector<std::string> lacked = lackedCpuFeatures(required, cpuSupports);
  if (!lacked.empty()) {
    std::string list;
    for (const std::string &feature : lacked)
      list += (list.empty() ? "" : ", ") + feature;
    return Status::error(
        StatusCode::Unavailable, what, " was compiled for CPU features this ",
        "CPU lacks: ", list, " (recompile the model on this machine, or for ",
        "any x86-64 CPU with lcc --cpu=x86-64)");
  }
  std::vector<std::string> names;
  if (executable.entry_points())
    for (const lcm::EntryPoint *entryPoint : *executable.entry_points())
      names.push_back(entryPoint->name()->str());
  StatusOr<std::unique_ptr<CpuExecutable>> loaded = CpuExecutable::load(
      executable.data()->data(), executable.data()->size(), names, what);
  if (!loaded.ok())
    return loaded.getStatus();
  return std::unique_ptr<DeviceExecutable>(loaded.take());
}

StatusOr<std::unique_ptr<CommandList>>
CpuDevice::createCommandList(const DeviceExecutable *executable,
                             std::vector<DeviceCommand> commands,
                             const std::string &) {
  // Only this device's loadExecutable made `executable`.
  const auto *loaded = static_cast<const CpuExecutable *>(executable);
  std::vector<KernelFunction> kernels;
  for (const DeviceCommand &command : commands)
    kernels.push_back(command.kind == lcm::CommandKind::Dispatch
                          ? loaded->getEntryPoint(command.entryPoint)
                          : nullptr);
  return std::unique_ptr<CommandList>(
      new CpuCommandList(*this, std::move(commands), std::move(kernels)));
}

void CpuDevice::dispatch(KernelFunction kernel,
                         const std::array<uint32_t, 3> &workgroupCount,
                         void *const *bindings) {
  uint64_t countX = workgroupCount[0];
  uint64_t countXY = countX * workgroupCount[1];
  uint64_t total = countXY * workgroupCount[2];
  threadPool.parallelFor(total, [&](uint64_t id) {
    kernel(bindings, int64_t(id % countX), int64_t(id % countXY / countX),
           int64_t(id / countXY));
  });
}

} // namespace lcc::runtime
