//===- EmulatedGrid.cpp - one kernel launch on the CUDA emulator ----------===//
//
// Blocks run one after another on the calling thread. A block's threads are
// fibers resumed in rounds: each runs until it reaches a barrier or ends.
// When every thread waits at the same barrier the block moves on to the
// next barrier interval; when some ended, or wait at another barrier, the
// barrier is divergent: a finding, and the block is abandoned (its fibers
// are never resumed; their stacks hold nothing to release). Warp
// collectives and cp.async are GridCollectives.cpp's.
//
// Racecheck keeps, for every byte of shared memory, the last writer and the
// reader(s) of the current barrier interval: a thread writing a byte
// another thread read or wrote in the same interval, or reading one another
// thread wrote, is a hazard. Intervals are numbered across the launch, so a
// new block or barrier needs no reset.
//
//===----------------------------------------------------------------------===//

#include "devices/cuda/EmulatedGrid.h"

#include "devices/cuda/GridRun.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iomanip>
#include <map>
#include <numeric>
#include <random>
#include <sstream>

namespace lcc::runtime::cuda::emulation {

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

} // namespace lcc::runtime::cuda::emulation

namespace lcc::runtime::cuda {

StatusOr<GridFindings> runGrid(const GridLaunch &launch,
                               AllocationLookup allocationOf) {
  emulation::GridRun run(launch, allocationOf);
  return run.run();
}

} // namespace lcc::runtime::cuda
