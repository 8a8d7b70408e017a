//===- KernelTemporariesTest.cpp - the CPU kernels' temporaries cache -----===//

#include "module/KernelTemporaries.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <sys/resource.h>
#include <thread>
#include <vector>

using namespace lcc::runtime;

namespace {

class KernelTemporariesTest : public ::testing::Test {
protected:
  void SetUp() override { freeKeptTemporaries(); }
  void TearDown() override { freeKeptTemporaries(); }
};

long minorFaults() {
  struct rusage usage;
  getrusage(RUSAGE_THREAD, &usage);
  return usage.ru_minflt;
}

TEST_F(KernelTemporariesTest, AFreedBlockServesTheNextAllocation) {
  void *first = allocateKernelTemporary(64, 147456);
  ASSERT_NE(first, nullptr);
  std::memset(first, 1, 147456);
  releaseKernelTemporary(first);
  EXPECT_EQ(keptTemporaryCount(), 1u);
  EXPECT_EQ(keptTemporaryBytes(), 147456u);
  // A smaller request takes the same block back.
  void *again = allocateKernelTemporary(64, 100000);
  EXPECT_EQ(again, first);
  EXPECT_EQ(keptTemporaryCount(), 0u);
  releaseKernelTemporary(again);
}

// What the cache is for: a workgroup's temporaries allocated, written and
// freed over and over fault no page in after the first time.
TEST_F(KernelTemporariesTest, RepeatedWorkgroupsFaultNoPages) {
  auto workgroup = [] {
    void *a = allocateKernelTemporary(64, 1 << 20);
    void *b = allocateKernelTemporary(64, 1 << 20);
    std::memset(a, 2, 1 << 20);
    std::memset(b, 3, 1 << 20);
    releaseKernelTemporary(b);
    releaseKernelTemporary(a);
  };
  workgroup();
  long before = minorFaults();
  for (int i = 0; i < 100; ++i)
    workgroup();
  // glibc maps 1 MiB blocks fresh: 512 pages a workgroup without the cache.
  EXPECT_LT(minorFaults() - before, 16);
}

TEST_F(KernelTemporariesTest, BlocksAreAlignedAsAsked) {
  for (size_t alignment : {size_t(1), size_t(16), size_t(64), size_t(4096)}) {
    void *block = allocateKernelTemporary(alignment, 1000);
    ASSERT_NE(block, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(block) % alignment, 0u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(block) % 64, 0u);
    releaseKernelTemporary(block);
  }
  // A kept block of a weaker alignment is not handed out for a stronger one.
  void *block = allocateKernelTemporary(4096, 1000);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(block) % 4096, 0u);
  releaseKernelTemporary(block);
  EXPECT_EQ(allocateKernelTemporary(3, 64), nullptr);
  EXPECT_EQ(allocateKernelTemporary(0, 64), nullptr);
  EXPECT_EQ(allocateKernelTemporary(64, SIZE_MAX - 8), nullptr);
  releaseKernelTemporary(nullptr);
}

TEST_F(KernelTemporariesTest, TheSmallestBlockThatFitsIsTaken) {
  void *large = allocateKernelTemporary(64, 8192);
  void *small = allocateKernelTemporary(64, 1024);
  releaseKernelTemporary(large);
  releaseKernelTemporary(small);
  EXPECT_EQ(allocateKernelTemporary(64, 1000), small);
  EXPECT_EQ(allocateKernelTemporary(64, 1000), large);
  releaseKernelTemporary(small);
  releaseKernelTemporary(large);
}

TEST_F(KernelTemporariesTest, AThreadKeepsAtMostItsLimits) {
  std::vector<void *> blocks;
  for (size_t i = 0; i < kKeptTemporaries + 3; ++i)
    blocks.push_back(allocateKernelTemporary(64, 4096));
  for (void *block : blocks)
    releaseKernelTemporary(block);
  EXPECT_EQ(keptTemporaryCount(), kKeptTemporaries);
  // The most recently freed are kept.
  void *latest = allocateKernelTemporary(64, 4096);
  EXPECT_EQ(latest, blocks.back());
  releaseKernelTemporary(latest);
  freeKeptTemporaries();
  EXPECT_EQ(keptTemporaryCount(), 0u);
  EXPECT_EQ(keptTemporaryBytes(), 0u);

  // A block over the byte limit is freed at once; blocks that would pass
  // it push the oldest out.
  void *huge = allocateKernelTemporary(64, kKeptTemporaryBytes + 64);
  ASSERT_NE(huge, nullptr);
  releaseKernelTemporary(huge);
  EXPECT_EQ(keptTemporaryCount(), 0u);
  void *half = allocateKernelTemporary(64, kKeptTemporaryBytes / 2);
  void *other = allocateKernelTemporary(64, kKeptTemporaryBytes / 2);
  void *more = allocateKernelTemporary(64, 4096);
  releaseKernelTemporary(half);
  releaseKernelTemporary(other);
  releaseKernelTemporary(more);
  EXPECT_EQ(keptTemporaryCount(), 2u);
  EXPECT_LE(keptTemporaryBytes(), kKeptTemporaryBytes);
}

TEST_F(KernelTemporariesTest, ABlockFreedOnAnotherThreadIsKeptThere) {
  void *block = allocateKernelTemporary(64, 4096);
  size_t keptThere = 0;
  std::thread other([&] {
    releaseKernelTemporary(block);
    keptThere = keptTemporaryCount();
  }); // the thread's blocks are freed as it ends
  other.join();
  EXPECT_EQ(keptThere, 1u);
  EXPECT_EQ(keptTemporaryCount(), 0u);
}

} // namespace
