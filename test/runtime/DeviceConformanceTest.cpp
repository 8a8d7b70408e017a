//===- DeviceConformanceTest.cpp - what every device must do --------------===//
//---------------===//
//
// One suite, as IREE's HAL conformance tests, run on every device lcc has:
// the CPU, the cuda device over the fake driver (FakeCudaDriver.c) and the
// cuda device over the CUDA emulator. Each test states a property of the
// Device interface that Session relies on whatever runs the code: memory
// starts zeroed and is counted, copies in, out and on the device land
// whole (overlapping ranges as memmove), a function's commands run in
// order, a result carried to the next call stays on the device, the memory
// limit is an error naming what did not fit, and an executable for another
// device is refused by name. Dispatches are checked where the suite has
// code the device runs: the test kernels (kernels.c) on the CPU and the
// fake driver; the emulator's kernels are compiled by lcc, so its
// dispatches are checked in test/compiler/CudaEmulatorTest.cpp and by the
// emulator suite.
//
//===----------------------------------------------------------------------===//

#include "ArtifactBuilder.h"
#include "TestModules.h"
#include "TestUtil.h"

#include "comm/Communicator.h"
#include "devices/cpu/CpuDevice.h"
#include "devices/cuda/CudaDevice.h"
#include "module/Loader.h"
#include "module/Session.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

using namespace lcc;
using namespace lcc::runtime;
using namespace lcc::test;

namespace {

/// One device the suite runs on.
struct DeviceUnderTest {
  std::string name;
  std::function<StatusOr<std::shared_ptr<Device>>()> create;
  /// The format of its executables, for modules built around kernels.c.
  lcm::ExecutableFormat format;
  /// Whether it runs the test kernels of kernels.c.
  bool runsTestKernels;
};

std::ostream &operator<<(std::ostream &os, const DeviceUnderTest &device) {
  return os << device.name;
}

std::vector<DeviceUnderTest> devicesUnderTest() {
  return {
      {"cpu",
       []() -> StatusOr<std::shared_ptr<Device>> {
         return std::shared_ptr<Device>(std::make_shared<CpuDevice>(2));
       },
       lcm::ExecutableFormat::HostSharedObject, true},
      {"cuda_fake_driver",
       []() -> StatusOr<std::shared_ptr<Device>> {
         ScopedEnvironment driver("LCC_CUDA_DRIVER", LCC_FAKE_CUDA_DRIVER_PATH);
         StatusOr<std::shared_ptr<CudaDevice>> device = CudaDevice::create();
         if (!device.ok())
           return device.getStatus();
         return std::shared_ptr<Device>(*device);
       },
       lcm::ExecutableFormat::Cubin, true},
      {"cuda_emulator",
       []() -> StatusOr<std::shared_ptr<Device>> {
         cuda::EmulatorOptions options;
         options.memcheck = options.racecheck = true;
         StatusOr<std::shared_ptr<CudaDevice>> device =
             CudaDevice::createEmulator(options);
         if (!device.ok())
           return device.getStatus();
         return std::shared_ptr<Device>(*device);
       },
       lcm::ExecutableFormat::CudaEmulator, false},
  };
}

class DeviceConformance : public ::testing::TestWithParam<DeviceUnderTest> {
protected:
  void SetUp() override {
    StatusOr<std::shared_ptr<Device>> created = GetParam().create();
    ASSERT_EQ(messageOf(created), "<ok>");
    device = *created;
  }

  /// A session over `spec` on the device, or the error of making it.
  StatusOr<std::unique_ptr<Session>> open(const ModuleSpec &spec) {
    std::vector<uint8_t> bytes = buildModule(spec);
    StatusOr<std::shared_ptr<const Module>> module =
        loadModuleFromMemory(bytes.data(), bytes.size());
    if (!module.ok())
      return module.getStatus();
    return Session::create(device, module.take());
  }

  std::shared_ptr<Device> device;
};

TensorView viewOf(const std::vector<float> &values,
                  const std::vector<int64_t> &shape) {
  return TensorView{DType::F32, shape.data(), shape.size(), values.data(),
                    values.size() * sizeof(float)};
}

std::vector<float> resultOf(const Function &function, size_t i) {
  TensorView out = function.getResult(i);
  std::vector<float> values(out.size / sizeof(float));
  std::memcpy(values.data(), out.data, out.size);
  return values;
}

TEST_P(DeviceConformance, DescribesItself) {
  EXPECT_FALSE(std::string(device->getKind()).empty());
  EXPECT_FALSE(device->getName().empty());
  EXPECT_FALSE(device->getArchitecture().empty());
}

TEST_P(DeviceConformance, StartsFromZeroedCountedMemory) {
  uint64_t before = device->getAllocator().currentBytes();
  StatusOr<DeviceBuffer> buffer =
      device->getAllocator().allocate(1000, "a test buffer");
  ASSERT_EQ(messageOf(buffer), "<ok>");
  EXPECT_GE(device->getAllocator().currentBytes(), before + 1000);
  std::vector<uint8_t> bytes(1000, 0xab);
  ASSERT_EQ(messageOf(device->copyToHost(bytes.data(), buffer->data(), 1000)),
            "<ok>");
  EXPECT_EQ(bytes, std::vector<uint8_t>(1000, 0));
}

TEST_P(DeviceConformance, CopiesInOnAndOutWhole) {
  StatusOr<DeviceBuffer> a = device->getAllocator().allocate(4096, "a");
  StatusOr<DeviceBuffer> b = device->getAllocator().allocate(4096, "b");
  ASSERT_EQ(messageOf(a), "<ok>");
  ASSERT_EQ(messageOf(b), "<ok>");
  std::vector<uint8_t> in(4096);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = uint8_t(i * 7 + 3);
  ASSERT_EQ(messageOf(device->copyToDevice(a->data(), in.data(), 4096)),
            "<ok>");
  ASSERT_EQ(messageOf(device->copyOnDevice(b->data(), a->data(), 4096)),
            "<ok>");
  std::vector<uint8_t> out(4096);
  ASSERT_EQ(messageOf(device->copyToHost(out.data(), b->data(), 4096)), "<ok>");
  EXPECT_EQ(out, in);
}

TEST_P(DeviceConformance, RunsCommandsInOrder) {
  // to_arena, then to_output and last_row read what to_arena wrote.
  StatusOr<std::unique_ptr<Session>> session = open(copyModule());
  ASSERT_EQ(messageOf(session), "<ok>");
  StatusOr<Function *> copy = (*session)->lookupFunction("copy");
  ASSERT_EQ(messageOf(copy), "<ok>");
  std::vector<float> x(64);
  for (int i = 0; i < 64; ++i)
    x[i] = float(i) - 20.5f;
  std::vector<int64_t> shape = {4, 16};
  TensorView input = viewOf(x, shape);
  ASSERT_EQ(messageOf((*copy)->call(&input, 1)), "<ok>");
  EXPECT_EQ(resultOf(**copy, 0), x);
  EXPECT_EQ(resultOf(**copy, 1), std::vector<float>(x.begin() + 48, x.end()));
}

/// A job of four ranks as rank 0 sees it: the other three hold this rank's
/// values plus one.
class FourRanks final : public Communicator {
public:
  int rank() const override { return 0; }
  int size() const override { return 4; }
  std::string describe() const override { return "four test ranks"; }
  [[noreturn]] void abort(int code) override { std::_Exit(code); }

protected:
  Status reduceSum(float *data, size_t count) override {
    for (size_t i = 0; i < count; ++i)
      data[i] = data[i] + 3.0f * (data[i] + 1.0f);
    return Status();
  }
  Status gather(const void *, size_t, void *) override { return Status(); }
  Status exchangeBlocks(const void *data, size_t blockBytes,
                        void *out) override {
    // Rank j's block 0 is this rank's plus one.
    const float *block = static_cast<const float *>(data);
    float *received = static_cast<float *>(out);
    size_t count = blockBytes / sizeof(float);
    for (size_t j = 0; j < 4; ++j)
      for (size_t i = 0; i < count; ++i)
        received[j * count + i] = block[i] + (j == 0 ? 0.0f : 1.0f);
    return Status();
  }
  Status sendAroundRing(const void *data, size_t bytes, int to, int from,
                        void *out) override {
    sentTo = to;
    receivedFrom = from;
    const float *values = static_cast<const float *>(data);
    float *received = static_cast<float *>(out);
    for (size_t i = 0; i < bytes / sizeof(float); ++i)
      received[i] = values[i] + 1.0f;
    return Status();
  }

  StatusOr<std::unique_ptr<Communicator>> split(int, int) override {
    return Status::error(StatusCode::Internal, "four test ranks in one group");
  }

public:
  int sentTo = -1, receivedFrom = -1;
};

// An all-reduce runs between the commands around it, on the bytes they
// write and read, through the session's communicator (on a GPU, through
// NCCL).
TEST_P(DeviceConformance, ReducesOverRanksBetweenCommands) {
  StatusOr<std::unique_ptr<Session>> session = open(reduceOverRanksModule());
  ASSERT_EQ(messageOf(session), "<ok>");
  StatusOr<Function *> copy = (*session)->lookupFunction("copy");
  ASSERT_EQ(messageOf(copy), "<ok>");
  std::vector<float> x(64);
  for (int i = 0; i < 64; ++i)
    x[i] = float(i) - 20.5f;
  std::vector<int64_t> shape = {4, 16};
  TensorView input = viewOf(x, shape);
  // One process alone: the identity.
  ASSERT_EQ(messageOf((*copy)->call(&input, 1)), "<ok>");
  EXPECT_EQ(resultOf(**copy, 0), x);

  FourRanks job;
  (*session)->setCommunicator(&job);
  if (std::string(device->getKind()) == "cuda") {
    // A GPU reduces its own memory with NCCL (ranks-fake-nccl.sh runs it
    // over MPI), never through the host: without NCCL, an error.
    ScopedEnvironment nccl("LCC_NCCL_LIBRARY", "/nonexistent/libnccl.so.2");
    EXPECT_EQ(messageOf((*copy)->call(&input, 1)),
              "'mean': nccl unavailable: cannot load "
              "/nonexistent/libnccl.so.2, named by LCC_NCCL_LIBRARY "
              "(/nonexistent/libnccl.so.2: cannot open shared object file: "
              "No such file or directory)");
    return;
  }
  ASSERT_EQ(messageOf((*copy)->call(&input, 1)), "<ok>");
  std::vector<float> expected = x;
  for (int i = 0; i < 64; ++i)
    expected[i] = i < 32 ? x[i] + 0.75f : 4.0f * x[i] + 3.0f;
  EXPECT_EQ(resultOf(**copy, 0), expected);
  // last_row reads the input, which no collective writes.
  EXPECT_EQ(resultOf(**copy, 1), std::vector<float>(x.begin() + 48, x.end()));
  EXPECT_EQ(job.getSentBytes(), 256u);

  // Launched by mpirun without the job's communicator, each rank would
  // reduce over itself alone.
  (*session)->setCommunicator(nullptr);
  ScopedEnvironment mpirun("OMPI_COMM_WORLD_SIZE", "2");
  EXPECT_EQ(messageOf((*copy)->call(&input, 1)),
            "'mean' reduces over the ranks of the job that mpirun launched, "
            "but the session has no communicator (lccSessionSetCommunicator)");
}

// Exchanges run between the commands around them, from and into the bytes
// they name, through the session's communicator (on a GPU, NCCL).
TEST_P(DeviceConformance, ExchangesAmongRanksBetweenCommands) {
  StatusOr<std::unique_ptr<Session>> session = open(exchangeModule(4));
  ASSERT_EQ(messageOf(session), "<ok>");
  StatusOr<Function *> exchange = (*session)->lookupFunction("exchange");
  ASSERT_EQ(messageOf(exchange), "<ok>");
  std::vector<float> x(64);
  for (int i = 0; i < 64; ++i)
    x[i] = float(i) * 0.5f - 7.0f;
  std::vector<int64_t> shape = {4, 16};
  TensorView input = viewOf(x, shape);
  // Four blocks, one process: not the job it was compiled for.
  EXPECT_EQ(messageOf((*exchange)->call(&input, 1)),
            "'blocks' has one block per rank of a group of 4, but this job "
            "has 1 rank: run it under mpirun -np 4 (or a multiple), or "
            "compile it for this job");

  FourRanks job;
  (*session)->setCommunicator(&job);
  if (std::string(device->getKind()) == "cuda") {
    // A GPU exchanges its own memory with NCCL (ranks-fake-nccl.sh runs it
    // over MPI): without NCCL, an error.
    ScopedEnvironment nccl("LCC_NCCL_LIBRARY", "/nonexistent/libnccl.so.2");
    EXPECT_EQ(messageOf((*exchange)->call(&input, 1)),
              "'blocks': nccl unavailable: cannot load "
              "/nonexistent/libnccl.so.2, named by LCC_NCCL_LIBRARY "
              "(/nonexistent/libnccl.so.2: cannot open shared object file: "
              "No such file or directory)");
    return;
  }
  ASSERT_EQ(messageOf((*exchange)->call(&input, 1)), "<ok>");
  // Block j came from rank j, whose block 0 is this rank's plus one.
  std::vector<float> blocks(64);
  for (int i = 0; i < 64; ++i)
    blocks[i] = x[i % 16] + (i < 16 ? 0.0f : 1.0f);
  EXPECT_EQ(resultOf(**exchange, 0), blocks);
  std::vector<float> shifted = x;
  for (float &value : shifted)
    value += 1.0f;
  EXPECT_EQ(resultOf(**exchange, 1), shifted);
  // Rank 0's block of the four rows, and its row at block 0 of zeros.
  EXPECT_EQ(resultOf(**exchange, 2),
            std::vector<float>(x.begin(), x.begin() + 16));
  std::vector<float> padded(64, 0.0f);
  std::copy(x.begin(), x.begin() + 16, padded.begin());
  EXPECT_EQ(resultOf(**exchange, 3), padded);
  // Offset -1: to rank 3, from rank 1.
  EXPECT_EQ(job.sentTo, 3);
  EXPECT_EQ(job.receivedFrom, 1);
  EXPECT_EQ(job.getSentBytes(), 3u * 64u + 256u);

  (*session)->setCommunicator(nullptr);
  ScopedEnvironment mpirun("OMPI_COMM_WORLD_SIZE", "2");
  EXPECT_EQ(messageOf((*exchange)->call(&input, 1)),
            "'blocks' exchanges among the ranks of the job that mpirun "
            "launched, but the session has no communicator "
            "(lccSessionSetCommunicator)");
}

/// Two ranks whose ring shifts move their bytes only when finished: rank
/// 1's values are this rank's plus one, read from the source when the
/// transfer finishes (as a real engine may read it any time until then).
class DeferredRing final : public Communicator {
public:
  int rank() const override { return 0; }
  int size() const override { return 2; }
  std::string describe() const override { return "two deferred ranks"; }
  [[noreturn]] void abort(int code) override { std::_Exit(code); }

  int started = 0, advanced = 0, finished = 0;

protected:
  Status reduceSum(float *, size_t) override { return Status(); }
  Status gather(const void *, size_t, void *) override { return Status(); }
  Status exchangeBlocks(const void *, size_t, void *) override {
    return Status();
  }
  // A device whose memory is not the host's shifts through staging, at once.
  Status sendAroundRing(const void *data, size_t bytes, int, int,
                        void *out) override {
    for (size_t i = 0; i < bytes / sizeof(float); ++i)
      static_cast<float *>(out)[i] = static_cast<const float *>(data)[i] + 1;
    return Status();
  }
  StatusOr<std::unique_ptr<Communicator>> split(int, int) override {
    return Status::error(StatusCode::Internal, "two deferred ranks, one group");
  }
  StatusOr<std::unique_ptr<Transfer>> startSendAroundRing(const void *data,
                                                          size_t bytes, int,
                                                          int,
                                                          void *out) override {
    ++started;
    return std::unique_ptr<Transfer>(new Deferred(*this, data, bytes, out));
  }

private:
  struct Deferred final : Transfer {
    Deferred(DeferredRing &job, const void *data, size_t bytes, void *out)
        : job(job), data(static_cast<const float *>(data)), bytes(bytes),
          out(static_cast<float *>(out)) {}
    Status advance() override {
      ++job.advanced;
      return Status();
    }
    Status finish() override {
      ++job.finished;
      for (size_t i = 0; i < bytes / sizeof(float); ++i)
        out[i] = data[i] + 1.0f;
      return Status();
    }
    DeferredRing &job;
    const float *data;
    size_t bytes;
    float *out;
  };
};

// A ring shift runs behind the commands after it: each waits for it only
// where it touches its bytes. Here the source is overwritten (the planner
// may reuse a source no longer read) and the target read after it; the
// shift must have read the source before the one and written the target
// before the other, and every shift ends within the call.
TEST_P(DeviceConformance, ShiftsRunBehindLaterCommands) {
  FunctionSpec function;
  function.name = "behind";
  function.inputs = {{"x", DType::F32, {64}}, {"y", DType::F32, {64}}};
  function.outputs = {{"shifted", DType::F32, {64}},
                      {"late", DType::F32, {64}}};
  function.arenaSize = 768;
  function.buffers = {{lcm::BufferKind::Input, 0, 256, 0},
                      {lcm::BufferKind::Input, 1, 256, 0},
                      {lcm::BufferKind::Transient, 0, 768, 0},
                      {lcm::BufferKind::Output, 0, 256, 0},
                      {lcm::BufferKind::Output, 1, 256, 0}};
  CommandSpec in;
  in.kind = lcm::CommandKind::Copy;
  in.name = "in";
  in.source = {0, 0, 256};
  in.target = {2, 0, 256};
  CommandSpec shift;
  shift.kind = lcm::CommandKind::Exchange;
  shift.name = "shift";
  shift.pattern = lcm::ExchangePattern::Ring;
  shift.ringOffset = 1;
  shift.source = {2, 0, 256};
  shift.target = {2, 256, 256};
  CommandSpec unrelated = in; // touches neither: the shift stays in flight
  unrelated.name = "unrelated";
  unrelated.source = {1, 0, 256};
  unrelated.target = {2, 512, 256};
  CommandSpec overwrite = in; // the source's bytes, reused
  overwrite.name = "overwrite";
  overwrite.source = {1, 0, 256};
  overwrite.target = {2, 0, 256};
  CommandSpec out = in;
  out.name = "out";
  out.source = {2, 256, 256};
  out.target = {3, 0, 256};
  CommandSpec late = in;
  late.name = "late"; // a second shift, finished at the end of the call
  late.kind = lcm::CommandKind::Exchange;
  late.pattern = lcm::ExchangePattern::Ring;
  late.ringOffset = 1;
  late.source = {2, 512, 256};
  late.target = {4, 0, 256};
  function.commands = {in, shift, unrelated, overwrite, out, late};
  ModuleSpec spec;
  spec.functions = {function};

  StatusOr<std::unique_ptr<Session>> session = open(spec);
  ASSERT_EQ(messageOf(session), "<ok>");
  StatusOr<Function *> behind = (*session)->lookupFunction("behind");
  ASSERT_EQ(messageOf(behind), "<ok>");
  if (std::string(device->getKind()) == "cuda")
    return; // a GPU's shifts are NCCL's (ExchangesAmongRanksBetweenCommands)
  DeferredRing job;
  bool behindCommands = device->isHostAddressable();
  (*session)->setCommunicator(&job);
  std::vector<float> x(64), y(64);
  for (int i = 0; i < 64; ++i) {
    x[i] = float(i);
    y[i] = 100.0f - float(i);
  }
  std::vector<int64_t> shape = {64};
  TensorView inputs[] = {viewOf(x, shape), viewOf(y, shape)};
  ASSERT_EQ(messageOf((*behind)->call(inputs, 2)), "<ok>");
  std::vector<float> xPlusOne = x, yPlusOne = y;
  for (float &v : xPlusOne)
    v += 1.0f;
  for (float &v : yPlusOne)
    v += 1.0f;
  EXPECT_EQ(resultOf(**behind, 0), xPlusOne);
  EXPECT_EQ(resultOf(**behind, 1), yPlusOne);
  // Where the device's memory is the host's, the shifts ran behind the
  // commands, and the command that touched neither let the first move on;
  // elsewhere they ran at once, staged.
  EXPECT_EQ(job.started, behindCommands ? 2 : 0);
  EXPECT_EQ(job.finished, job.started);
  EXPECT_EQ(job.advanced >= 1, behindCommands);
}

// The planner may overlap a copy's ranges, as memmove allows.
TEST_P(DeviceConformance, CopiesBetweenOverlappingRanges) {
  FunctionSpec function;
  function.name = "shift";
  function.inputs = {{"x", DType::F32, {64}}};
  function.outputs = {{"y", DType::F32, {64}}};
  function.arenaSize = 256;
  function.buffers = {{lcm::BufferKind::Input, 0, 256, 0},
                      {lcm::BufferKind::Transient, 0, 256, 0},
                      {lcm::BufferKind::Output, 0, 256, 0}};
  CommandSpec in;
  in.kind = lcm::CommandKind::Copy;
  in.name = "in";
  in.source = {0, 0, 256};
  in.target = {1, 0, 256};
  CommandSpec forward = in, backward = in;
  forward.name = "forward"; // elements 0..47 move to 16..63
  forward.source = {1, 0, 192};
  forward.target = {1, 64, 192};
  backward.name = "backward"; // then 8..63 move to 0..55
  backward.source = {1, 32, 224};
  backward.target = {1, 0, 224};
  CommandSpec out = in;
  out.name = "out";
  out.source = {1, 0, 256};
  out.target = {2, 0, 256};
  function.commands = {in, forward, backward, out};
  ModuleSpec spec;
  spec.functions = {function};

  std::vector<float> x(64);
  for (int i = 0; i < 64; ++i)
    x[i] = float(i);
  std::vector<float> expected = x;
  std::memmove(expected.data() + 16, expected.data(), 192);
  std::memmove(expected.data(), expected.data() + 8, 224);

  StatusOr<std::unique_ptr<Session>> session = open(spec);
  ASSERT_EQ(messageOf(session), "<ok>");
  StatusOr<Function *> shift = (*session)->lookupFunction("shift");
  ASSERT_EQ(messageOf(shift), "<ok>");
  std::vector<int64_t> shape = {64};
  TensorView input = viewOf(x, shape);
  ASSERT_EQ(messageOf((*shift)->call(&input, 1)), "<ok>");
  EXPECT_EQ(resultOf(**shift, 0), expected);
}

TEST_P(DeviceConformance, CarriesAResultToTheNextCall) {
  // y = x, carried to x: the second call, given no x, returns the first's.
  StatusOr<std::unique_ptr<Session>> session = open(copyModule());
  ASSERT_EQ(messageOf(session), "<ok>");
  StatusOr<Function *> copy = (*session)->lookupFunction("copy");
  ASSERT_EQ(messageOf(copy), "<ok>");
  ASSERT_EQ(messageOf((*copy)->carryResult(0, 0)), "<ok>");
  std::vector<float> x(64, 1.25f);
  std::vector<int64_t> shape = {4, 16};
  TensorView first = viewOf(x, shape);
  ASSERT_EQ(messageOf((*copy)->call(&first, 1)), "<ok>");
  TensorView carried{DType::F32, shape.data(), 2, nullptr, 0};
  ASSERT_EQ(messageOf((*copy)->call(&carried, 1)), "<ok>");
  EXPECT_EQ(resultOf(**copy, 0), x);
}

TEST_P(DeviceConformance, NamesWhatDoesNotFitItsMemoryLimit) {
  device->getAllocator().setLimit(device->getAllocator().currentBytes() + 4096);
  StatusOr<DeviceBuffer> buffer =
      device->getAllocator().allocate(1 << 20, "the test's megabyte");
  ASSERT_FALSE(buffer.ok());
  EXPECT_NE(messageOf(buffer).find("the test's megabyte"), std::string::npos)
      << messageOf(buffer);
}

TEST_P(DeviceConformance, RefusesAnExecutableForAnotherDevice) {
  // vectorAddModule's one executable is the CPU's: the cuda devices are
  // given it, the CPU the GPU's cubin and PTX instead.
  ModuleSpec spec = vectorAddModule();
  if (GetParam().format == lcm::ExecutableFormat::HostSharedObject) {
    spec = withGpuExecutables(spec);
    spec.executables.erase(spec.executables.begin());
  }
  StatusOr<std::unique_ptr<Session>> session = open(spec);
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(messageOf(session).rfind("module has no code for the ", 0), 0u)
      << messageOf(session);
}

TEST_P(DeviceConformance, RunsADispatchOverItsGrid) {
  if (!GetParam().runsTestKernels)
    GTEST_SKIP() << "its kernels come from lcc: test/compiler and the "
                    "emulator suite run them";
  // 16 workgroups of the kernel's 64 elements.
  ModuleSpec spec = vectorAddModule(1024);
  if (GetParam().format != lcm::ExecutableFormat::HostSharedObject)
    spec = withGpuExecutables(spec);
  StatusOr<std::unique_ptr<Session>> session = open(spec);
  ASSERT_EQ(messageOf(session), "<ok>");
  StatusOr<Function *> add = (*session)->lookupFunction("add");
  ASSERT_EQ(messageOf(add), "<ok>");
  std::vector<float> a(1024), b(1024, 0.5f), sum(1024);
  for (int i = 0; i < 1024; ++i) {
    a[i] = float(i);
    sum[i] = float(i) + 0.5f;
  }
  std::vector<int64_t> shape = {1024};
  TensorView inputs[] = {viewOf(a, shape), viewOf(b, shape)};
  ASSERT_EQ(messageOf((*add)->call(inputs, 2)), "<ok>");
  EXPECT_EQ(resultOf(**add, 0), sum);
}

INSTANTIATE_TEST_SUITE_P(
    Devices, DeviceConformance, ::testing::ValuesIn(devicesUnderTest()),
    [](const ::testing::TestParamInfo<DeviceUnderTest> &info) {
      return info.param.name;
    });

} // namespace
