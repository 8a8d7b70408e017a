//===- CpuDevice.cpp - runs modules on the host CPU -----------------------===//

#include "CpuDevice.h"

namespace lcc::runtime {

StatusOr<std::unique_ptr<CpuExecutable>>
CpuDevice::loadExecutable(const lcm::Executable &executable, size_t index) {
  std::string what = "executables[" + std::to_string(index) + "]";
  if (executable.format() != lcm::ExecutableFormat::HostSharedObject)
    return Status::error(StatusCode::Unavailable, what, " is ",
                         lcm::EnumNameExecutableFormat(executable.format()),
                         ", which the cpu device cannot run");
  std::vector<std::string> names;
  if (executable.entry_points())
    for (const lcm::EntryPoint *entryPoint : *executable.entry_points())
      names.push_back(entryPoint->name()->str());
  return CpuExecutable::load(executable.data()->data(),
                             executable.data()->size(), names, what);
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
