//===- Allocator.h - device memory, current and peak bytes ------*- C++ -*-===//
//
// Every byte a device allocates (parameters, inputs, outputs, arenas) goes
// through its Allocator, which counts the bytes in use and their peak so a
// report can show what a model really needs. Storage is 64-byte aligned, as
// the memory planner's arena offsets assume, and zero-filled. Each device
// supplies the memory itself (HostAllocator for the CPU); the counting is
// the same everywhere, so reports of two devices compare.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_RUNTIME_ALLOCATOR_H
#define LCC_RUNTIME_ALLOCATOR_H

#include "support/Status.h"

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace lcc::runtime {

constexpr size_t kBufferAlignment = 64;
/// Host buffers of at least this many bytes are aligned to it and backed
/// by transparent huge pages where the system offers them.
constexpr size_t kHugePageBytes = size_t(2) << 20;

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

  /// The device address of the first byte (a host pointer on the CPU).
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
  virtual ~Allocator();

  /// `size` zero-filled bytes. Zero filling touches every page once, here,
  /// so that the first call of a function does not pay the page faults.
  /// `what` names the buffer in the error message.
  StatusOr<DeviceBuffer> allocate(uint64_t size, const std::string &what);

  /// The most bytes the device may hold at once: an allocation beyond it is
  /// refused before any memory is touched, naming its size (a module that
  /// declares a 1 TiB arena is an error, not an out-of-memory kill).
  void setLimit(uint64_t bytes) { limit = bytes; }
  uint64_t getLimit() const { return limit; }

  /// Bytes currently allocated and the most ever allocated at once, both
  /// counted in whole 64-byte lines.
  uint64_t currentBytes() const { return current.load(); }
  uint64_t peakBytes() const { return peak.load(); }

  /// Counts `bytes` the device holds outside allocate() (the global arrays
  /// of a loaded GPU module) until the matching uncountHeld().
  void countHeld(uint64_t bytes);
  void uncountHeld(uint64_t bytes) { current.fetch_sub(bytes); }

protected:
  /// `reserved` bytes (a multiple of 64, at least 64) of zero-filled,
  /// 64-byte aligned device memory for `size` requested bytes of `what`.
  virtual StatusOr<void *> allocateZeroed(uint64_t reserved, uint64_t size,
                                          const std::string &what) = 0;
  /// Frees what allocateZeroed returned.
  virtual void free(void *bytes) = 0;

private:
  friend class DeviceBuffer;
  void release(void *bytes, uint64_t reserved);

  std::atomic<uint64_t> current{0};
  std::atomic<uint64_t> peak{0};
  uint64_t limit = UINT64_MAX;
};

/// Host memory, for the CPU device.
class HostAllocator final : public Allocator {
protected:
  StatusOr<void *> allocateZeroed(uint64_t reserved, uint64_t size,
                                  const std::string &what) override;
  void free(void *bytes) override;
};

} // namespace lcc::runtime

#endif // LCC_RUNTIME_ALLOCATOR_H
