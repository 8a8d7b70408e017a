//===- GridRun.h - the state of one emulated launch ------------*- C++ -*-===//
//
// What EmulatedGrid.cpp (blocks, barriers, memcheck, racecheck) and
// GridCollectives.cpp (warp collectives, cp.async) share of a launch on the
// CUDA emulator: its threads and GridRun, which runs them. Internal to
// runtime/src/devices/cuda.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_RUNTIME_GRIDRUN_H
#define LCC_RUNTIME_GRIDRUN_H

#include "devices/cuda/EmulatedGrid.h"
#include "devices/cuda/Fiber.h"

#include <map>
#include <random>
#include <string>
#include <vector>

namespace lcc::runtime::cuda::emulation {


namespace abi = lcm::emulator;

/// Each emulated thread's stack; kernels keep little on it, and pages are
/// committed only when touched.
constexpr size_t kStackBytes = 256 * 1024;
/// Where a checked access outside its buffer goes instead: larger than any
/// access a kernel makes (a 64-byte vector).
constexpr size_t kScratchBytes = 256;
/// Uninitialised shared memory reads as NaN, so a kernel that reads what no
/// thread wrote does not match the reference by luck.
constexpr uint8_t kSharedPoison = 0xff;

class GridRun;

struct Thread {
  abi::ThreadContext context{};
  Fiber fiber;
  GridRun *run = nullptr;
  uint32_t index = 0; // linear, x fastest
  enum class State { Running, AtBarrier, AtWarp, Exited } state =
      State::Running;
  uint32_t barrierSite = 0;
  /// At a warp collective: its site, member mask and the lane's registers.
  uint32_t warpSite = 0, warpMask = 0;
  const uint32_t *warpIn = nullptr;
  uint32_t *warpOut = nullptr;
  /// The thread's cp.async copies not yet done, each in a committed group
  /// (0, 1, ...) or the open one (-1).
  struct PendingCopy {
    uint8_t *destination;
    const uint8_t *source;
    uint32_t bytes, read, site;
    int64_t group;
  };
  std::vector<PendingCopy> pendingCopies;
  int64_t nextGroup = 0;
  alignas(64) uint8_t scratch[kScratchBytes];
};

struct Range {
  const uint8_t *begin = nullptr;
  uint64_t bytes = 0;

  bool contains(const uint8_t *address, uint64_t size) const {
    return begin && address >= begin && size <= bytes &&
           uint64_t(address - begin) <= bytes - size;
  }
};

/// What one access site of the launched kernel is checked against: the
/// bytes of its buffer (empty: the site's buffer is unknown, or not this
/// kernel's), and whether racecheck follows it.
struct SiteCheck {
  const uint8_t *begin = nullptr, *end = nullptr;
  uint32_t bytes = 0;
  bool raceChecked = false;
  bool write = false;
};

/// The writes and reads of one 4-byte word of shared memory in the current
/// barrier interval: which bytes, the last writer and a reader (or that
/// there were several), and their sites. Kernels access shared memory in
/// words or wider, so a word is one lookup; bytes of one word written by
/// different threads are told apart by the masks, though the word keeps
/// only the last writer.
struct ShadowWord {
  uint32_t writeInterval = 0, readInterval = 0;
  uint32_t writeSite = 0, readSite = 0;
  uint16_t writer = 0, reader = 0;
  uint8_t writeMask = 0, readMask = 0;
  bool manyReaders = false;
};

/// One line per class (the key), with its first occurrence and a count.
struct FindingClass {
  std::string line;
  uint64_t count = 0;
};

std::string formatTriple(const std::array<uint32_t, 3> &v);
std::string hexAddress(const void *address);
const char *kindName(EmulatorSite::Kind kind);
/// "0-63, 70, 72-75" for sorted thread indices.
std::string describeThreads(const std::vector<uint32_t> &threads);

/// The ThreadContext callbacks of the warp collectives and cp.async
/// (GridCollectives.cpp).
void warpCallback(abi::ThreadContext *context, uint32_t site, uint32_t mask,
                  const uint32_t *in, uint32_t *out);
void asyncCopyCallback(abi::ThreadContext *context, uint32_t site,
                       void *destination, const void *source, uint32_t count);

class GridRun {
public:
  GridRun(const GridLaunch &launch, AllocationLookup allocationOf)
      : launch(launch), kernel(*launch.kernel), sites(kernel.module->sites),
        options(launch.description.options), allocationOf(allocationOf),
        random(launch.description.options.seed) {}

  StatusOr<GridFindings> run();

  void enter(Thread &thread) {
    kernel.entry(&thread.context, launch.parameters);
  }
  void *access(Thread &thread, void *address, uint32_t site) {
    auto *bytes = static_cast<uint8_t *>(address);
    if (site < siteChecks.size()) {
      const SiteCheck &check = siteChecks[site];
      if (bytes >= check.begin && bytes + check.bytes <= check.end) {
        if (check.raceChecked)
          checkRace(thread, site, check.write,
                    uint64_t(bytes - shared.data()), check.bytes);
        return address;
      }
    }
    return accessOutsideItsBuffer(thread, address, site);
  }
  void barrier(Thread &thread, uint32_t site);
  void warp(Thread &thread, uint32_t site, uint32_t mask, const uint32_t *in,
            uint32_t *out);
  void asyncCopy(Thread &thread, uint32_t site, uint8_t *destination,
                 const uint8_t *source, uint32_t count);

private:
  Status prepareThreads();
  void prepareSiteChecks();
  [[gnu::noinline]] void *accessOutsideItsBuffer(Thread &thread,
                                                 void *address, uint32_t site);
  void runBlock(const std::array<uint32_t, 3> &block);
  std::vector<uint32_t> roundOrder();
  /// The next barrier interval: every thread's filter tags move on, so no
  /// word's tag of the last interval matches.
  void startInterval() {
    ++interval;
    for (auto &thread : threads) {
      thread->context.ownerTag = ownerTag(thread->index);
      thread->context.readersTag = ownerTag(kReadersTag);
    }
  }
  uint64_t ownerTag(uint32_t thread) const {
    return (uint64_t(interval) << 16) | thread;
  }
  /// Not a thread (blocks have at most 1024).
  static constexpr uint32_t kReadersTag = 0xffff;
  void reportDivergentBarrier();
  /// Performs every warp collective whose lanes all wait at it; false when
  /// one is divergent (reported, and the block abandoned).
  bool performWarpCollectives();
  bool performWarpCollective(uint32_t warpBase, uint32_t lanes,
                             const Thread &first);
  /// Does `copy` of `thread`: the bytes written as the thread's.
  void completeCopy(Thread &thread, const Thread::PendingCopy &copy);
  /// A finding for copies `thread` ended without waiting for.
  void reportUnwaitedCopies(const Thread &thread);
  Range parameterRange(uint32_t parameter);
  Range sharedRange() const { return {shared.data(), shared.size()}; }
  std::string describeSite(uint32_t site) const;
  std::string describeLaunch() const;
  std::string describeThread(const Thread &thread) const;
  /// A shared byte two threads touched in one barrier interval.
  struct Hazard {
    const char *kind = nullptr; // "write-after-read", ...
    uint32_t otherSite = 0;
    int32_t otherThread = -1; // -1: one of several readers
    uint64_t offset = 0;
  };
  void checkRace(Thread &thread, uint32_t site, bool write, uint64_t offset,
                 uint64_t bytes);
  uint64_t filterTag(const ShadowWord &word, uint16_t me) const;
  [[gnu::noinline]] void reportRace(const Thread &thread, uint32_t site,
                                    const Hazard &hazard);
  template <typename Line>
  void record(std::map<std::string, FindingClass> &classes,
              const std::string &key, Line line) {
    FindingClass &finding = classes[key];
    if (finding.count++ == 0)
      finding.line = line();
  }

  const GridLaunch &launch;
  const EmulatorKernel &kernel;
  const std::vector<EmulatorSite> &sites;
  const EmulatorOptions &options;
  AllocationLookup allocationOf;
  std::mt19937_64 random;

  std::vector<std::unique_ptr<Thread>> threads;
  std::vector<uint8_t> shared;
  std::vector<ShadowWord> shadow;
  /// Each shared word's tag for the kernels' inline filter
  /// (abi::ThreadContext::raceFilter): the accesses that cannot race.
  std::vector<uint64_t> raceFilter;
  std::vector<SiteCheck> siteChecks;
  /// What the kernels check inline: a site's buffer, or nothing where the
  /// emulator must see every access (racecheck, an unknown buffer).
  std::vector<abi::SiteRange> siteRanges;
  std::map<uint32_t, Range> parameterRanges;
  std::vector<Range> kernelBuffers; // every buffer the kernel's sites name
  std::array<uint32_t, 3> currentBlock{};
  uint32_t interval = 0;
  std::map<std::string, FindingClass> memoryFindings, raceFindings,
      barrierFindings;
};

} // namespace lcc::runtime::cuda::emulation

#endif // LCC_RUNTIME_GRIDRUN_H
