//===- SafetensorsFuzzer.cpp - libFuzzer target: .safetensors headers -----===//
//
// The input is a whole .safetensors file: its header is parsed against the
// data that follows, giving entries that lie inside the data and do not
// overlap, or one error.
//
//===----------------------------------------------------------------------===//

#include "formats/Safetensors.h"

#include <cstdlib>
#include <cstring>

using namespace lcc::runtime;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 8)
    return 0;
  uint64_t headerSize;
  std::memcpy(&headerSize, data, 8);
  if (headerSize > size - 8)
    return 0;
  std::string json(reinterpret_cast<const char *>(data) + 8, headerSize);
  uint64_t dataSize = size - 8 - headerSize;
  StatusOr<SafetensorsHeader> header = parseSafetensorsHeader(json, dataSize);
  if (!header.ok())
    return 0;
  for (const SafetensorsEntry &entry : header->entries) {
    std::optional<uint64_t> bytes = byteSize(entry.dtype, entry.shape);
    if (entry.begin > entry.end || entry.end > dataSize || !bytes ||
        *bytes != entry.end - entry.begin)
      std::abort(); // an accepted entry must be inside the data
  }
  return 0;
}
