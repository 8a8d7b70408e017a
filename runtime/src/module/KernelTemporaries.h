//===- KernelTemporaries.h - heap temporaries of CPU kernels ----*- C++ -*-===//
//
// A CPU kernel allocates the temporaries that do not fit on its stack once
// per workgroup and frees them on exit. From glibc, a block over its mmap
// threshold is mapped fresh each time, and one freed at the top of the heap
// is trimmed off: every workgroup then faults its pages back in (LSH
// attention at 4K ran half its time in page faults). Here a thread keeps
// the blocks it frees for its next workgroup. The compiler routes a
// kernel's aligned_alloc and free here (compiler/CpuTarget.h,
// kTemporaryAllocatorSymbol).
//
//===----------------------------------------------------------------------===//

#ifndef LCC_RUNTIME_KERNELTEMPORARIES_H
#define LCC_RUNTIME_KERNELTEMPORARIES_H

#include <cstddef>

namespace lcc::runtime {

/// Blocks a thread keeps freed, most recently freed first, and the bytes
/// they may hold together; a block larger than that is never kept.
inline constexpr size_t kKeptTemporaries = 8;
inline constexpr size_t kKeptTemporaryBytes = size_t(64) << 20;

/// aligned_alloc's contract (`alignment` a power of two, else null): a
/// block the calling thread freed before, the smallest that fits, or a new
/// one.
void *allocateKernelTemporary(size_t alignment, size_t size);

/// Keeps `block` (from allocateKernelTemporary, on any thread; null is
/// ignored) for the calling thread's next allocation, freeing the least
/// recently kept blocks beyond the limits above.
void releaseKernelTemporary(void *block);

/// Frees the blocks the calling thread keeps (a thread's are freed when it
/// ends).
void freeKeptTemporaries();

/// How many blocks, and bytes, the calling thread keeps.
size_t keptTemporaryCount();
size_t keptTemporaryBytes();

} // namespace lcc::runtime

#endif // LCC_RUNTIME_KERNELTEMPORARIES_H
