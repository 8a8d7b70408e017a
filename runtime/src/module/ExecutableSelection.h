//===- ExecutableSelection.h - which executable a device runs ---*- C++ -*-===//
//
// Every executable of a module lists the same entry points, compiled for one
// kind of device. A device runs the module with one of them: the CPU with
// the HostSharedObject; a CUDA GPU with a Cubin of its own architecture,
// else with the PTX of the newest architecture not newer than its own (the
// driver compiles PTX for the device when it loads it).
//
//===----------------------------------------------------------------------===//

#ifndef LCC_RUNTIME_EXECUTABLESELECTION_H
#define LCC_RUNTIME_EXECUTABLESELECTION_H

#include "support/Status.h"

#include "lcc/lcm_generated.h"

#include <optional>
#include <string>

namespace lcc::runtime {

/// An NVIDIA GPU architecture as executables name it: "sm_90" is version 90;
/// "sm_90a" is version 90 with architecture-specific features, whose code
/// runs on sm_90 devices only.
struct CudaArchitecture {
  unsigned version = 0; // compute capability major * 10 + minor
  bool specific = false;
};

/// Parses "sm_<version>" with an optional "a" suffix; nullopt otherwise.
std::optional<CudaArchitecture> parseCudaArchitecture(const std::string &name);
/// "sm_90" for compute capability 9.0, "sm_120" for 12.0.
std::string formatCudaArchitecture(unsigned major, unsigned minor);

/// Whether `format` holds GPU code (PTX, a cubin, or the CUDA emulator's
/// form of the same kernels): it names an architecture and its entry points
/// a block size.
bool isGpuFormat(lcm::ExecutableFormat format);

/// The kind of code a device runs.
struct DeviceTarget {
  enum class Kind { Cpu, Cuda, CudaEmulator };
  Kind kind = Kind::Cpu;
  /// CUDA: the device's architecture, compute capability major * 10 + minor.
  unsigned cudaVersion = 0;

  static DeviceTarget cpu() { return {Kind::Cpu, 0}; }
  static DeviceTarget cuda(unsigned major, unsigned minor) {
    return {Kind::Cuda, major * 10 + minor};
  }
  /// The CUDA emulator runs the kernels of any architecture.
  static DeviceTarget cudaEmulator() { return {Kind::CudaEmulator, 0}; }
  /// "cpu device", "cuda device sm_90", "cuda-emulator device", as messages
  /// name it.
  std::string describe() const;
};

/// The index of the executable of `module` that a device of `target` runs:
/// for the CPU the first HostSharedObject; for CUDA the first Cubin of the
/// device's architecture (sm_90 or sm_90a on an sm_90 device), else the PTX
/// of the newest architecture <= the device's (an "a" PTX only for exactly
/// its own); for the CUDA emulator the first CudaEmulator. Otherwise an error naming the device and listing what the
/// module holds. The module must have passed the loader's checks.
StatusOr<size_t> selectExecutable(const lcm::Module &module,
                                  const DeviceTarget &target);

} // namespace lcc::runtime

#endif // LCC_RUNTIME_EXECUTABLESELECTION_H
