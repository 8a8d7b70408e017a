//===- EmulatedGrid.cpp - one kernel launch on the CUDA emulator ----------===//
//
// Blocks run one after another on the calling thread. A block's threads are
// fibers resumed in rounds: each runs until it reaches a barrier or ends.
// When every thread waits at the same barrier the block moves on to the
// next barrier interval; when some ended, or wait at another barrier, the
// barrier is divergent: a finding, and the block is abandoned (its fibers
// are never resumed; their stacks hold nothing to release). A warp
// collective (shfl.sync, vote.sync, mma.sync) is a barrier of the lanes of
// its member mask: once they all wait at it, WarpCollectives.cpp computes
// their results and they run on; a lane of the mask that ended or waits
// elsewhere makes it divergent, the same finding. A cp.async copy is
// queued by its thread and happens when the thread waits for its group, as
// the thread's write of the shared bytes then: a read of them before the
// wait sees poison, a read by another thread without a barrier after the
// wait is a race, and a thread that ends with copies it never waited for
// is a finding.
//
// Racecheck keeps, for every byte of shared memory, the last writer and the
// reader(s) of the current barrier interval: a thread writing a byte
// another thread read or wrote in the same interval, or reading one another
// thread wrote, is a hazard. Intervals are numbered across the launch, so a
// new block or barrier needs no reset.
//
//===----------------------------------------------------------------------===//

#include "devices/cuda/EmulatedGrid.h"

#include "devices/cuda/Fiber.h"
#include "devices/cuda/WarpCollectives.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iomanip>
#include <map>
#include <numeric>
#include <random>
#include <sstream>

namespace lcc::runtime::cuda {
namespace {

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

std::string formatTriple(const std::array<uint32_t, 3> &v) {
  return "(" + std::to_string(v[0]) + "," + std::to_string(v[1]) + "," +
         std::to_string(v[2]) + ")";
}

std::string hexAddress(const void *address) {
  std::ostringstream os;
  os << "0x" << std::hex << reinterpret_cast<uintptr_t>(address);
  return os.str();
}

const char *kindName(EmulatorSite::Kind kind) {
  switch (kind) {
  case EmulatorSite::Kind::Load:
    return "load";
  case EmulatorSite::Kind::Store:
    return "store";
  case EmulatorSite::Kind::Atomic:
    return "atomic";
  case EmulatorSite::Kind::Barrier:
    return "barrier";
  case EmulatorSite::Kind::Warp:
    return "warp collective";
  case EmulatorSite::Kind::Async:
    return "cp.async";
  }
  return "access";
}

/// "0-63, 70, 72-75" for sorted thread indices.
std::string describeThreads(const std::vector<uint32_t> &threads) {
  std::string text;
  for (size_t i = 0; i < threads.size();) {
    size_t j = i;
    while (j + 1 < threads.size() && threads[j + 1] == threads[j] + 1)
      ++j;
    text += (text.empty() ? "" : ", ") + std::to_string(threads[i]);
    if (j > i)
      text += "-" + std::to_string(threads[j]);
    i = j + 1;
  }
  return text;
}

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

thread_local std::vector<FiberStack> stackPool;

void threadMain(void *argument) {
  auto *thread = static_cast<Thread *>(argument);
  thread->run->enter(*thread);
}

void *accessCallback(abi::ThreadContext *context, void *address,
                     uint32_t site) {
  auto *thread = static_cast<Thread *>(context->emulator);
  return thread->run->access(*thread, address, site);
}

void barrierCallback(abi::ThreadContext *context, uint32_t site) {
  auto *thread = static_cast<Thread *>(context->emulator);
  thread->run->barrier(*thread, site);
}

void warpCallback(abi::ThreadContext *context, uint32_t site, uint32_t mask,
                  const uint32_t *in, uint32_t *out) {
  auto *thread = static_cast<Thread *>(context->emulator);
  thread->run->warp(*thread, site, mask, in, out);
}

void asyncCopyCallback(abi::ThreadContext *context, uint32_t site,
                       void *destination, const void *source, uint32_t count) {
  auto *thread = static_cast<Thread *>(context->emulator);
  thread->run->asyncCopy(*thread, site, static_cast<uint8_t *>(destination),
                         static_cast<const uint8_t *>(source), count);
}

Status GridRun::prepareThreads() {
  uint64_t count = uint64_t(launch.block[0]) * launch.block[1] * launch.block[2];
  while (stackPool.size() < count) {
    StatusOr<FiberStack> stack = FiberStack::allocate(kStackBytes);
    if (!stack.ok())
      return stack.getStatus();
    stackPool.push_back(stack.take());
  }
  for (uint32_t i = 0; i < count; ++i) {
    auto thread = std::make_unique<Thread>();
    thread->run = this;
    thread->index = i;
    abi::ThreadContext &context = thread->context;
    context.threadId[0] = i % launch.block[0];
    context.threadId[1] = (i / launch.block[0]) % launch.block[1];
    context.threadId[2] = i / (launch.block[0] * launch.block[1]);
    for (int axis = 0; axis < 3; ++axis) {
      context.blockDim[axis] = launch.block[axis];
      context.gridDim[axis] = launch.grid[axis];
    }
    context.laneId = i % 32;
    context.access = accessCallback;
    context.barrier = barrierCallback;
    context.warp = warpCallback;
    context.asyncCopy = asyncCopyCallback;
    context.emulator = thread.get();
    threads.push_back(std::move(thread));
  }
  shared.resize(kernel.module->staticSharedBytes + launch.dynamicSharedBytes);
  uint64_t words = (shared.size() + 3) / 4;
  if (options.racecheck)
    shadow.assign(words, ShadowWord());
  raceFilter.assign(options.racecheck ? std::max<uint64_t>(words, 1) : 1, 0);
  for (auto &thread : threads) {
    thread->context.raceFilter = raceFilter.data();
    thread->context.filterWords = options.racecheck ? words : 0;
  }
  return Status();
}

std::vector<uint32_t> GridRun::roundOrder() {
  std::vector<uint32_t> order(threads.size());
  std::iota(order.begin(), order.end(), 0u);
  if (options.order == EmulatorOptions::ThreadOrder::Reversed)
    std::reverse(order.begin(), order.end());
  else if (options.order == EmulatorOptions::ThreadOrder::Shuffled)
    std::shuffle(order.begin(), order.end(), random);
  return order;
}

void GridRun::runBlock(const std::array<uint32_t, 3> &block) {
  currentBlock = block;
  std::fill(shared.begin(), shared.end(), kSharedPoison);
  for (auto &thread : threads) {
    for (int axis = 0; axis < 3; ++axis)
      thread->context.blockId[axis] = block[axis];
    thread->context.sharedMemory = shared.data();
    thread->state = Thread::State::Running;
    thread->pendingCopies.clear();
    thread->nextGroup = 0;
    thread->fiber.start(stackPool[thread->index], threadMain, thread.get());
  }
  startInterval();
  while (true) {
    for (uint32_t i : roundOrder()) {
      Thread &thread = *threads[i];
      if (thread.state == Thread::State::Running && thread.fiber.resume()) {
        thread.state = Thread::State::Exited;
        if (!thread.pendingCopies.empty())
          reportUnwaitedCopies(thread);
      }
    }
    bool atWarp = std::any_of(threads.begin(), threads.end(), [](auto &t) {
      return t->state == Thread::State::AtWarp;
    });
    if (atWarp) {
      if (!performWarpCollectives())
        return;
      continue;
    }
    size_t waiting = 0;
    bool oneBarrier = true;
    const Thread *first = nullptr;
    for (auto &thread : threads) {
      if (thread->state != Thread::State::AtBarrier)
        continue;
      ++waiting;
      if (!first)
        first = thread.get();
      else if (thread->barrierSite != first->barrierSite)
        oneBarrier = false;
    }
    if (waiting == 0)
      return;
    if (waiting != threads.size() || !oneBarrier)
      return reportDivergentBarrier();
    startInterval();
    for (auto &thread : threads)
      thread->state = Thread::State::Running;
  }
}

void GridRun::reportDivergentBarrier() {
  std::map<uint32_t, std::vector<uint32_t>> bySite;
  std::vector<uint32_t> exited;
  for (auto &thread : threads) {
    if (thread->state == Thread::State::AtBarrier)
      bySite[thread->barrierSite].push_back(thread->index);
    else
      exited.push_back(thread->index);
  }
  std::string key;
  for (const auto &[site, waiting] : bySite)
    key += std::to_string(site) + ",";
  key += exited.empty() ? "" : "exit";
  record(barrierFindings, key, [&] {
    std::string line = "synccheck: divergent barrier in " + describeLaunch() +
                       ", block " + formatTriple(currentBlock) + " of " +
                       std::to_string(threads.size()) + " threads: ";
    bool firstGroup = true;
    for (const auto &[site, waiting] : bySite) {
      line += (firstGroup ? "" : "; ") + std::string("threads ") +
              describeThreads(waiting) + " wait at " + describeSite(site);
      firstGroup = false;
    }
    if (!exited.empty())
      line += "; threads " + describeThreads(exited) +
              " exited without reaching it";
    return line;
  });
}

void GridRun::barrier(Thread &thread, uint32_t site) {
  thread.state = Thread::State::AtBarrier;
  thread.barrierSite = site;
  thread.fiber.yield();
}

void GridRun::warp(Thread &thread, uint32_t site, uint32_t mask,
                   const uint32_t *in, uint32_t *out) {
  thread.state = Thread::State::AtWarp;
  thread.warpSite = site;
  thread.warpMask = mask;
  thread.warpIn = in;
  thread.warpOut = out;
  thread.fiber.yield();
}

bool GridRun::performWarpCollectives() {
  for (uint32_t base = 0; base < threads.size(); base += kWarpSize) {
    auto lanes = uint32_t(std::min<size_t>(kWarpSize, threads.size() - base));
    for (uint32_t lane = 0; lane < lanes; ++lane)
      if (threads[base + lane]->state == Thread::State::AtWarp &&
          !performWarpCollective(base, lanes, *threads[base + lane]))
        return false;
  }
  return true;
}

bool GridRun::performWarpCollective(uint32_t warpBase, uint32_t lanes,
                                    const Thread &first) {
  uint32_t site = first.warpSite, mask = first.warpMask;
  // Every lane of the mask, the first included, waits here with this mask.
  std::vector<uint32_t> waiting, elsewhere;
  bool complete = (mask >> (first.index - warpBase)) & 1;
  for (uint32_t lane = 0; lane < kWarpSize; ++lane) {
    if (!((mask >> lane) & 1))
      continue;
    const Thread *thread =
        lane < lanes ? threads[warpBase + lane].get() : nullptr;
    bool here = thread && thread->state == Thread::State::AtWarp &&
                thread->warpSite == site && thread->warpMask == mask;
    (here ? waiting : elsewhere).push_back(warpBase + lane);
    complete = complete && here;
  }
  if (!complete) {
    char maskText[16];
    std::snprintf(maskText, sizeof maskText, "0x%08x", mask);
    record(barrierFindings, "warp:" + std::to_string(site), [&] {
      std::string line =
          "synccheck: divergent warp collective in " + describeLaunch() +
          ", block " + formatTriple(currentBlock) + ": thread " +
          std::to_string(first.index) + " waits at " + describeSite(site) +
          " with member mask " + maskText;
      if (!elsewhere.empty())
        line += "; threads " + describeThreads(elsewhere) +
                " of the mask are not there (ended, elsewhere or beyond the "
                "block)";
      else
        line += ", which does not hold its own lane";
      return line;
    });
    return false;
  }
  std::array<WarpLane, kWarpSize> data{};
  for (uint32_t index : waiting)
    std::copy_n(threads[index]->warpIn, abi::kWarpWordsIn,
                data[index - warpBase].in.begin());
  // An ldmatrix lane's row is its 16-byte load, checked as the lane's.
  RowReader rows = [&](uint32_t lane, const uint8_t *address) {
    Thread &reader = *threads[warpBase + lane];
    return static_cast<const uint8_t *>(
        access(reader, const_cast<uint8_t *>(address), site));
  };
  std::string problem = cuda::performWarpCollective(
      sites[site].warpOperation, mask, data, rows);
  if (!problem.empty())
    record(barrierFindings, "warp-result:" + std::to_string(site), [&] {
      return "synccheck: " + problem + " in " + describeLaunch() + ", block " +
             formatTriple(currentBlock) + " (" + describeSite(site) + ")";
    });
  for (uint32_t index : waiting) {
    Thread &thread = *threads[index];
    std::copy_n(data[index - warpBase].out.begin(), abi::kWarpWordsOut,
                thread.warpOut);
    thread.state = Thread::State::Running;
  }
  return true;
}

void GridRun::asyncCopy(Thread &thread, uint32_t site, uint8_t *destination,
                        const uint8_t *source, uint32_t count) {
  const EmulatorSite &at = sites[site];
  switch (at.asyncStep) {
  case EmulatorSite::AsyncStep::Copy: {
    uint32_t read = std::min(count, at.bytes);
    bool destinationOk = sharedRange().contains(destination, at.bytes);
    // The source is global memory: one of the kernel's buffers, or any
    // allocation of the device (a binding no other access site names).
    const uint8_t *base = nullptr;
    uint64_t size = 0;
    bool sourceOk =
        read == 0 ||
        std::any_of(kernelBuffers.begin(), kernelBuffers.end(),
                    [&](const Range &buffer) {
                      return buffer.contains(source, read);
                    }) ||
        (allocationOf && allocationOf(source, &base, &size) &&
         Range{base, size}.contains(source, read));
    if (!destinationOk || !sourceOk) {
      // Where the copy went instead: nowhere, as a GPU with memcheck stops.
      record(memoryFindings, "async:" + std::to_string(site), [&] {
        return "memcheck: invalid cp.async of " + std::to_string(at.bytes) +
               " bytes from " + hexAddress(source) + " to " +
               hexAddress(destination) + " in " + describeLaunch() + ", " +
               describeThread(thread) + ": " +
               (destinationOk ? "the source is in none of the kernel's buffers"
                              : "the destination is not in shared memory") +
               "; " + describeSite(site);
      });
      return;
    }
    thread.pendingCopies.push_back(
        {destination, source, at.bytes, read, site, -1});
    return;
  }
  case EmulatorSite::AsyncStep::Commit:
    for (Thread::PendingCopy &copy : thread.pendingCopies)
      if (copy.group < 0)
        copy.group = thread.nextGroup;
    ++thread.nextGroup;
    return;
  case EmulatorSite::AsyncStep::Wait: {
    // wait_group N: every committed group but the N most recent.
    int64_t completeBelow = count == abi::kWaitAll
                                ? thread.nextGroup
                                : thread.nextGroup - int64_t(count);
    std::vector<Thread::PendingCopy> waiting;
    for (const Thread::PendingCopy &copy : thread.pendingCopies) {
      bool done = count == abi::kWaitAll ||
                  (copy.group >= 0 && copy.group < completeBelow);
      if (done)
        completeCopy(thread, copy);
      else
        waiting.push_back(copy);
    }
    thread.pendingCopies = std::move(waiting);
    return;
  }
  }
}

void GridRun::completeCopy(Thread &thread, const Thread::PendingCopy &copy) {
  if (options.racecheck)
    checkRace(thread, copy.site, /*write=*/true,
              uint64_t(copy.destination - shared.data()), copy.bytes);
  std::memcpy(copy.destination, copy.source, copy.read);
  std::memset(copy.destination + copy.read, 0, copy.bytes - copy.read);
}

void GridRun::reportUnwaitedCopies(const Thread &thread) {
  uint32_t site = thread.pendingCopies.front().site;
  record(barrierFindings, "async-exit:" + std::to_string(site), [&] {
    return "synccheck: " + describeThread(thread) + " of " + describeLaunch() +
           " ended with " + std::to_string(thread.pendingCopies.size()) +
           " cp.async copies it never waited for (the first: " +
           describeSite(site) + ")";
  });
}

Range GridRun::parameterRange(uint32_t parameter) {
  auto found = parameterRanges.find(parameter);
  if (found != parameterRanges.end())
    return found->second;
  // The compiler lists only the kernel's own parameters, which every launch
  // passes.
  const uint8_t *pointer =
      *static_cast<uint8_t *const *>(launch.parameters[parameter]);
  Range range;
  const std::vector<uint64_t> &bytes = launch.description.bindingBytes;
  if (parameter < bytes.size()) {
    range = {pointer, bytes[parameter]};
  } else {
    const uint8_t *base = nullptr;
    uint64_t size = 0;
    if (allocationOf(pointer, &base, &size))
      range = {pointer, size - uint64_t(pointer - base)};
  }
  return parameterRanges[parameter] = range;
}

void GridRun::prepareSiteChecks() {
  siteChecks.assign(sites.size(), SiteCheck());
  for (uint32_t site = 0; site < sites.size(); ++site) {
    const EmulatorSite &at = sites[site];
    // A warp collective's site is checked when it reads memory (ldmatrix).
    if (at.kernel != kernel.name || at.kind == EmulatorSite::Kind::Barrier ||
        at.kind == EmulatorSite::Kind::Async ||
        (at.kind == EmulatorSite::Kind::Warp &&
         !abi::isLdMatrix(at.warpOperation)))
      continue;
    Range range;
    switch (at.space) {
    case EmulatorSite::Space::Parameter:
      range = parameterRange(at.parameter);
      break;
    case EmulatorSite::Space::Shared:
      range = sharedRange();
      break;
    case EmulatorSite::Space::Global: {
      auto global = kernel.module->globals.find(at.global);
      if (global != kernel.module->globals.end())
        range = {global->second.address, global->second.bytes};
      break;
    }
    case EmulatorSite::Space::Unknown:
      break;
    }
    SiteCheck &check = siteChecks[site];
    check.bytes = at.bytes;
    if (range.begin) {
      check.begin = range.begin;
      check.end = range.begin + range.bytes;
      kernelBuffers.push_back(range);
    }
    check.write = at.kind == EmulatorSite::Kind::Store;
    check.raceChecked = options.racecheck &&
                        at.space == EmulatorSite::Space::Shared &&
                        at.kind != EmulatorSite::Kind::Atomic;
  }
  kernelBuffers.push_back(sharedRange());
  for (const auto &[name, global] : kernel.module->globals)
    kernelBuffers.push_back({global.address, global.bytes});
  // Unchecked, an access never calls out; racecheck sees every shared
  // access; memcheck every access outside its buffer.
  const abi::SiteRange everywhere = {
      nullptr, reinterpret_cast<const uint8_t *>(~uintptr_t(0))};
  siteRanges.assign(sites.size(), everywhere);
  for (size_t site = 0; site < sites.size(); ++site) {
    const SiteCheck &check = siteChecks[site];
    if (check.raceChecked)
      siteRanges[site] = {nullptr, nullptr};
    else if (options.memcheck)
      siteRanges[site] = {check.begin, check.end};
  }
  for (auto &thread : threads)
    thread->context.siteRanges = siteRanges.data();
}

void *GridRun::accessOutsideItsBuffer(Thread &thread, void *address,
                                      uint32_t site) {
  if (site >= sites.size())
    return address; // the loader checked the table against the kernels
  const EmulatorSite &at = sites[site];
  auto *bytes = static_cast<uint8_t *>(address);
  if (at.space == EmulatorSite::Space::Unknown) {
    for (const Range &buffer : kernelBuffers)
      if (buffer.contains(bytes, at.bytes)) {
        if (options.racecheck && at.kind != EmulatorSite::Kind::Atomic &&
            sharedRange().contains(bytes, at.bytes))
          checkRace(thread, site, at.kind == EmulatorSite::Kind::Store,
                    uint64_t(bytes - shared.data()), at.bytes);
        return address;
      }
  }
  if (!options.memcheck)
    return address; // the kernel runs as it would on the GPU
  const SiteCheck &check = siteChecks[site];
  Range range{check.begin, uint64_t(check.end - check.begin)};
  record(memoryFindings, std::to_string(site), [&] {
    std::string where;
    if (!range.begin) {
      where = "in none of the kernel's buffers";
    } else {
      const char *begin = reinterpret_cast<const char *>(range.begin);
      const char *end = begin + range.bytes;
      const char *from = reinterpret_cast<const char *>(bytes);
      std::string buffer =
          at.space == EmulatorSite::Space::Parameter
              ? "binding " + std::to_string(at.parameter)
              : at.space == EmulatorSite::Space::Shared
                    ? std::string("shared memory")
                    : "global '" + at.global + "'";
      buffer += " (" + std::to_string(range.bytes) + " bytes)";
      if (from >= end)
        where = std::to_string(from - end) + " bytes past the end of " + buffer;
      else if (from < begin)
        where = std::to_string(begin - from) + " bytes before the start of " +
                buffer;
      else
        where = "overrunning the end of " + buffer;
    }
    // An ldmatrix's access is a lane's load of its row.
    const char *kind = at.kind == EmulatorSite::Kind::Warp
                           ? "load"
                           : kindName(at.kind);
    return "memcheck: invalid " + std::string(kind) + " of " +
           std::to_string(at.bytes) + " bytes at " + hexAddress(address) +
           " in " + describeLaunch() + ", " + describeThread(thread) + ": " +
           where + "; " + describeSite(site);
  });
  return thread.scratch;
}

void GridRun::checkRace(Thread &thread, uint32_t site, bool write,
                        uint64_t offset, uint64_t bytes) {
  auto me = uint16_t(thread.index);
  Hazard first;
  for (uint64_t at = offset, end = offset + bytes; at < end;) {
    uint64_t next = std::min(end, (at & ~uint64_t(3)) + 4);
    auto mask = uint8_t(((1u << (next - at)) - 1) << (at & 3));
    ShadowWord &word = shadow[at >> 2];
    bool written = word.writeInterval == interval;
    bool read = word.readInterval == interval;
    if (!first.kind) {
      if (written && word.writer != me && (word.writeMask & mask))
        first = {write ? "write-after-write" : "read-after-write",
                 word.writeSite, word.writer, at};
      else if (write && read && (word.readMask & mask) &&
               (word.reader != me || word.manyReaders))
        first = {"write-after-read", word.readSite,
                 word.reader != me ? int32_t(word.reader) : -1, at};
    }
    if (write) {
      word.writeMask = written ? uint8_t(word.writeMask | mask) : mask;
      word.writeInterval = interval;
      word.writer = me;
      word.writeSite = site;
    } else if (!read) {
      word.readInterval = interval;
      word.readMask = mask;
      word.reader = me;
      word.readSite = site;
      word.manyReaders = false;
    } else {
      word.readMask |= mask;
      word.manyReaders |= word.reader != me;
    }
    raceFilter[at >> 2] = filterTag(word, me);
    at = next;
  }
  if (first.kind)
    reportRace(thread, site, first);
}

uint64_t GridRun::filterTag(const ShadowWord &word, uint16_t me) const {
  bool written = word.writeInterval == interval;
  bool read = word.readInterval == interval;
  // This thread wrote all of the word and no other thread touched it: its
  // further accesses cannot race (another thread's will call, and find it).
  if (written && word.writer == me && word.writeMask == 0xf &&
      (!read || (word.reader == me && !word.manyReaders)))
    return ownerTag(me);
  // Several threads read all of it, none wrote: another read cannot race.
  if (!written && read && word.manyReaders && word.readMask == 0xf)
    return ownerTag(kReadersTag);
  return 0;
}

void GridRun::reportRace(const Thread &thread, uint32_t site,
                         const Hazard &hazard) {
  std::string key = std::string(hazard.kind) + " " +
                    std::to_string(hazard.otherSite) + " " +
                    std::to_string(site);
  record(raceFindings, key, [&] {
    std::string other = "another thread";
    if (hazard.otherThread >= 0) {
      auto index = uint32_t(hazard.otherThread);
      other = "thread " +
              formatTriple({index % launch.block[0],
                            (index / launch.block[0]) % launch.block[1],
                            index / (launch.block[0] * launch.block[1])});
    }
    return "racecheck: " + std::string(hazard.kind) +
           " hazard on shared memory byte " + std::to_string(hazard.offset) +
           " in " + describeLaunch() + ", block " +
           formatTriple(currentBlock) + ": " + other + " (" +
           describeSite(hazard.otherSite) + ") and thread " +
           formatTriple({thread.context.threadId[0], thread.context.threadId[1],
                         thread.context.threadId[2]}) +
           " (" + describeSite(site) + ") with no barrier between";
  });
}

std::string GridRun::describeSite(uint32_t site) const {
  const EmulatorSite &at = sites[site];
  std::string text = std::string(kindName(at.kind));
  if (at.kind == EmulatorSite::Kind::Barrier)
    text = "the barrier";
  else if (at.kind == EmulatorSite::Kind::Warp)
    text = std::string("the warp collective ") +
           abi::kWarpOperationNames[at.warpOperation];
  text += " #" + std::to_string(site);
  if (at.location != "-")
    text += " at " + at.location;
  return text;
}

std::string GridRun::describeLaunch() const {
  std::string text = "kernel '" + kernel.name + "'";
  const EmulatedLaunch &description = launch.description;
  if (!description.dispatch.empty() && description.dispatch != kernel.name)
    text += " (dispatch '" + description.dispatch + "')";
  if (!description.location.empty())
    text += " of the model op at " + description.location;
  return text;
}

std::string GridRun::describeThread(const Thread &thread) const {
  return "block " + formatTriple(currentBlock) + " thread " +
         formatTriple({thread.context.threadId[0], thread.context.threadId[1],
                       thread.context.threadId[2]});
}

StatusOr<GridFindings> GridRun::run() {
  LCC_RETURN_IF_ERROR(prepareThreads());
  prepareSiteChecks();
  for (uint32_t z = 0; z < launch.grid[2]; ++z)
    for (uint32_t y = 0; y < launch.grid[1]; ++y)
      for (uint32_t x = 0; x < launch.grid[0]; ++x)
        runBlock({x, y, z});
  GridFindings findings;
  findings.memoryError = !memoryFindings.empty();
  for (auto *classes : {&memoryFindings, &raceFindings, &barrierFindings})
    for (const auto &[key, finding] : *classes)
      findings.lines.push_back(
          finding.line +
          (finding.count > 1
               ? " (" + std::to_string(finding.count) + " occurrences)"
               : ""));
  return findings;
}

} // namespace

StatusOr<GridFindings> runGrid(const GridLaunch &launch,
                               AllocationLookup allocationOf) {
  GridRun run(launch, allocationOf);
  return run.run();
}

} // namespace lcc::runtime::cuda
