//===- Allocator.cpp - device memory with current and peak tracking -------===//

#include "devices/Allocator.h"

#include "support/Tensor.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include <sys/mman.h>

namespace lcc::runtime {

DeviceBuffer::DeviceBuffer(DeviceBuffer &&other) noexcept {
  *this = std::move(other);
}

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&other) noexcept {
  if (this != &other) {
    release();
    owner = other.owner;
    bytes = other.bytes;
    length = other.length;
    reserved = other.reserved;
    other.owner = nullptr;
    other.bytes = nullptr;
    other.length = other.reserved = 0;
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() { release(); }

void DeviceBuffer::release() {
  if (!bytes)
    return;
  owner->release(bytes, reserved);
  owner = nullptr;
  bytes = nullptr;
  length = reserved = 0;
}

Allocator::~Allocator() = default;

StatusOr<DeviceBuffer> Allocator::allocate(uint64_t size,
                                           const std::string &what) {
  if (size > kMaxTensorBytes)
    return Status::error(StatusCode::ResourceExhausted, "cannot allocate ",
                         size, " bytes for ", what, ": more than the ",
                         kMaxTensorBytes, "-byte limit");
  // An empty buffer still gets one line, so that every binding points at
  // valid, distinct memory.
  uint64_t reserved = size == 0 ? kBufferAlignment
                                : (size + kBufferAlignment - 1) /
                                      kBufferAlignment * kBufferAlignment;
  uint64_t held = current.load();
  if (reserved > limit || held > limit - reserved)
    return Status::error(StatusCode::ResourceExhausted, "cannot allocate ",
                         size, " bytes for ", what, ": the device would hold ",
                         held + reserved, " bytes, more than its memory limit "
                         "of ", limit, " bytes");
  StatusOr<void *> bytes = allocateZeroed(reserved, size, what);
  if (!bytes.ok())
    return bytes.getStatus();

  countHeld(reserved);

  DeviceBuffer buffer;
  buffer.owner = this;
  buffer.bytes = *bytes;
  buffer.length = size;
  buffer.reserved = reserved;
  return buffer;
}

void Allocator::countHeld(uint64_t bytes) {
  uint64_t now = current.fetch_add(bytes) + bytes;
  uint64_t seen = peak.load();
  while (now > seen && !peak.compare_exchange_weak(seen, now)) {
  }
}

void Allocator::release(void *bytes, uint64_t reserved) {
  free(bytes);
  current.fetch_sub(reserved);
}

StatusOr<void *> HostAllocator::allocateZeroed(uint64_t reserved, uint64_t size,
                                               const std::string &what) {
  // A buffer of a huge page or more starts on one and asks for them: a
  // kernel that reads rows at random across a large tensor (LSH's gathers
  // of sorted tokens) otherwise misses the TLB on nearly every row. Only
  // advice: where huge pages are off it changes nothing.
  bool huge = reserved >= kHugePageBytes;
  void *bytes = nullptr;
  if (posix_memalign(&bytes, huge ? kHugePageBytes : kBufferAlignment,
                     reserved) != 0 ||
      !bytes)
    return Status::error(StatusCode::ResourceExhausted, "cannot allocate ",
                         size, " bytes for ", what);
#ifdef MADV_HUGEPAGE
  if (huge)
    madvise(bytes, reserved, MADV_HUGEPAGE);
#endif
  std::memset(bytes, 0, reserved);
  return bytes;
}

void HostAllocator::free(void *bytes) { std::free(bytes); }

} // namespace lcc::runtime
