//===- KernelTemporaries.cpp - heap temporaries of CPU kernels -----------===//

#include "module/KernelTemporaries.h"

#include <cstdint>
#include <cstdlib>

namespace lcc::runtime {
namespace {

/// Before every block, in the bytes its alignment leaves free: how far
/// back the allocation starts and how many bytes follow the block.
struct BlockHeader {
  size_t offset;
  size_t capacity;
};

/// At least one header's room before a block, and a cache line's
/// alignment for every block.
constexpr size_t kMinimumAlignment = 64;

BlockHeader *headerOf(void *block) {
  return reinterpret_cast<BlockHeader *>(static_cast<char *>(block) -
                                         sizeof(BlockHeader));
}

void freeBlock(void *block) {
  std::free(static_cast<char *>(block) - headerOf(block)->offset);
}

/// The blocks one thread keeps, most recently kept first.
struct KeptBlocks {
  void *blocks[kKeptTemporaries] = {};
  size_t count = 0;
  size_t bytes = 0;

  ~KeptBlocks() { clear(); }

  void clear() {
    for (size_t i = 0; i < count; ++i)
      freeBlock(blocks[i]);
    count = bytes = 0;
  }

  /// The smallest kept block of at least `size` bytes, aligned to
  /// `alignment`, taken out; or null.
  void *take(size_t alignment, size_t size) {
    size_t best = count;
    for (size_t i = 0; i < count; ++i) {
      size_t capacity = headerOf(blocks[i])->capacity;
      if (capacity >= size &&
          reinterpret_cast<uintptr_t>(blocks[i]) % alignment == 0 &&
          (best == count || capacity < headerOf(blocks[best])->capacity))
        best = i;
    }
    if (best == count)
      return nullptr;
    void *block = blocks[best];
    bytes -= headerOf(block)->capacity;
    for (size_t i = best; i + 1 < count; ++i)
      blocks[i] = blocks[i + 1];
    --count;
    return block;
  }

  void keep(void *block) {
    size_t capacity = headerOf(block)->capacity;
    if (capacity > kKeptTemporaryBytes) {
      freeBlock(block);
      return;
    }
    while (count == kKeptTemporaries ||
           bytes + capacity > kKeptTemporaryBytes) {
      --count;
      bytes -= headerOf(blocks[count])->capacity;
      freeBlock(blocks[count]);
    }
    for (size_t i = count; i > 0; --i)
      blocks[i] = blocks[i - 1];
    blocks[0] = block;
    ++count;
    bytes += capacity;
  }
};

thread_local KeptBlocks kept;

} // namespace

void *allocateKernelTemporary(size_t alignment, size_t size) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0)
    return nullptr;
  if (alignment < kMinimumAlignment)
    alignment = kMinimumAlignment;
  if (void *block = kept.take(alignment, size))
    return block;
  // Whole multiples of the alignment (aligned_alloc's contract), which
  // also lets nearby sizes share blocks.
  if (size > SIZE_MAX - 2 * alignment)
    return nullptr;
  size_t capacity = (size + alignment - 1) / alignment * alignment;
  auto *start =
      static_cast<char *>(std::aligned_alloc(alignment, alignment + capacity));
  if (!start)
    return nullptr;
  void *block = start + alignment;
  *headerOf(block) = {alignment, capacity};
  return block;
}

void releaseKernelTemporary(void *block) {
  if (block)
    kept.keep(block);
}

void freeKeptTemporaries() { kept.clear(); }

size_t keptTemporaryCount() { return kept.count; }
size_t keptTemporaryBytes() { return kept.bytes; }

} // namespace lcc::runtime
