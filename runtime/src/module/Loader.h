//===- Loader.h - reading and checking .lcm modules -------------*- C++ -*-===//
//
// A module is checked once, when it is loaded: first the FlatBuffers
// verifier (every offset and vector lies inside the file), then the meaning
// of every field (every index names something that exists, every byte range
// lies inside its buffer, every size matches its type). Code that runs a
// loaded module relies on these checks and does not repeat them.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_RUNTIME_LOADER_H
#define LCC_RUNTIME_LOADER_H

#include "ModuleFormat.h"
#include "support/Status.h"
#include "support/Tensor.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace lcc::runtime {

/// The module version this runtime reads.
using lcm::kModuleVersion;
/// The most workgroups one dispatch may run.
constexpr uint64_t kMaxWorkgroups = uint64_t(1) << 32;

/// A loaded, checked module. Owns a 64-byte-aligned copy of the file.
class Module {
public:
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;
  ~Module();

  const lcm::Module &get() const { return *root; }
  size_t getFunctionCount() const;
  const lcm::Function &getFunction(size_t index) const;
  size_t getParameterCount() const;
  const lcm::Parameter &getParameter(size_t index) const;
  const lcm::Executable &getExecutable(size_t index) const;

  /// CRC-64/XZ of the whole file: ranks of one job compare theirs.
  uint64_t getChecksum() const { return lcm::checksum(bytes, size); }

  /// The index of the function named `name`, or an error listing the names.
  StatusOr<size_t> findFunction(const std::string &name) const;

private:
  friend StatusOr<std::shared_ptr<const Module>>
  loadModuleFromMemory(const void *data, size_t size);
  Module() = default;

  uint8_t *bytes = nullptr;
  size_t size = 0;
  const lcm::Module *root = nullptr;
};

/// Loads and checks a module held in memory; the bytes are copied.
StatusOr<std::shared_ptr<const Module>> loadModuleFromMemory(const void *data,
                                                             size_t size);
/// Loads and checks the module file at `path`; errors start with the path.
StatusOr<std::shared_ptr<const Module>>
loadModuleFromFile(const std::string &path);

/// Element `index` of a FlatBuffers vector of 8-byte scalars (shapes, sizes,
/// ranges). The verifier checks a vector's 4-byte length alignment only, so
/// its 8-byte elements may sit at any multiple of 4: they are read byte-wise
/// instead of through a misaligned pointer.
template <typename T>
T readUnaligned(const flatbuffers::Vector<T> &vector, size_t index) {
  static_assert(std::is_trivially_copyable_v<T>);
  T value;
  std::memcpy(&value, vector.Data() + index * sizeof(T), sizeof(T));
  return value;
}

/// The shape of a signature (an absent shape is a scalar).
std::vector<int64_t> getShape(const lcm::TensorSignature &signature);
/// The name of a signature, "" when absent.
std::string getName(const lcm::TensorSignature &signature);
/// The name of a command for reports: its `name`, or "command<index>".
std::string getCommandName(const lcm::Command &command, size_t index);

} // namespace lcc::runtime

#endif // LCC_RUNTIME_LOADER_H
