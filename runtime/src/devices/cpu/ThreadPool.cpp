//===- ThreadPool.cpp - persistent workers for workgroups -----------------===//

#include "devices/cpu/ThreadPool.h"

#include <algorithm>

namespace lcc::runtime {

ThreadPool::ThreadPool(unsigned threadCount) {
  if (threadCount == 0)
    threadCount = std::max(1u, std::thread::hardware_concurrency());
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
    stopping = true;
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
    {
      std::unique_lock<std::mutex> lock(mutex);
      wake.wait(lock, [&] { return stopping || generation != seen; });
      if (stopping)
        return;
      seen = generation;
    }
    runShare();
    std::lock_guard<std::mutex> lock(mutex);
    if (--busyWorkers == 0)
      idle.notify_one();
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
    next.store(0);
    // Every worker takes part in every job (possibly finding nothing left),
    // so the job is done when all of them have reported back.
    busyWorkers = unsigned(workers.size());
    ++generation;
  }
  wake.notify_all();
  runShare();
  std::unique_lock<std::mutex> lock(mutex);
  idle.wait(lock, [&] { return busyWorkers == 0; });
  body = nullptr;
}

} // namespace lcc::runtime
