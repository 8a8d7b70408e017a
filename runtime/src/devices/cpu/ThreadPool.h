//===- ThreadPool.h - persistent workers for workgroups ---------*- C++ -*-===//
//
// The CPU device runs the workgroups of one dispatch on a fixed set of
// threads created once with the device: starting threads per dispatch would
// cost more than many small kernels.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_RUNTIME_THREADPOOL_H
#define LCC_RUNTIME_THREADPOOL_H

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace lcc::runtime {

class ThreadPool {
public:
  /// A pool of `threadCount` threads in all: the caller of parallelFor is
  /// one of them, so `threadCount - 1` workers are started. 0 means the
  /// CPUs this process may run on (its affinity: `taskset -c 0` gives one
  /// thread, not one per CPU spinning on that one), or
  /// std::thread::hardware_concurrency() where that is not known. Throws
  /// std::system_error when the system cannot start that many threads.
  explicit ThreadPool(unsigned threadCount = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  unsigned getThreadCount() const { return unsigned(workers.size()) + 1; }

  /// Calls `body(i)` once for every i in [0, count), spread over the pool,
  /// and returns when every call has returned. Calls from several threads
  /// are serialised.
  void parallelFor(uint64_t count, const std::function<void(uint64_t)> &body);

private:
  void workerLoop();
  void runShare();
  void stop();

  std::vector<std::thread> workers;
  std::mutex callMutex; // one parallelFor at a time

  // A worker between jobs, and the caller waiting for them, spin on these
  // atomics for a while before they sleep: a train step runs thousands of
  // dispatches of a fraction of a millisecond, and a wake-up through the
  // condition variables cost each of them tens of microseconds at both
  // ends. They sleep after kSpinNanoseconds, so that an idle pool costs
  // nothing.
  std::mutex mutex;
  std::condition_variable wake;
  std::condition_variable idle;
  std::atomic<uint64_t> generation{0}; // bumped for every job
  std::atomic<unsigned> busyWorkers{0};
  std::atomic<bool> stopping{false};

  // The current job. Written before `generation` is bumped (release), read
  // after it is seen (acquire).
  const std::function<void(uint64_t)> *body = nullptr;
  uint64_t count = 0;
  uint64_t grain = 1;
  std::atomic<uint64_t> next{0};
};

} // namespace lcc::runtime

#endif // LCC_RUNTIME_THREADPOOL_H
