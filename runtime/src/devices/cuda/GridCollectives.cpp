//===- GridCollectives.cpp - warp collectives and cp.async of a launch ----===//
//
// A warp collective (shfl.sync, vote.sync, mma.sync, ldmatrix) is a barrier
// of the lanes of its member mask: once they all wait at it,
// WarpCollectives.cpp computes their results and they run on; a lane of
// the mask that ended or waits elsewhere makes it divergent, a synccheck
// finding. A cp.async copy is queued by its thread and happens when the
// thread waits for its group, as the thread's write of the shared bytes
// then: a read of them before the wait sees poison, a read by another
// thread without a barrier after the wait is a race, and a thread that ends
// with copies it never waited for is a finding.
//
//===----------------------------------------------------------------------===//

#include "devices/cuda/GridRun.h"

#include "devices/cuda/WarpCollectives.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace lcc::runtime::cuda::emulation {

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

} // namespace lcc::runtime::cuda::emulation
