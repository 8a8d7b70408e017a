//===- CpuDeviceTest.cpp - executables, allocator and thread pool ---------===//

#include "devices/cpu/CpuDevice.h"
#include "devices/cpu/CpuFeatures.h"

#include "TestModules.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <dirent.h>
#ifdef __linux__
#include <sched.h>
#endif
#include <set>
#include <thread>

using namespace lcc;
using namespace lcc::runtime;
using namespace lcc::test;

namespace {

std::unique_ptr<CpuExecutable>
loadOrFail(const std::vector<uint8_t> &bytes,
           const std::vector<std::string> &names,
           CpuExecutable::Backing backing = CpuExecutable::Backing::Memfd) {
  StatusOr<std::unique_ptr<CpuExecutable>> executable = CpuExecutable::load(
      bytes.data(), bytes.size(), names, "executables[0]", backing);
  EXPECT_EQ(messageOf(executable), "<ok>");
  return executable.ok() ? executable.take() : nullptr;
}

int32_t variantId(const CpuExecutable &executable) {
  int32_t id = 0;
  void *bindings[] = {&id};
  executable.getEntryPoint(0)(bindings, 0, 0, 0);
  return id;
}

TEST(CpuExecutable, RunsAnEntryPointLoadedFromMemory) {
  std::unique_ptr<CpuExecutable> executable =
      loadOrFail(getKernelLibrary(), {"grid_ids", "vector_add"});
  ASSERT_TRUE(executable);
  EXPECT_EQ(executable->getEntryPointCount(), 2u);
  std::vector<float> a(128), b(128), out(128, -1);
  for (int i = 0; i < 128; ++i) {
    a[i] = float(i);
    b[i] = float(3 * i);
  }
  void *bindings[] = {a.data(), b.data(), out.data()};
  executable->getEntryPoint(1)(bindings, 1, 0, 0); // the second chunk only
  for (int i = 0; i < 64; ++i)
    EXPECT_EQ(out[i], -1) << i;
  for (int i = 64; i < 128; ++i)
    EXPECT_EQ(out[i], float(4 * i)) << i;
}

// glibc finds an already-loaded object by its path: were the memfd closed
// after dlopen, the next library would reuse "/proc/self/fd/N" and get the
// first library back.
TEST(CpuExecutable, KeepsLibrariesWithTheSameSymbolsApart) {
  std::unique_ptr<CpuExecutable> first =
      loadOrFail(getKernelLibrary(), {"variant_id"});
  std::unique_ptr<CpuExecutable> second =
      loadOrFail(getVariantKernelLibrary(), {"variant_id"});
  ASSERT_TRUE(first && second);
  EXPECT_EQ(variantId(*first), 1);
  EXPECT_EQ(variantId(*second), 2);
  first.reset();
  std::unique_ptr<CpuExecutable> third =
      loadOrFail(getKernelLibrary(), {"variant_id"});
  ASSERT_TRUE(third);
  EXPECT_EQ(variantId(*second), 2);
  EXPECT_EQ(variantId(*third), 1);
}

TEST(CpuExecutable, FallsBackToATemporaryFileAndRemovesIt) {
  TempDir dir;
  const char *previous = std::getenv("TMPDIR");
  std::string saved = previous ? previous : "";
  ::setenv("TMPDIR", dir.path().c_str(), 1);
  {
    std::unique_ptr<CpuExecutable> executable =
        loadOrFail(getVariantKernelLibrary(), {"variant_id"},
                   CpuExecutable::Backing::TemporaryFile);
    ASSERT_TRUE(executable);
    EXPECT_EQ(variantId(*executable), 2);
  }
  if (previous)
    ::setenv("TMPDIR", saved.c_str(), 1);
  else
    ::unsetenv("TMPDIR");
  DIR *listing = ::opendir(dir.path().c_str());
  ASSERT_NE(listing, nullptr);
  size_t entries = 0;
  while (dirent *entry = ::readdir(listing))
    entries +=
        std::string(entry->d_name) != "." && std::string(entry->d_name) != "..";
  ::closedir(listing);
  EXPECT_EQ(entries, 0u) << "the temporary shared object was left behind";
}

TEST(CpuExecutable, NamesAMissingEntryPoint) {
  const std::vector<uint8_t> &bytes = getKernelLibrary();
  EXPECT_EQ(messageOf(CpuExecutable::load(bytes.data(), bytes.size(),
                                          {"vector_add", "no_such_kernel"},
                                          "executables[0]")),
            "executables[0] has no entry point 'no_such_kernel' (no such "
            "exported symbol)");
}

TEST(CpuExecutable, RejectsBytesThatAreNotASharedObject) {
  const uint8_t bytes[] = "not an ELF file";
  EXPECT_EQ(messageOf(CpuExecutable::load(bytes, sizeof(bytes), {"vector_add"},
                                          "executables[2]")),
            "executables[2]: the shared object is 16 bytes, shorter than an "
            "ELF header");
  std::vector<uint8_t> text(4096, 'x');
  EXPECT_EQ(messageOf(CpuExecutable::load(text.data(), text.size(),
                                          {"vector_add"}, "executables[2]")),
            "executables[2]: the shared object is not an ELF file");
}

// dlopen trusts the headers and maps segments past the end of a truncated
// file: the first touch of those pages was a SIGBUS inside the loader.
TEST(CpuExecutable, RejectsATruncatedSharedObject) {
  const std::vector<uint8_t> &library = getKernelLibrary();
  for (size_t size : {library.size() - 1, library.size() / 2, size_t(200)}) {
    std::string message = messageOf(CpuExecutable::load(
        library.data(), size, {"vector_add"}, "executables[0]"));
    EXPECT_EQ(message.rfind("executables[0]: the shared object has ", 0), 0u)
        << message;
    EXPECT_NE(message.find("(truncated?)"), std::string::npos) << message;
  }
}

TEST(CpuExecutable, RejectsAnObjectForAnotherMachine) {
  std::vector<uint8_t> library = getKernelLibrary();
  library[18] = 183; // e_machine: EM_AARCH64
  library[19] = 0;
  EXPECT_EQ(messageOf(CpuExecutable::load(library.data(), library.size(),
                                          {"vector_add"}, "executables[0]")),
            "executables[0]: the shared object is for ELF machine 183, this "
            "machine is 62");
}

// dlsym searches the object's dependencies too: an entry point renamed to a
// libc function would have run that function with the bindings as
// arguments.
TEST(CpuExecutable, ResolvesEntryPointsOnlyInsideTheObject) {
  const std::vector<uint8_t> &bytes = getKernelLibrary();
  std::string message = messageOf(CpuExecutable::load(
      bytes.data(), bytes.size(), {"vector_add", "system"}, "executables[0]"));
  EXPECT_EQ(message.rfind("executables[0]: entry point 'system' is not "
                          "defined by the module's shared object (it resolves "
                          "to '",
                          0),
            0u)
      << message;
  EXPECT_NE(message.find("libc"), std::string::npos) << message;
}

TEST(CpuExecutable, RejectsAnEntryPointThatIsNotAFunction) {
  const std::vector<uint8_t> &bytes = getKernelLibrary();
  EXPECT_EQ(messageOf(CpuExecutable::load(bytes.data(), bytes.size(),
                                          {"lcm_test_kernel_data"},
                                          "executables[0]")),
            "executables[0]: entry point 'lcm_test_kernel_data' is not a "
            "function");
}

TEST(CpuDevice, RefusesGpuExecutables) {
  ModuleSpec spec = vectorAddModule();
  spec.executables[0].format = lcm::ExecutableFormat::Ptx;
  std::vector<uint8_t> bytes = buildModule(spec);
  const lcm::Module *module = lcm::GetModule(bytes.data());
  CpuDevice device(1);
  EXPECT_EQ(messageOf(device.loadExecutable(*module->executables()->Get(0), 0)),
            "executables[0] is Ptx, which the cpu device cannot run");
}

TEST(CpuDevice, GivesEachWorkgroupItsId) {
  std::unique_ptr<CpuExecutable> executable =
      loadOrFail(getKernelLibrary(), {"grid_ids"});
  ASSERT_TRUE(executable);
  for (unsigned threads : {1u, 3u}) {
    CpuDevice device(threads);
    std::vector<int32_t> ids(24, -1);
    void *bindings[] = {ids.data()};
    device.dispatch(executable->getEntryPoint(0), {4, 3, 2}, bindings);
    for (int z = 0; z < 2; ++z)
      for (int y = 0; y < 3; ++y)
        for (int x = 0; x < 4; ++x)
          EXPECT_EQ(ids[(z * 3 + y) * 4 + x], x + 100 * y + 10000 * z);
  }
}

TEST(Allocator, CountsCurrentAndPeakBytes) {
  HostAllocator allocator;
  EXPECT_EQ(allocator.currentBytes(), 0u);
  {
    StatusOr<DeviceBuffer> a = allocator.allocate(100, "a");
    ASSERT_TRUE(a.ok());
    EXPECT_EQ(a->size(), 100u);
    EXPECT_EQ(allocator.currentBytes(), 128u); // whole 64-byte lines
    {
      StatusOr<DeviceBuffer> b = allocator.allocate(64, "b");
      ASSERT_TRUE(b.ok());
      EXPECT_EQ(allocator.currentBytes(), 192u);
    }
    EXPECT_EQ(allocator.currentBytes(), 128u);
    EXPECT_EQ(allocator.peakBytes(), 192u);
    DeviceBuffer moved = a.take();
    EXPECT_EQ(allocator.currentBytes(), 128u);
  }
  EXPECT_EQ(allocator.currentBytes(), 0u);
  EXPECT_EQ(allocator.peakBytes(), 192u);
}

TEST(Allocator, AlignsAndZeroFills) {
  HostAllocator allocator;
  for (uint64_t size : {0u, 1u, 63u, 64u, 1000u}) {
    StatusOr<DeviceBuffer> buffer = allocator.allocate(size, "x");
    ASSERT_TRUE(buffer.ok());
    ASSERT_NE(buffer->data(), nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer->data()) % 64, 0u);
    const uint8_t *bytes = static_cast<const uint8_t *>(buffer->data());
    for (uint64_t i = 0; i < size; ++i)
      ASSERT_EQ(bytes[i], 0);
  }
}

TEST(Allocator, RefusesAbsurdSizes) {
  HostAllocator allocator;
  StatusOr<DeviceBuffer> buffer =
      allocator.allocate(uint64_t(1) << 41, "the arena of function 'f'");
  EXPECT_EQ(messageOf(buffer),
            "cannot allocate 2199023255552 bytes for the arena of function "
            "'f': more than the 1099511627776-byte limit");
  EXPECT_EQ(buffer.getStatus().getCode(), StatusCode::ResourceExhausted);
  EXPECT_EQ(allocator.currentBytes(), 0u);
}

TEST(ThreadPool, RunsEveryIndexExactlyOnce) {
  for (unsigned threads : {1u, 2u, 4u, 8u}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.getThreadCount(), threads);
    for (uint64_t count : {0u, 1u, 7u, 1000u, 100003u}) {
      std::vector<std::atomic<int>> visits(count);
      pool.parallelFor(count, [&](uint64_t i) { visits[i].fetch_add(1); });
      for (uint64_t i = 0; i < count; ++i)
        ASSERT_EQ(visits[i].load(), 1) << threads << " threads, index " << i;
    }
  }
}

TEST(ThreadPool, UsesItsWorkersAndTheCaller) {
  ThreadPool pool(4);
  std::mutex mutex;
  std::set<std::thread::id> seen;
  pool.parallelFor(4000, [&](uint64_t) {
    std::this_thread::sleep_for(std::chrono::microseconds(20));
    std::lock_guard<std::mutex> lock(mutex);
    seen.insert(std::this_thread::get_id());
  });
  EXPECT_GE(seen.size(), 2u);
  EXPECT_LE(seen.size(), 4u);
}

TEST(ThreadPool, SingleThreadRunsOnTheCaller) {
  ThreadPool pool(1);
  std::thread::id caller = std::this_thread::get_id();
  bool allOnCaller = true;
  pool.parallelFor(100, [&](uint64_t) {
    allOnCaller &= std::this_thread::get_id() == caller;
  });
  EXPECT_TRUE(allOnCaller);
}

TEST(ThreadPool, SerialisesConcurrentCallers) {
  ThreadPool pool(3);
  std::vector<std::atomic<int>> a(5000), b(5000);
  std::thread other([&] {
    for (int round = 0; round < 20; ++round)
      pool.parallelFor(a.size(), [&](uint64_t i) { a[i].fetch_add(1); });
  });
  for (int round = 0; round < 20; ++round)
    pool.parallelFor(b.size(), [&](uint64_t i) { b[i].fetch_add(1); });
  other.join();
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].load(), 20);
    ASSERT_EQ(b[i].load(), 20);
  }
}

TEST(CpuFeatures, ListsTheLackedFeaturesAndPassesOverUnknownNames) {
  auto supports = [](const std::string &name) -> std::optional<bool> {
    if (name == "avx2")
      return true;
    if (name == "avx512f" || name == "amx-tile")
      return false;
    return std::nullopt;
  };
  EXPECT_EQ(lackedCpuFeatures({"avx2", "avx512f", "prefer-256-bit", "amx-tile"},
                              supports),
            (std::vector<std::string>{"avx512f", "amx-tile"}));
  EXPECT_TRUE(lackedCpuFeatures({}, supports).empty());
}

TEST(CpuFeatures, TestsTheIsaExtensionsAndNotTuningFlags) {
  EXPECT_FALSE(cpuSupports("prefer-256-bit").has_value());
  EXPECT_FALSE(cpuSupports("").has_value());
  EXPECT_FALSE(isTestedCpuFeature("prefer-256-bit"));
  for (const char *name : {"avx", "avx2", "fma", "avx512f", "avx512bw",
                           "avx512bf16", "amx-tile", "amx-bf16"}) {
    EXPECT_TRUE(isTestedCpuFeature(name)) << name;
    EXPECT_TRUE(cpuSupports(name).has_value()) << name;
  }
  // A CPU with a wider extension has the narrower ones it builds on.
  if (cpuSupports("avx512f") == true)
    EXPECT_EQ(cpuSupports("avx2"), true);
  if (cpuSupports("avx2") == true)
    EXPECT_EQ(cpuSupports("avx"), true);
  if (cpuSupports("amx-bf16") == true)
    EXPECT_EQ(cpuSupports("amx-tile"), true);
}

} // namespace

#ifdef __linux__
TEST(ThreadPool, DefaultsToTheCpusThisProcessMayRunOn) {
  cpu_set_t cpus;
  ASSERT_EQ(sched_getaffinity(0, sizeof(cpus), &cpus), 0);
  ThreadPool pool;
  EXPECT_EQ(pool.getThreadCount(), unsigned(CPU_COUNT(&cpus)));
  // Pinned to one CPU, as `taskset -c 0` runs a benchmark: one thread.
  cpu_set_t one;
  CPU_ZERO(&one);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &cpus)) {
      CPU_SET(cpu, &one);
      break;
    }
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  unsigned pinned = ThreadPool().getThreadCount();
  ASSERT_EQ(sched_setaffinity(0, sizeof(cpus), &cpus), 0);
  EXPECT_EQ(pinned, 1u);
}
#endif
