//===- Safetensors.h - .safetensors weight files ----------------*- C++ -*-===//
//
// Parameters are bound by name from a .safetensors file: an 8-byte
// little-endian header length, a JSON header mapping each tensor name to
// {"dtype", "shape", "data_offsets": [begin, end]} (offsets relative to the
// data section), then the data. The header is checked when the file is
// opened; tensor data is read on demand, straight into its destination.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_RUNTIME_SAFETENSORS_H
#define LCC_RUNTIME_SAFETENSORS_H

#include "support/File.h"
#include "support/Status.h"
#include "support/Tensor.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace lcc::runtime {

/// One tensor of a .safetensors header.
struct SafetensorsEntry {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  uint64_t begin = 0; // data_offsets, relative to the data section
  uint64_t end = 0;
};

/// The parsed, checked header of a .safetensors file whose data section has
/// `dataSize` bytes.
struct SafetensorsHeader {
  std::vector<SafetensorsEntry> entries; // in file order
  std::map<std::string, std::string> metadata;
};
StatusOr<SafetensorsHeader> parseSafetensorsHeader(const std::string &json,
                                                   uint64_t dataSize);

class SafetensorsReader {
public:
  /// Opens `path` and checks its header; errors start with the path.
  static StatusOr<std::unique_ptr<SafetensorsReader>>
  open(const std::string &path);
  ~SafetensorsReader();
  SafetensorsReader(const SafetensorsReader &) = delete;
  SafetensorsReader &operator=(const SafetensorsReader &) = delete;

  const std::string &getPath() const { return path; }
  const SafetensorsHeader &getHeader() const { return header; }
  /// The tensor named `name`, or an error naming it and the file.
  StatusOr<const SafetensorsEntry *> find(const std::string &name) const;
  /// Reads the `entry.end - entry.begin` bytes of `entry` to `destination`.
  Status read(const SafetensorsEntry &entry, void *destination) const;
  /// find() then read() into a new host tensor.
  StatusOr<HostTensor> readTensor(const std::string &name) const;

private:
  SafetensorsReader() = default;

  std::string path;
  int fd = -1;
  uint64_t dataStart = 0;
  SafetensorsHeader header;
  std::map<std::string, size_t> byName;
};

/// A tensor with the name it has in a weights file.
struct NamedTensor {
  std::string name;
  HostTensor tensor;
};

/// Name, type and size of a tensor to write.
struct SafetensorsLayout {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  uint64_t bytes;
};

/// The length prefix and JSON header of a file holding `tensors` in order,
/// packed from offset 0; the data follows it.
std::vector<uint8_t>
encodeSafetensorsHeader(const std::vector<SafetensorsLayout> &tensors,
                        const std::map<std::string, std::string> &metadata);

/// Writes a .safetensors file atomically (File.h's OutputFile): the header
/// of `tensors` when created, then their bytes in order, in as many write()
/// calls as the caller likes, so that no file needs to be in memory at once
/// (weights a chunk at a time, device memory through a staging buffer).
/// commit() renames it into place only when exactly the bytes the header
/// promises were written; dropped before, it leaves `path` as it was.
class SafetensorsWriter {
public:
  /// Refuses what a reader would refuse: a name given twice, the reserved
  /// '__metadata__', a size that is not the dtype times the shape.
  static StatusOr<SafetensorsWriter>
  create(const std::string &path, const std::vector<SafetensorsLayout> &tensors,
         const std::map<std::string, std::string> &metadata = {});

  Status write(const void *data, size_t size);
  Status commit();

private:
  SafetensorsWriter(OutputFile file, uint64_t dataBytes)
      : file(std::move(file)), dataBytes(dataBytes) {}
  OutputFile file;
  uint64_t dataBytes;
  uint64_t written = 0;
};

/// The bytes of a .safetensors file holding `tensors` in order.
std::vector<uint8_t>
encodeSafetensors(const std::vector<NamedTensor> &tensors,
                  const std::map<std::string, std::string> &metadata = {});
/// `tensors` written through a SafetensorsWriter.
Status
writeSafetensors(const std::string &path,
                 const std::vector<NamedTensor> &tensors,
                 const std::map<std::string, std::string> &metadata = {});

} // namespace lcc::runtime

#endif // LCC_RUNTIME_SAFETENSORS_H
