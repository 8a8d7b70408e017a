//===- LoaderFuzzer.cpp - libFuzzer target: the .lcm loader ---------------===//
//
// Any bytes given to loadModuleFromMemory give a module or one error, never
// a crash, a hang or an out-of-bounds read. A module that loads is walked as
// the runtime walks it (shapes, names, executable selection for both
// devices, session creation on a memory-limited cpu device) without running
// its code: an artifact's code is trusted native code (docs/runtime.md).
//
//===----------------------------------------------------------------------===//

#include "CpuDevice.h"
#include "ExecutableSelection.h"
#include "Loader.h"
#include "Session.h"

#include <cstddef>
#include <cstdint>

using namespace lcc;
using namespace lcc::runtime;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  StatusOr<std::shared_ptr<const Module>> module =
      loadModuleFromMemory(data, size);
  if (!module.ok())
    return 0;
  const Module &loaded = **module;
  for (size_t f = 0; f < loaded.getFunctionCount(); ++f) {
    const lcm::Function &function = loaded.getFunction(f);
    for (const auto *signatures : {function.inputs(), function.outputs()})
      if (signatures)
        for (const lcm::TensorSignature *signature : *signatures)
          (void)getShape(*signature), (void)getName(*signature);
    (void)loaded.findFunction(function.name()->str());
  }
  (void)selectExecutable(loaded.get(), DeviceTarget::cuda(9, 0));
  (void)selectExecutable(loaded.get(), DeviceTarget::cpu());
  // Parameters are allocated (and embedded ones copied) under a small limit:
  // a module's sizes never turn into an allocation beyond it.
  auto device = std::make_shared<CpuDevice>(1);
  device->getAllocator().setLimit(64 << 20);
  (void)Session::create(device, *module);
  return 0;
}
