//===- NpyFuzzer.cpp - libFuzzer target: the .npy reader ------------------===//
//
// Any bytes give a tensor whose data matches its shape, or one error.
//
//===----------------------------------------------------------------------===//

#include "formats/Npy.h"

#include <cstdlib>

using namespace lcc::runtime;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  StatusOr<HostTensor> tensor = parseNpy(data, size);
  if (!tensor.ok())
    return 0;
  std::optional<uint64_t> bytes = byteSize(tensor->dtype, tensor->shape);
  if (!bytes || *bytes != tensor->data.size())
    std::abort(); // a parsed tensor must be self-consistent
  // What lcc-run writes back must read again as the same tensor.
  std::vector<uint8_t> again =
      encodeNpy(tensor->dtype, tensor->shape, tensor->data.data());
  StatusOr<HostTensor> reread = parseNpy(again.data(), again.size());
  if (!reread.ok() || reread->shape != tensor->shape)
    std::abort();
  return 0;
}
