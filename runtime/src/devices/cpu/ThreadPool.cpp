//===- ThreadPool.cpp - persistent workers for workgroups -----------------===//

#include "devices/cpu/ThreadPool.h"

#include <algorithm>
#include <chrono>
#ifdef __linux__
#include <sched.h>
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace lcc::runtime {

namespace {

/// How long a worker looks for the next job, and the caller for the
/// workers' end, before sleeping: longer than the host's work between two
/// dispatches, far shorter than anything a user would see as load.
constexpr int64_t kSpinNanoseconds = 50'000;

void relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

/// Spins until `done()` or kSpinNanoseconds pass; whether `done()`.
template <typename Done> bool spinUntil(Done done) {
  auto start = std::chrono::steady_clock::now();
  for (unsigned i = 0;; ++i) {
    if (done())
      return true;
    relax();
    // The clock every 64 turns: a read costs as much as many pauses.
    if (i % 64 == 63 && std::chrono::steady_clock::now() - start >
                            std::chrono::nanoseconds(kSpinNanoseconds))
      return done();
  }
}

} // namespace

/// The CPUs this process may run on.
static unsigned availableCpus() {
#ifdef __linux__
  cpu_set_t cpus;
  if (sched_getaffinity(0, sizeof(cpus), &cpus) == 0 && CPU_COUNT(&cpus) > 0)
    return unsigned(CPU_COUNT(&cpus));
#endif
  return std::max(1u, std::thread::hardware_concurrency());
}

ThreadPool::ThreadPool(unsigned threadCount) {
  if (threadCount == 0)
    threadCount = availableCpus();
  workers.reserve(threadCount - 1);
  try {
    for (unsigned i = 1; i < threadCount; ++i)
      workers.emplace_back([this] { workerLoop(); });
  } catch (...) {
    // The system ran out of threads: stop those already started, since
    // destroying a joinable std::thread terminates the program.
    stop();
    throw;
  }
}

ThreadPool::~ThreadPool() { stop(); }

void ThreadPool::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping.store(true);
  }
  wake.notify_all();
  for (std::thread &worker : workers)
    worker.join();
  workers.clear();
}

void ThreadPool::runShare() {
  // Claim `grain` indices at a time: few enough atomic operations for tiny
  // workgroups, small enough chunks to balance uneven ones.
  for (;;) {
    uint64_t begin = next.fetch_add(grain);
    if (begin >= count)
      return;
    uint64_t end = std::min(count, begin + grain);
    for (uint64_t i = begin; i < end; ++i)
      (*body)(i);
  }
}

void ThreadPool::workerLoop() {
  uint64_t seen = 0;
  for (;;) {
    auto posted = [&] {
      return stopping.load(std::memory_order_acquire) ||
             generation.load(std::memory_order_acquire) != seen;
    };
    if (!spinUntil(posted)) {
      std::unique_lock<std::mutex> lock(mutex);
      wake.wait(lock, posted);
    }
    if (stopping.load(std::memory_order_acquire))
      return;
    seen = generation.load(std::memory_order_acquire);
    runShare();
    if (busyWorkers.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      // The caller may be asleep: wake it under the mutex it checks with.
      std::lock_guard<std::mutex> lock(mutex);
      idle.notify_one();
    }
  }
}

void ThreadPool::parallelFor(uint64_t total,
                             const std::function<void(uint64_t)> &fn) {
  if (total == 0)
    return;
  std::lock_guard<std::mutex> callLock(callMutex);
  if (workers.empty() || total == 1) {
    for (uint64_t i = 0; i < total; ++i)
      fn(i);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    body = &fn;
    count = total;
    grain = std::max<uint64_t>(1, total / (8 * getThreadCount()));
    next.store(0, std::memory_order_relaxed);
    // Every worker takes part in every job (possibly finding nothing left),
    // so the job is done when all of them have reported back.
    busyWorkers.store(unsigned(workers.size()), std::memory_order_relaxed);
    generation.fetch_add(1, std::memory_order_release);
  }
  wake.notify_all();
  runShare();
  auto finished = [&] {
    return busyWorkers.load(std::memory_order_acquire) == 0;
  };
  if (!spinUntil(finished)) {
    std::unique_lock<std::mutex> lock(mutex);
    idle.wait(lock, finished);
  }
  body = nullptr;
}

} // namespace lcc::runtime
