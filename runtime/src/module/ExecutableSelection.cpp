//===- ExecutableSelection.cpp - which executable a device runs -----------===//

#include "module/ExecutableSelection.h"

namespace lcc::runtime {

std::optional<CudaArchitecture> parseCudaArchitecture(const std::string &name) {
  if (name.compare(0, 3, "sm_") != 0)
    return std::nullopt;
  CudaArchitecture architecture;
  size_t i = 3, digits = 0;
  for (; i < name.size() && name[i] >= '0' && name[i] <= '9'; ++i, ++digits) {
    // Five digits are far beyond any architecture and cannot overflow.
    if (digits == 5)
      return std::nullopt;
    architecture.version = architecture.version * 10 + unsigned(name[i] - '0');
  }
  // Two digits at least: "sm_9" is nothing NVIDIA names.
  if (digits < 2 || name[3] == '0')
    return std::nullopt;
  if (i < name.size() && name[i] == 'a') {
    architecture.specific = true;
    ++i;
  }
  if (i != name.size())
    return std::nullopt;
  return architecture;
}

std::string formatCudaArchitecture(unsigned major, unsigned minor) {
  return "sm_" + std::to_string(major * 10 + minor);
}

bool isGpuFormat(lcm::ExecutableFormat format) {
  return format == lcm::ExecutableFormat::Ptx ||
         format == lcm::ExecutableFormat::Cubin ||
         format == lcm::ExecutableFormat::CudaEmulator;
}

std::string DeviceTarget::describe() const {
  if (kind == Kind::Cpu)
    return "cpu device";
  if (kind == Kind::CudaEmulator)
    return "cuda-emulator device";
  return "cuda device sm_" + std::to_string(cudaVersion);
}

StatusOr<size_t> selectExecutable(const lcm::Module &module,
                                  const DeviceTarget &target) {
  const auto *executables = module.executables();
  size_t count = executables ? executables->size() : 0;
  std::optional<size_t> ptx;
  unsigned ptxVersion = 0;
  for (size_t i = 0; i < count; ++i) {
    const lcm::Executable &executable = *executables->Get(i);
    lcm::ExecutableFormat format = executable.format();
    if (target.kind == DeviceTarget::Kind::Cpu) {
      if (format == lcm::ExecutableFormat::HostSharedObject)
        return i;
      continue;
    }
    if (target.kind == DeviceTarget::Kind::CudaEmulator) {
      if (format == lcm::ExecutableFormat::CudaEmulator)
        return i;
      continue;
    }
    if (!isGpuFormat(format) || !executable.target() ||
        format == lcm::ExecutableFormat::CudaEmulator)
      continue;
    std::optional<CudaArchitecture> architecture =
        parseCudaArchitecture(executable.target()->str());
    if (!architecture)
      continue;
    if (format == lcm::ExecutableFormat::Cubin) {
      // A cubin runs on the architecture it was built for; the first one
      // wins over any PTX, which would cost a JIT compilation at load.
      if (architecture->version == target.cudaVersion)
        return i;
      continue;
    }
    // The driver JITs PTX for any newer device, except "a" PTX, which uses
    // features of its exact architecture. The newest PTX is the best code.
    bool runs = architecture->specific
                    ? architecture->version == target.cudaVersion
                    : architecture->version <= target.cudaVersion;
    if (runs && (!ptx || architecture->version > ptxVersion)) {
      ptx = i;
      ptxVersion = architecture->version;
    }
  }
  if (ptx)
    return *ptx;

  std::string held;
  for (size_t i = 0; i < count; ++i) {
    const lcm::Executable &executable = *executables->Get(i);
    std::string name = executable.target() ? executable.target()->str() : "";
    held += (i ? ", " : "") + (name.empty() ? std::string("no target") : name) +
            " (" + lcm::EnumNameExecutableFormat(executable.format()) + ")";
  }
  return Status::error(StatusCode::Unavailable, "module has no code for the ",
                       target.describe(), ": it holds ",
                       held.empty() ? "no executables" : held);
}

} // namespace lcc::runtime
