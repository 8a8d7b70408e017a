//===- CpuExecutable.h - host shared objects loaded from memory -*- C++ -*-===//
//
// A HostSharedObject executable is an ELF shared object embedded in the
// module (SharedObject.h); each entry point is resolved once, at load.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_RUNTIME_CPUEXECUTABLE_H
#define LCC_RUNTIME_CPUEXECUTABLE_H

#include "devices/Device.h"
#include "formats/SharedObject.h"
#include "support/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace lcc::runtime {

/// The entry point ABI of lcm.fbs: one pointer per binding, then the
/// workgroup id.
using KernelFunction = void (*)(void *const *bindings, int64_t workgroupX,
                                int64_t workgroupY, int64_t workgroupZ);

class CpuExecutable final : public DeviceExecutable {
public:
  using Backing = SharedObject::Backing;

  /// Loads the shared object `bytes` and resolves `entryPointNames`.
  /// `what` names the executable in errors, e.g. "executable 0".
  static StatusOr<std::unique_ptr<CpuExecutable>>
  load(const uint8_t *bytes, size_t size,
       const std::vector<std::string> &entryPointNames, const std::string &what,
       Backing backing = Backing::Memfd);
  ~CpuExecutable() override;
  CpuExecutable(const CpuExecutable &) = delete;
  CpuExecutable &operator=(const CpuExecutable &) = delete;

  KernelFunction getEntryPoint(size_t index) const {
    return entryPoints[index];
  }
  size_t getEntryPointCount() const { return entryPoints.size(); }

private:
  CpuExecutable() = default;

  std::unique_ptr<SharedObject> object;
  std::vector<KernelFunction> entryPoints;
};

} // namespace lcc::runtime

#endif // LCC_RUNTIME_CPUEXECUTABLE_H
