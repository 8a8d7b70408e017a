//===- Allocator.h - device memory, current and peak bytes ------*- C++ -*-===//
//
// Every byte a device allocates (parameters, inputs, outputs, arenas) goes
// through its Allocator, which counts the bytes in use and their peak so a
// report can show what a model really needs. Storage is 64-byte aligned, as
// the memory planner's arena offsets assume.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_RUNTIME_ALLOCATOR_H
#define LCC_RUNTIME_ALLOCATOR_H

#include "Status.h"

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace lcc::runtime {

constexpr size_t kBufferAlignment = 64;

class Allocator;

/// One allocation; frees itself (and updates the counters) on destruction.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  DeviceBuffer(DeviceBuffer &&other) noexcept;
  DeviceBuffer &operator=(DeviceBuffer &&other) noexcept;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer();

  void *data() const { return bytes; }
  uint64_t size() const { return length; }

private:
  friend class Allocator;
  void release();

  Allocator *owner = nullptr;
  void *bytes = nullptr;
  uint64_t length = 0;
  uint64_t reserved = 0; // `length` rounded up to kBufferAlignment
};

class Allocator {
public:
  Allocator() = default;
  Allocator(const Allocator &) = delete;
  Allocator &operator=(const Allocator &) = delete;

  /// `size` zero-filled bytes. Zero filling touches every page once, here,
  /// so that the first call of a function does not pay the page faults.
  /// `what` names the buffer in the error message.
  StatusOr<DeviceBuffer> allocate(uint64_t size, const std::string &what);

  /// Bytes currently allocated and the most ever allocated at once, both
  /// counted in whole 64-byte lines.
  uint64_t currentBytes() const { return current.load(); }
  uint64_t peakBytes() const { return peak.load(); }

private:
  friend class DeviceBuffer;
  void release(uint64_t reserved);

  std::atomic<uint64_t> current{0};
  std::atomic<uint64_t> peak{0};
};

} // namespace lcc::runtime

#endif // LCC_RUNTIME_ALLOCATOR_H
