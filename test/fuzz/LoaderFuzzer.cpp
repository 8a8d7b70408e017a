//===- LoaderFuzzer.cpp - libFuzzer target: the .lcm loader ---------------===//
//
// Any bytes given to loadModuleFromMemory give a module or one error, never
// a crash, a hang or an out-of-bounds read. A module that loads is walked as
// the runtime walks it (shapes, names, executable selection for both
// devices, session creation on a memory-limited cpu device) without running
// its code: an artifact's code is trusted native code (docs/runtime.md).
// And the same module with one bit of its code or constants flipped does
// not load: their checksums refuse it.
//
//===----------------------------------------------------------------------===//

#include "devices/cpu/CpuDevice.h"
#include "module/ExecutableSelection.h"
#include "module/Loader.h"
#include "module/Session.h"

#include <cstddef>
#include <cstdint>
#include <vector>

using namespace lcc;
using namespace lcc::runtime;

namespace {

/// A module that loads must not once one bit of its code or of an
/// embedded constant flips, whichever bit: their checksums see every such
/// flip. The bit is chosen by the input.
void checkBitFlipsAreRefused(const uint8_t *data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  const lcm::Module *module = lcm::GetModule(bytes.data());
  std::vector<const flatbuffers::Vector<uint8_t> *> embedded;
  if (module->executables())
    for (const lcm::Executable *executable : *module->executables())
      embedded.push_back(executable->data());
  if (module->parameters())
    for (const lcm::Parameter *parameter : *module->parameters())
      embedded.push_back(parameter->data());
  uint64_t choice = lcm::checksum(data, size);
  for (const flatbuffers::Vector<uint8_t> *vector : embedded) {
    if (!vector || vector->size() == 0)
      continue;
    size_t bit = size_t(choice % (uint64_t(vector->size()) * 8));
    uint8_t &byte = bytes[size_t(vector->data() - bytes.data()) + bit / 8];
    byte ^= uint8_t(1u << (bit % 8));
    if (loadModuleFromMemory(bytes.data(), bytes.size()).ok())
      __builtin_trap();
    byte ^= uint8_t(1u << (bit % 8));
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  StatusOr<std::shared_ptr<const Module>> module =
      loadModuleFromMemory(data, size);
  if (!module.ok())
    return 0;
  checkBitFlipsAreRefused(data, size);
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
