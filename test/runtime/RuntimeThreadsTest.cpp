//===- RuntimeThreadsTest.cpp - one function called from many threads ----===//
//
// The C API's threading contract (runtime.h): calls of one LccFunction from
// any number of threads are serialised, and each thread reads the results
// of its own last call, whatever other threads call in between. Each thread
// fills its inputs with values no other call uses and checks every element
// of its results; before the contract, up to half of such calls read
// another thread's result, or a torn one. The same file builds into
// lcc-runtime-thread-tests against the runtime compiled with
// ThreadSanitizer, which also sees races the values happen to survive.
//
//===----------------------------------------------------------------------===//

#include "TestModules.h"

#include "lcc/runtime.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

using namespace lcc;
using namespace lcc::test;

namespace {

constexpr int kThreads = 16;
constexpr int kCallsPerThread = 150;

/// A module loaded on a cpu device of `deviceThreads` threads, with its
/// first function looked up; destroyed together.
struct Loaded {
  LccModule module = nullptr;
  LccDevice device = nullptr;
  LccSession session = nullptr;
  LccFunction function = nullptr;

  explicit Loaded(const ModuleSpec &spec, unsigned deviceThreads = 2) {
    std::vector<uint8_t> bytes = buildModule(spec);
    EXPECT_EQ(lccModuleLoadMemory(bytes.data(), bytes.size(), &module),
              nullptr);
    EXPECT_EQ(lccDeviceCreate("cpu", deviceThreads, &device), nullptr);
    EXPECT_EQ(lccSessionCreate(device, module, &session), nullptr);
    EXPECT_EQ(lccSessionLookupFunction(session, nullptr, &function), nullptr);
  }
  ~Loaded() {
    lccSessionDestroy(session);
    lccDeviceDestroy(device);
    lccModuleDestroy(module);
  }
};

/// Runs `body(thread, call)` on kThreads threads, kCallsPerThread times
/// each; returns how many calls saw a result not their own.
template <typename Body> int onManyThreads(Body body) {
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int c = 0; c < kCallsPerThread; ++c)
        wrong += body(t, c) ? 0 : 1;
    });
  for (std::thread &thread : threads)
    thread.join();
  return wrong;
}

std::string messageOf(LccStatus status) {
  std::string message = lccStatusGetMessage(status);
  lccStatusDestroy(status);
  return message;
}

// "copy": y = x [4, 16] and row3 = its last row, by Copy commands (memmoves
// the sanitizer sees).
TEST(RuntimeThreads, EachThreadReadsItsOwnResults) {
  Loaded loaded(copyModule());
  int wrong = onManyThreads([&](int thread, int call) {
    float mark = float(thread * 1000 + call);
    std::vector<float> x(64, mark);
    int64_t shape[] = {4, 16};
    LccTensorView input = {nullptr, LCC_DTYPE_F32, 2, shape, x.data(), 256};
    if (LccStatus status = lccFunctionCall(loaded.function, &input, 1)) {
      ADD_FAILURE() << messageOf(status);
      return false;
    }
    std::this_thread::yield(); // let other threads call in between
    bool own = true;
    for (size_t r = 0; r < 2; ++r) {
      LccTensorView result;
      lccFunctionGetResult(loaded.function, r, &result);
      const float *values = static_cast<const float *>(result.data);
      for (uint64_t i = 0; i < result.size / 4; ++i)
        own &= values[i] == mark;
    }
    return own;
  });
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(lccFunctionGetCallCount(loaded.function),
            uint64_t(kThreads * kCallsPerThread));
}

// "add": a kernel of the module's shared object, on a device whose pool
// runs each call's workgroups while other application threads wait.
TEST(RuntimeThreads, KernelResultsAreEachCallsOwn) {
  Loaded loaded(vectorAddModule(256), 3);
  int wrong = onManyThreads([&](int thread, int call) {
    float a = float(thread), b = float(call) * 64;
    std::vector<float> x(256, a), y(256, b);
    int64_t shape[] = {256};
    LccTensorView inputs[] = {
        {nullptr, LCC_DTYPE_F32, 1, shape, x.data(), 1024},
        {nullptr, LCC_DTYPE_F32, 1, shape, y.data(), 1024}};
    if (LccStatus status = lccFunctionCall(loaded.function, inputs, 2)) {
      ADD_FAILURE() << messageOf(status);
      return false;
    }
    std::this_thread::yield();
    LccTensorView sum;
    lccFunctionGetResult(loaded.function, 0, &sum);
    const float *values = static_cast<const float *>(sum.data);
    bool own = true;
    for (int i = 0; i < 256; ++i)
      own &= values[i] == a + b;
    return own;
  });
  EXPECT_EQ(wrong, 0);
}

// Statistics and results are read while other threads call: both are
// taken under the function's lock.
TEST(RuntimeThreads, StatisticsAreReadWhileOthersCall) {
  Loaded loaded(copyModule());
  std::atomic<bool> done{false};
  std::thread reader([&] {
    while (!done) {
      (void)lccFunctionGetCallCount(loaded.function);
      (void)lccFunctionGetTotalNanoseconds(loaded.function);
      LccCommandStats stats;
      for (size_t c = 0; c < lccFunctionGetCommandCount(loaded.function); ++c)
        lccFunctionGetCommandStats(loaded.function, c, &stats);
    }
  });
  int wrong = onManyThreads([&](int thread, int) {
    std::vector<float> x(64, float(thread));
    int64_t shape[] = {4, 16};
    LccTensorView input = {nullptr, LCC_DTYPE_F32, 2, shape, x.data(), 256};
    LccStatus status = lccFunctionCall(loaded.function, &input, 1);
    lccStatusDestroy(status);
    return status == nullptr;
  });
  done = true;
  reader.join();
  EXPECT_EQ(wrong, 0);
}

// A name given with an input is checked, not ignored: inputs are taken in
// order, and a call that names them otherwise is refused.
TEST(RuntimeThreads, InputNamesAreChecked) {
  Loaded loaded(vectorAddModule(64));
  std::vector<float> x(64, 1.0f);
  int64_t shape[] = {64};
  LccTensorView swapped[] = {{"b", LCC_DTYPE_F32, 1, shape, x.data(), 256},
                             {"a", LCC_DTYPE_F32, 1, shape, x.data(), 256}};
  EXPECT_EQ(messageOf(lccFunctionCall(loaded.function, swapped, 2)),
            "input 0 'a' is given as 'b': inputs are taken in order, and a "
            "name given with one must be its own");
  LccTensorView named[] = {{"a", LCC_DTYPE_F32, 1, shape, x.data(), 256},
                           {nullptr, LCC_DTYPE_F32, 1, shape, x.data(), 256}};
  EXPECT_EQ(lccFunctionCall(loaded.function, named, 2), nullptr);
}

} // namespace
