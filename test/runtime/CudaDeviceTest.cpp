//===- CudaDeviceTest.cpp - the cuda device, with and without a GPU -------===//
//
// Three kinds of tests:
//  - no driver: creating the device fails with one clear message;
//  - the fake driver (FakeCudaDriver.c, through LCC_CUDA_DRIVER): the whole
//    device runs on the host, through a library loaded exactly as
//    libcuda.so.1 is, so every driver call, error path and launch parameter
//    is exercised without a GPU;
//  - a real GPU: hand-written PTX (gpu_kernels.ptx) run through libcuda;
//    skipped, with a message, where the driver or the GPU is missing.
//
//===----------------------------------------------------------------------===//

#include "devices/cuda/CudaDevice.h"
#include "devices/cuda/CudaDriver.h"
#include "module/ParameterInit.h"
#include "formats/Safetensors.h"
#include "module/Session.h"

#include "TestModules.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <iterator>

using namespace lcc;
using namespace lcc::runtime;
using namespace lcc::test;

namespace {

//===----------------------------------------------------------------------===//
// No driver
//===----------------------------------------------------------------------===//

TEST(CudaDriver, ReportsALibraryThatDoesNotLoad) {
  ScopedEnvironment driver("LCC_CUDA_DRIVER", "/nonexistent/libcuda.so.1");
  StatusOr<std::shared_ptr<CudaDevice>> device = CudaDevice::create();
  EXPECT_EQ(messageOf(device),
            "cuda device unavailable: cannot load /nonexistent/libcuda.so.1, "
            "named by LCC_CUDA_DRIVER (/nonexistent/libcuda.so.1: cannot open "
            "shared object file: No such file or directory)");
  EXPECT_EQ(device.getStatus().getCode(), StatusCode::Unavailable);
}

TEST(CudaDriver, ReportsAMachineWithoutTheDriver) {
  ScopedEnvironment driver("LCC_CUDA_DRIVER", nullptr);
  if (void *handle = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
    ::dlclose(handle);
    GTEST_SKIP() << "libcuda.so.1 is installed on this machine";
  }
  StatusOr<std::shared_ptr<CudaDevice>> device = CudaDevice::create();
  std::string message = messageOf(device);
  EXPECT_EQ(message.rfind("cuda device unavailable: cannot load libcuda.so.1 "
                          "(libcuda.so.1: cannot open shared object file",
                          0),
            0u)
      << message;
  EXPECT_NE(message.find("): is the NVIDIA driver installed?"),
            std::string::npos)
      << message;
  EXPECT_EQ(device.getStatus().getCode(), StatusCode::Unavailable);
}

TEST(CudaDriver, ReportsAMissingFunction) {
  ScopedEnvironment driver("LCC_CUDA_DRIVER",
                           LCC_FAKE_CUDA_DRIVER_WITHOUT_LAUNCH_PATH);
  EXPECT_EQ(messageOf(CudaDevice::create()),
            "cuda device unavailable: " LCC_FAKE_CUDA_DRIVER_WITHOUT_LAUNCH_PATH
            " has no function cuLaunchKernel: not an NVIDIA driver, or one "
            "too old");
}

//===----------------------------------------------------------------------===//
// The fake driver
//===----------------------------------------------------------------------===//

// FakeCudaDriver.c's view of itself.
struct FakeLaunch {
  char kernel[32];
  unsigned grid[3], block[3], sharedMemoryBytes;
  int parameterCount;
};
struct FakeState {
  size_t allocatedBytes;
  int allocations, modules, events, streams, contextRetains, contextDepth;
  int launches;
  int jitOptionCount;
  char lastImage[8];
};

/// Runs each test on the fake driver with its defaults.
class FakeCuda : public ::testing::Test {
protected:
  FakeCuda()
      : driver("LCC_CUDA_DRIVER", LCC_FAKE_CUDA_DRIVER_PATH),
        fail("LCC_FAKE_CUDA_FAIL", nullptr),
        arch("LCC_FAKE_CUDA_ARCH", nullptr),
        memory("LCC_FAKE_CUDA_MEMORY", nullptr) {}

  /// The fake's own functions, from the library the device loaded.
  template <typename T> T *hook(const char *name) {
    void *handle = ::dlopen(LCC_FAKE_CUDA_DRIVER_PATH, RTLD_NOW | RTLD_LOCAL);
    EXPECT_NE(handle, nullptr) << ::dlerror();
    void *symbol = handle ? ::dlsym(handle, name) : nullptr;
    EXPECT_NE(symbol, nullptr) << name;
    return reinterpret_cast<T *>(symbol);
  }
  FakeState state() {
    FakeState value{};
    hook<void(FakeState *)>("lccFakeCudaGetState")(&value);
    return value;
  }
  FakeLaunch lastLaunch() {
    FakeLaunch value{};
    hook<void(FakeLaunch *)>("lccFakeCudaGetLastLaunch")(&value);
    return value;
  }
  int maxDynamicShared(const char *kernel) {
    return hook<int(const char *)>("lccFakeCudaGetMaxDynamicShared")(kernel);
  }

  std::shared_ptr<CudaDevice> createDevice() {
    StatusOr<std::shared_ptr<CudaDevice>> device = CudaDevice::create();
    EXPECT_EQ(messageOf(device), "<ok>");
    return device.ok() ? *device : nullptr;
  }

  /// A session over `spec` on `device`, or the error of making it.
  StatusOr<std::unique_ptr<Session>> open(const ModuleSpec &spec,
                                          std::shared_ptr<Device> device) {
    std::vector<uint8_t> bytes = buildModule(spec);
    StatusOr<std::shared_ptr<const Module>> module =
        loadModuleFromMemory(bytes.data(), bytes.size());
    if (!module.ok())
      return module.getStatus();
    return Session::create(std::move(device), module.take());
  }

  ScopedEnvironment driver, fail, arch, memory;
};

template <typename T>
TensorView view(const std::vector<T> &values, const std::vector<int64_t> &shape,
                DType dtype = DType::F32) {
  return TensorView{dtype, shape.data(), shape.size(), values.data(),
                    values.size() * sizeof(T)};
}

template <typename T>
std::vector<T> result(const Function &function, size_t i) {
  TensorView out = function.getResult(i);
  std::vector<T> values(out.size / sizeof(T));
  std::memcpy(values.data(), out.data, out.size);
  return values;
}

TEST_F(FakeCuda, DescribesDriverResults) {
  StatusOr<std::shared_ptr<const cuda::CudaDriver>> loaded =
      cuda::CudaDriver::load();
  ASSERT_EQ(messageOf(loaded), "<ok>");
  const cuda::CudaDriver &cuda = **loaded;
  EXPECT_EQ(cuda.getPath(), LCC_FAKE_CUDA_DRIVER_PATH);
  EXPECT_EQ(cuda.describe(2), "CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
  EXPECT_EQ(cuda.describe(218),
            "CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed)");
  EXPECT_EQ(cuda.describe(12345), "CUresult 12345 (unknown to the driver)");
  EXPECT_EQ(messageOf(cuda.check(0, "anything")), "<ok>");
  Status outOfMemory = cuda.check(2, "cuMemAlloc of 4294967296 bytes");
  EXPECT_EQ(messageOf(outOfMemory),
            "cuda device: cuMemAlloc of 4294967296 bytes failed: "
            "CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
  EXPECT_EQ(outOfMemory.getCode(), StatusCode::ResourceExhausted);
  EXPECT_EQ(cuda.check(100, "cuInit").getCode(), StatusCode::Unavailable);
  EXPECT_EQ(cuda.check(218, "loading").getCode(), StatusCode::InvalidModule);
  EXPECT_EQ(cuda.check(700, "running").getCode(), StatusCode::Internal);
}

TEST_F(FakeCuda, ReportsNoDevice) {
  ScopedEnvironment failure("LCC_FAKE_CUDA_FAIL", "cuInit:100");
  StatusOr<std::shared_ptr<CudaDevice>> device = CudaDevice::create();
  EXPECT_EQ(messageOf(device),
            "cuda device unavailable: cuInit failed: CUDA_ERROR_NO_DEVICE (no "
            "CUDA-capable device is detected)");
  EXPECT_EQ(device.getStatus().getCode(), StatusCode::Unavailable);
}

TEST_F(FakeCuda, ReportsADeviceItCannotOpen) {
  ScopedEnvironment failure("LCC_FAKE_CUDA_FAIL", "cuDeviceGet:101");
  EXPECT_EQ(messageOf(CudaDevice::create()),
            "cuda device unavailable: cuDeviceGet of device 0 failed: "
            "CUDA_ERROR_INVALID_DEVICE (invalid device ordinal)");
  // Any failure while opening the device makes it unavailable, and leaves
  // nothing behind.
  ScopedEnvironment stream("LCC_FAKE_CUDA_FAIL", "cuStreamCreate:2");
  StatusOr<std::shared_ptr<CudaDevice>> device = CudaDevice::create();
  EXPECT_EQ(messageOf(device), "cuda device unavailable: cuStreamCreate "
                               "failed: CUDA_ERROR_OUT_OF_MEMORY (out of "
                               "memory)");
  EXPECT_EQ(device.getStatus().getCode(), StatusCode::Unavailable);
  EXPECT_EQ(state().contextRetains, 0);
  EXPECT_EQ(state().contextDepth, 0);
}

TEST_F(FakeCuda, DescribesTheGpu) {
  std::shared_ptr<CudaDevice> device = createDevice();
  ASSERT_TRUE(device);
  EXPECT_STREQ(device->getKind(), "cuda");
  EXPECT_EQ(device->getName(), "Fake CUDA Device");
  EXPECT_EQ(device->getArchitecture(), "sm_90");
  EXPECT_EQ(device->getTarget().cudaVersion, 90u);
  EXPECT_EQ(device->getThreadCount(), 0u);
  EXPECT_EQ(device->getTotalMemory(), uint64_t(1) << 30);
  EXPECT_FALSE(device->isHostAddressable());
  EXPECT_EQ(state().contextRetains, 1);
  EXPECT_EQ(state().streams, 1);
  device.reset();
  EXPECT_EQ(state().contextRetains, 0);
  EXPECT_EQ(state().streams, 0);

  ScopedEnvironment ampere("LCC_FAKE_CUDA_ARCH", "86");
  device = createDevice();
  ASSERT_TRUE(device);
  EXPECT_EQ(device->getArchitecture(), "sm_86");
}

TEST_F(FakeCuda, RunsTheCubinOfItsArchitecture) {
  std::shared_ptr<CudaDevice> device = createDevice();
  ASSERT_TRUE(device);
  StatusOr<std::unique_ptr<Session>> session =
      open(withGpuExecutables(vectorAddModule(256)), device);
  ASSERT_EQ(messageOf(session), "<ok>");
  StatusOr<Function *> add = (*session)->lookupFunction("add");
  ASSERT_EQ(messageOf(add), "<ok>");
  EXPECT_STREQ(state().lastImage, "cubin");
  EXPECT_EQ(state().jitOptionCount, 2); // the error log and its size

  std::vector<float> a(256), b(256);
  for (int i = 0; i < 256; ++i) {
    a[i] = float(i);
    b[i] = float(1000 - 3 * i);
  }
  std::vector<int64_t> shape = {256};
  TensorView inputs[] = {view(a, shape), view(b, shape)};
  ASSERT_EQ(messageOf((*add)->call(inputs, 2)), "<ok>");
  std::vector<float> sum = result<float>(**add, 0);
  for (int i = 0; i < 256; ++i)
    ASSERT_EQ(sum[i], float(1000 - 2 * i)) << i;

  // grid = workgroup_count, block = block_size, one pointer per binding.
  FakeLaunch launch = lastLaunch();
  EXPECT_STREQ(launch.kernel, "vector_add");
  EXPECT_EQ(std::vector<unsigned>(launch.grid, launch.grid + 3),
            std::vector<unsigned>({4, 1, 1}));
  EXPECT_EQ(std::vector<unsigned>(launch.block, launch.block + 3),
            std::vector<unsigned>({64, 1, 1}));
  EXPECT_EQ(launch.sharedMemoryBytes, 0u);
  EXPECT_EQ(launch.parameterCount, 3);

  // Counted as on the CPU: two inputs, one output, one line of arena.
  EXPECT_EQ(device->getAllocator().currentBytes(), 3 * 1024u + 64);
  EXPECT_EQ(device->getAllocator().peakBytes(), 3 * 1024u + 64);
  EXPECT_EQ(state().allocatedBytes, 3 * 1024u + 64);
  EXPECT_EQ((*add)->getCallCount(), 1u);
  EXPECT_EQ((*add)->getCommandStats().size(), 1u);
  EXPECT_GE((*add)->getTotalNanoseconds(),
            (*add)->getCommandStats()[0].totalNanoseconds);
  EXPECT_EQ(state().contextDepth, 0);

  session->reset();
  EXPECT_EQ(state().allocatedBytes, 0u);
  EXPECT_EQ(state().modules, 0);
  EXPECT_EQ(state().events, 0);
  EXPECT_EQ(device->getAllocator().currentBytes(), 0u);
}

TEST_F(FakeCuda, CarriesAResultOnTheDevice) {
  // add(a, b) with its sum carried to a, device to device: a + 2b.
  std::shared_ptr<CudaDevice> device = createDevice();
  ASSERT_TRUE(device);
  StatusOr<std::unique_ptr<Session>> session =
      open(withGpuExecutables(vectorAddModule(256)), device);
  ASSERT_EQ(messageOf(session), "<ok>");
  StatusOr<Function *> add = (*session)->lookupFunction("add");
  ASSERT_EQ(messageOf(add), "<ok>");
  ASSERT_EQ(messageOf((*add)->carryResult(0, 0)), "<ok>");
  std::vector<float> a(256, 1.0f), b(256, 2.5f);
  std::vector<int64_t> shape = {256};
  TensorView first[] = {view(a, shape), view(b, shape)};
  ASSERT_EQ(messageOf((*add)->call(first, 2)), "<ok>");
  TensorView carried[] = {TensorView{DType::F32, shape.data(), 1, nullptr, 0},
                          view(b, shape)};
  ASSERT_EQ(messageOf((*add)->call(carried, 2)), "<ok>");
  EXPECT_EQ(result<float>(**add, 0), std::vector<float>(256, 6.0f));
  EXPECT_EQ(state().contextDepth, 0);
}

TEST_F(FakeCuda, StartsFromZeroedMemory) {
  // The fake fills fresh memory with 0xcd; the device zero-fills it, as the
  // CPU does: count_visits adds one to each element of its output.
  std::shared_ptr<CudaDevice> device = createDevice();
  ASSERT_TRUE(device);
  StatusOr<std::unique_ptr<Session>> session =
      open(withGpuExecutables(gridModule()), device);
  ASSERT_EQ(messageOf(session), "<ok>");
  StatusOr<Function *> visits = (*session)->lookupFunction("visits");
  ASSERT_EQ(messageOf(visits), "<ok>");
  EXPECT_EQ(result<int32_t>(**visits, 0), std::vector<int32_t>(1000, 0));
  ASSERT_EQ(messageOf((*visits)->call(nullptr, 0)), "<ok>");
  EXPECT_EQ(result<int32_t>(**visits, 0), std::vector<int32_t>(1000, 1));
}

TEST_F(FakeCuda, JitsPtxWhenNoCubinFits) {
  ScopedEnvironment blackwell("LCC_FAKE_CUDA_ARCH", "100");
  std::shared_ptr<CudaDevice> device = createDevice();
  ASSERT_TRUE(device);
  StatusOr<std::unique_ptr<Session>> session =
      open(withGpuExecutables(matmulModule()), device);
  ASSERT_EQ(messageOf(session), "<ok>");
  StatusOr<Function *> matmul = (*session)->lookupFunction("matmul");
  ASSERT_EQ(messageOf(matmul), "<ok>");
  EXPECT_STREQ(state().lastImage, "ptx");
  std::vector<float> a(8 * 6), b(6 * 12);
  for (int i = 0; i < 8 * 6; ++i)
    a[i] = float(i % 7 - 3);
  for (int i = 0; i < 6 * 12; ++i)
    b[i] = float(i % 5 - 2);
  std::vector<int64_t> shapeA = {8, 6}, shapeB = {6, 12};
  TensorView inputs[] = {view(a, shapeA), view(b, shapeB)};
  ASSERT_EQ(messageOf((*matmul)->call(inputs, 2)), "<ok>");
  std::vector<float> c = result<float>(**matmul, 0);
  for (int row = 0; row < 8; ++row)
    for (int col = 0; col < 12; ++col) {
      double expected = 0;
      for (int k = 0; k < 6; ++k)
        expected += double(a[row * 6 + k]) * b[k * 12 + col];
      ASSERT_EQ(c[row * 12 + col], expected) << row << ", " << col;
    }
  FakeLaunch launch = lastLaunch();
  EXPECT_EQ(std::vector<unsigned>(launch.grid, launch.grid + 3),
            std::vector<unsigned>({3, 2, 1}));
}

TEST_F(FakeCuda, NamesWhatTheModuleHolds) {
  ScopedEnvironment ampere("LCC_FAKE_CUDA_ARCH", "80");
  std::shared_ptr<CudaDevice> device = createDevice();
  ASSERT_TRUE(device);
  EXPECT_EQ(messageOf(open(withGpuExecutables(vectorAddModule()), device)),
            "module has no code for the cuda device sm_80: it holds x86_64 "
            "(HostSharedObject), sm_90 (Ptx), sm_90 (Cubin)");
}

TEST_F(FakeCuda, ReportsWhatThePtxCompilerSaid) {
  std::shared_ptr<CudaDevice> device = createDevice();
  ASSERT_TRUE(device);
  ModuleSpec spec = vectorAddModule();
  spec.executables = {fakeGpuExecutable(lcm::ExecutableFormat::Ptx)};
  std::string broken = ".target sm_90\n.error\n";
  spec.executables[0].data.assign(broken.begin(), broken.end());
  StatusOr<std::unique_ptr<Session>> session = open(spec, device);
  ASSERT_EQ(messageOf(session), "<ok>");
  StatusOr<Function *> add = (*session)->lookupFunction("add");
  EXPECT_EQ(messageOf(add),
            "functions[0].commands[0]: cuda device: loading executables[0] "
            "(sm_90 Ptx) failed: CUDA_ERROR_INVALID_PTX (a PTX JIT "
            "compilation failed): fake ptxas: line 2: unknown directive "
            "'.error'; fake ptxas: 1 error");
  EXPECT_EQ(add.getStatus().getCode(), StatusCode::InvalidModule);
}

TEST_F(FakeCuda, ReportsAKernelTheCodeLacks) {
  std::shared_ptr<CudaDevice> device = createDevice();
  ASSERT_TRUE(device);
  ModuleSpec spec = vectorAddModule();
  spec.executables = {fakeGpuExecutable(lcm::ExecutableFormat::Cubin)};
  spec.executables[0].entryPoints[kMatmul].name = "matmul_v2";
  StatusOr<std::unique_ptr<Session>> session = open(spec, device);
  ASSERT_EQ(messageOf(session), "<ok>");
  EXPECT_EQ(messageOf((*session)->lookupFunction("add")),
            "functions[0].commands[0]: cuda device: looking up kernel "
            "'matmul_v2' in executables[0] (sm_90 Cubin) failed: "
            "CUDA_ERROR_NOT_FOUND (named symbol not found)");
  EXPECT_EQ(state().modules, 0);
}

TEST_F(FakeCuda, AllowsKernelsTheirDynamicSharedMemory) {
  std::shared_ptr<CudaDevice> device = createDevice();
  ASSERT_TRUE(device);
  ModuleSpec spec = withGpuExecutables(affineModule());
  // scale2 fits in the default 48 KiB; add_bias needs the attribute.
  spec.executables[2].entryPoints[kScale2].sharedMemoryBytes = 48 * 1024;
  spec.executables[2].entryPoints[kAddBias].sharedMemoryBytes = 200 * 1024;
  StatusOr<std::unique_ptr<Session>> session = open(spec, device);
  ASSERT_EQ(messageOf(session), "<ok>");
  std::vector<float> bias(64, 0.5f);
  std::vector<int64_t> biasShape = {64};
  ASSERT_EQ(messageOf((*session)->bindParameter("bias", view(bias, biasShape))),
            "<ok>");
  StatusOr<Function *> affine = (*session)->lookupFunction("affine");
  ASSERT_EQ(messageOf(affine), "<ok>");
  EXPECT_EQ(maxDynamicShared("scale2"), 0);
  EXPECT_EQ(maxDynamicShared("add_bias"), 200 * 1024);
  std::vector<float> x(128, 1.0f);
  std::vector<int64_t> shape = {128};
  TensorView input = view(x, shape);
  ASSERT_EQ(messageOf((*affine)->call(&input, 1)), "<ok>");
  EXPECT_EQ(result<float>(**affine, 0), std::vector<float>(128, 2.5f));
  FakeLaunch launch = lastLaunch();
  EXPECT_STREQ(launch.kernel, "add_bias");
  EXPECT_EQ(launch.sharedMemoryBytes, 200u * 1024);
}

TEST_F(FakeCuda, RefusesKernelsTheGpuCannotRun) {
  std::shared_ptr<CudaDevice> device = createDevice();
  ASSERT_TRUE(device);
  ModuleSpec spec = withGpuExecutables(vectorAddModule());
  spec.executables[2].entryPoints[kVectorAdd].sharedMemoryBytes = 300000;
  StatusOr<std::unique_ptr<Session>> session = open(spec, device);
  ASSERT_EQ(messageOf(session), "<ok>");
  EXPECT_EQ(messageOf((*session)->lookupFunction("add")),
            "functions[0].commands[0]: executables[2] (sm_90 Cubin): entry "
            "point 'vector_add' needs 300000 bytes of dynamic shared memory "
            "per block; the cuda device sm_90 allows at most 232448");

  spec = withGpuExecutables(vectorAddModule());
  spec.executables[2].entryPoints[kGridIds].blockSize = {1, 1, 128};
  session = open(spec, device);
  ASSERT_EQ(messageOf(session), "<ok>");
  EXPECT_EQ(messageOf((*session)->lookupFunction("add")),
            "functions[0].commands[0]: executables[2] (sm_90 Cubin): entry "
            "point 'grid_ids' has block_size [1, 1, 128]; the cuda device "
            "sm_90 allows at most [1024, 1024, 64] and 1024 threads");
}

TEST_F(FakeCuda, RefusesGridsTheGpuCannotLaunch) {
  std::shared_ptr<CudaDevice> device = createDevice();
  ASSERT_TRUE(device);
  ModuleSpec spec = withGpuExecutables(vectorAddModule(64));
  spec.functions[0].commands[0].workgroupCount = {1, 70000, 1};
  StatusOr<std::unique_ptr<Session>> session = open(spec, device);
  ASSERT_EQ(messageOf(session), "<ok>");
  EXPECT_EQ(messageOf((*session)->lookupFunction("add")),
            "functions[0].commands[0] 'add' has workgroup_count [1, 70000, "
            "1]; the cuda device sm_90 launches at most [2147483647, 65535, "
            "65535] blocks");
}

TEST_F(FakeCuda, ReportsOutOfMemory) {
  ScopedEnvironment small("LCC_FAKE_CUDA_MEMORY", "2048");
  std::shared_ptr<CudaDevice> device = createDevice();
  ASSERT_TRUE(device);
  StatusOr<std::unique_ptr<Session>> session =
      open(withGpuExecutables(vectorAddModule(256)), device);
  ASSERT_EQ(messageOf(session), "<ok>");
  StatusOr<Function *> add = (*session)->lookupFunction("add");
  EXPECT_EQ(messageOf(add),
            "cuda device: cuMemAlloc of 1024 bytes for output 0 'sum' of "
            "function 'add' failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
  EXPECT_EQ(add.getStatus().getCode(), StatusCode::ResourceExhausted);
}

TEST_F(FakeCuda, ReportsAFailedLaunch) {
  std::shared_ptr<CudaDevice> device = createDevice();
  ASSERT_TRUE(device);
  StatusOr<std::unique_ptr<Session>> session =
      open(withGpuExecutables(gridModule()), device);
  ASSERT_EQ(messageOf(session), "<ok>");
  StatusOr<Function *> grid = (*session)->lookupFunction("grid");
  ASSERT_EQ(messageOf(grid), "<ok>");
  ScopedEnvironment failure("LCC_FAKE_CUDA_FAIL", "cuLaunchKernel:700");
  EXPECT_EQ(messageOf((*grid)->call(nullptr, 0)),
            "cuda device: launching 'grid_ids' (kernel 'grid_ids', grid [4, "
            "3, 2], block [64, 1, 1], 0 bytes of dynamic shared memory) "
            "failed: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was "
            "encountered)");
  ScopedEnvironment asynchronous("LCC_FAKE_CUDA_FAIL",
                                 "cuStreamSynchronize:700");
  EXPECT_EQ(messageOf((*grid)->call(nullptr, 0)),
            "cuda device: running the commands of functions[0] failed: "
            "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was "
            "encountered)");
  EXPECT_EQ(state().contextDepth, 0);
}

TEST_F(FakeCuda, GivesEachBlockItsId) {
  std::shared_ptr<CudaDevice> device = createDevice();
  ASSERT_TRUE(device);
  StatusOr<std::unique_ptr<Session>> session =
      open(withGpuExecutables(gridModule()), device);
  ASSERT_EQ(messageOf(session), "<ok>");
  StatusOr<Function *> grid = (*session)->lookupFunction("grid");
  ASSERT_EQ(messageOf(grid), "<ok>");
  ASSERT_EQ(messageOf((*grid)->call(nullptr, 0)), "<ok>");
  std::vector<int32_t> ids = result<int32_t>(**grid, 0);
  for (int z = 0; z < 2; ++z)
    for (int y = 0; y < 3; ++y)
      for (int x = 0; x < 4; ++x)
        EXPECT_EQ(ids[(z * 3 + y) * 4 + x], x + 100 * y + 10000 * z);
  // An output keeps its device buffer across calls: all ones, then twos.
  StatusOr<Function *> visits = (*session)->lookupFunction("visits");
  ASSERT_EQ(messageOf(visits), "<ok>");
  ASSERT_EQ(messageOf((*visits)->call(nullptr, 0)), "<ok>");
  EXPECT_EQ(result<int32_t>(**visits, 0), std::vector<int32_t>(1000, 1));
  ASSERT_EQ(messageOf((*visits)->call(nullptr, 0)), "<ok>");
  EXPECT_EQ(result<int32_t>(**visits, 0), std::vector<int32_t>(1000, 2));
}

TEST_F(FakeCuda, RunsCopiesAndParameters) {
  std::shared_ptr<CudaDevice> device = createDevice();
  ASSERT_TRUE(device);
  // Copies only: the module needs no code at all.
  StatusOr<std::unique_ptr<Session>> session = open(copyModule(), device);
  ASSERT_EQ(messageOf(session), "<ok>");
  StatusOr<Function *> copy = (*session)->lookupFunction("copy");
  ASSERT_EQ(messageOf(copy), "<ok>");
  std::vector<float> x(64);
  for (int i = 0; i < 64; ++i)
    x[i] = float(i * i) - 0.5f;
  std::vector<int64_t> shape = {4, 16};
  TensorView input = view(x, shape);
  ASSERT_EQ(messageOf((*copy)->call(&input, 1)), "<ok>");
  EXPECT_EQ(result<float>(**copy, 0), x);
  EXPECT_EQ(result<float>(**copy, 1),
            std::vector<float>(x.begin() + 48, x.end()));
  EXPECT_EQ((*copy)->getCommandStats()[2].name, "last_row");

  // An embedded bf16 parameter, copied to the device at session creation.
  session = open(widenModule(), device);
  ASSERT_EQ(messageOf(session), "<ok>");
  StatusOr<Function *> widen = (*session)->lookupFunction("widen");
  ASSERT_EQ(messageOf(widen), "<ok>");
  ASSERT_EQ(messageOf((*widen)->call(nullptr, 0)), "<ok>");
  EXPECT_EQ(result<uint16_t>(**widen, 0),
            std::vector<uint16_t>({0x3fc0, 0xc000, 0x3e80, 0x4040}));

  // A parameter bound from a weights file, through host staging.
  TempDir dir;
  std::vector<float> bias(64);
  for (int i = 0; i < 64; ++i)
    bias[i] = 0.5f * float(i) - 7;
  HostTensor tensor{DType::F32, {64}, toBytes(bias)};
  ASSERT_EQ(messageOf(writeSafetensors(dir.file("w.safetensors"),
                                       {{"bias", tensor}})),
            "<ok>");
  session = open(withGpuExecutables(affineModule()), device);
  ASSERT_EQ(messageOf(session), "<ok>");
  ASSERT_EQ(messageOf((*session)->bindParameters(dir.file("w.safetensors"))),
            "<ok>");
  StatusOr<Function *> affine = (*session)->lookupFunction("affine");
  ASSERT_EQ(messageOf(affine), "<ok>");
  std::vector<float> y(128);
  for (int i = 0; i < 128; ++i)
    y[i] = float(i) + 0.25f;
  std::vector<int64_t> yShape = {128};
  TensorView yInput = view(y, yShape);
  ASSERT_EQ(messageOf((*affine)->call(&yInput, 1)), "<ok>");
  std::vector<float> out = result<float>(**affine, 0);
  for (int i = 0; i < 128; ++i)
    ASSERT_EQ(out[i], 2 * y[i] + bias[i % 64]) << i;
}

// Parameters on a GPU are read and written through host staging: fresh
// weights, training steps that write them in place, reading back, and a
// checkpoint a new session resumes from.
TEST_F(FakeCuda, TrainsParametersInDeviceMemory) {
  std::shared_ptr<CudaDevice> device = createDevice();
  ASSERT_TRUE(device);
  ModuleSpec spec = trainingModule();
  ExecutableSpec gpu = fakeGpuExecutable(lcm::ExecutableFormat::Cubin);
  gpu.entryPoints = trainingExecutable().entryPoints;
  for (EntryPointSpec &entryPoint : gpu.entryPoints)
    entryPoint.blockSize = {64, 1, 1};
  spec.executables.push_back(gpu);
  StatusOr<std::unique_ptr<Session>> session = open(spec, device);
  ASSERT_EQ(messageOf(session), "<ok>");
  ASSERT_EQ(messageOf((*session)->initializeParameters(5)), "<ok>");
  std::vector<uint8_t> bytes = buildModule(spec);
  StatusOr<std::shared_ptr<const Module>> module =
      loadModuleFromMemory(bytes.data(), bytes.size());
  ASSERT_EQ(messageOf(module), "<ok>");
  StatusOr<std::vector<NamedTensor>> fresh = initializeParameters(**module, 5);
  ASSERT_EQ(messageOf(fresh), "<ok>");
  std::vector<uint8_t> w, steps;
  ASSERT_EQ(messageOf((*session)->readParameter(0, w)), "<ok>");
  EXPECT_EQ(w, (*fresh)[0].tensor.data);
  ASSERT_EQ(messageOf((*session)->readParameter(1, steps)), "<ok>");
  EXPECT_EQ(steps, std::vector<uint8_t>(4, 0));

  StatusOr<Function *> step = (*session)->lookupFunction("train_step");
  ASSERT_EQ(messageOf(step), "<ok>");
  std::vector<float> x(64, 0.25f);
  std::vector<int32_t> weight = {1, 2, 3, 0};
  std::vector<int64_t> xShape = {4, 16}, weightShape = {4};
  TensorView inputs[] = {view(x, xShape),
                         view(weight, weightShape, DType::I32)};
  for (int call = 0; call < 2; ++call)
    ASSERT_EQ(messageOf((*step)->call(inputs, 2)), "<ok>");
  std::vector<uint8_t> trained;
  ASSERT_EQ(messageOf((*session)->readParameter(0, trained)), "<ok>");
  EXPECT_NE(trained, w);
  ASSERT_EQ(messageOf((*session)->readParameter(1, steps)), "<ok>");
  EXPECT_EQ(steps, toBytes({2}));

  TempDir dir;
  ASSERT_EQ(messageOf((*session)->writeParameters(dir.file("c.safetensors"))),
            "<ok>");
  StatusOr<std::unique_ptr<Session>> resumed = open(spec, device);
  ASSERT_EQ(messageOf(resumed), "<ok>");
  ASSERT_EQ(messageOf((*resumed)->bindParameters(dir.file("c.safetensors"))),
            "<ok>");
  std::vector<uint8_t> again;
  ASSERT_EQ(messageOf((*resumed)->readParameter(0, again)), "<ok>");
  EXPECT_EQ(again, trained);
  ASSERT_EQ(messageOf((*resumed)->readParameter(1, again)), "<ok>");
  EXPECT_EQ(again, toBytes({2}));
}

// The planner may overlap a copy's ranges, as memmove allows; a device
// copy may not, so the device goes through a buffer of its own.
TEST_F(FakeCuda, CopiesBetweenOverlappingRanges) {
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
  CommandSpec shift = in;
  shift.name = "shift";
  shift.source = {1, 0, 192}; // elements 0..47 move to 16..63
  shift.target = {1, 64, 192};
  CommandSpec out = in;
  out.name = "out";
  out.source = {1, 0, 256};
  out.target = {2, 0, 256};
  function.commands = {in, shift, out};
  ModuleSpec spec;
  spec.functions = {function};

  std::vector<float> x(64);
  for (int i = 0; i < 64; ++i)
    x[i] = float(i);
  std::vector<float> expected = x;
  std::memmove(expected.data() + 16, expected.data(), 192);
  std::vector<int64_t> shape = {64};
  TensorView input = view(x, shape);

  std::shared_ptr<CudaDevice> device = createDevice();
  ASSERT_TRUE(device);
  StatusOr<std::unique_ptr<Session>> session = open(spec, device);
  ASSERT_EQ(messageOf(session), "<ok>");
  StatusOr<Function *> run = (*session)->lookupFunction("shift");
  ASSERT_EQ(messageOf(run), "<ok>");
  ASSERT_EQ(messageOf((*run)->call(&input, 1)), "<ok>");
  EXPECT_EQ(result<float>(**run, 0), expected);
  // Input, output, arena and the 192-byte bounce buffer.
  EXPECT_EQ(device->getAllocator().peakBytes(), 256u * 3 + 192);
}

//===----------------------------------------------------------------------===//
// A real GPU
//===----------------------------------------------------------------------===//

std::string readText(const char *path) {
  std::ifstream file(path);
  return std::string((std::istreambuf_iterator<char>(file)),
                     std::istreambuf_iterator<char>());
}

/// gpu_kernels.ptx: "add" (vector_add over 1024 floats, 64 threads per
/// block) and "reverse" (shared_reverse, 100 KiB of shared memory).
ModuleSpec ptxModule() {
  std::string ptx = readText(LCC_TEST_GPU_KERNELS_PATH);
  ExecutableSpec executable;
  executable.format = lcm::ExecutableFormat::Ptx;
  executable.target = "sm_52";
  executable.entryPoints = {{"vector_add", 3, {64, 1, 1}, 0},
                            {"shared_reverse", 2, {256, 1, 1}, 100 * 1024}};
  executable.data.assign(ptx.begin(), ptx.end());

  FunctionSpec add;
  add.name = "add";
  add.inputs = {{"a", DType::F32, {1024}}, {"b", DType::F32, {1024}}};
  add.outputs = {{"sum", DType::F32, {1024}}};
  add.buffers = {{lcm::BufferKind::Input, 0, 4096, 0},
                 {lcm::BufferKind::Input, 1, 4096, 0},
                 {lcm::BufferKind::Output, 0, 4096, 0}};
  CommandSpec dispatch;
  dispatch.name = "vector_add";
  dispatch.entryPoint = 0;
  dispatch.workgroupCount = {16, 1, 1};
  dispatch.bindings = {{0, 0, 4096}, {1, 0, 4096}, {2, 0, 4096}};
  add.commands = {dispatch};

  FunctionSpec reverse;
  reverse.name = "reverse";
  reverse.inputs = {{"x", DType::F32, {1024}}};
  reverse.outputs = {{"y", DType::F32, {1024}}};
  reverse.arenaSize = 4096;
  reverse.buffers = {{lcm::BufferKind::Input, 0, 4096, 0},
                     {lcm::BufferKind::Transient, 0, 4096, 0},
                     {lcm::BufferKind::Output, 0, 4096, 0}};
  CommandSpec shared;
  shared.name = "shared_reverse";
  shared.entryPoint = 1;
  shared.workgroupCount = {4, 1, 1};
  shared.bindings = {{0, 0, 4096}, {1, 0, 4096}};
  CommandSpec copy;
  copy.kind = lcm::CommandKind::Copy;
  copy.name = "to_output";
  copy.source = {1, 0, 4096};
  copy.target = {2, 0, 4096};
  reverse.commands = {shared, copy};

  ModuleSpec module;
  module.functions = {add, reverse};
  module.executables = {executable};
  return module;
}

TEST(CudaGpu, RunsPtxOnTheGpu) {
  ScopedEnvironment driver("LCC_CUDA_DRIVER", nullptr);
  StatusOr<std::shared_ptr<CudaDevice>> device = CudaDevice::create();
  if (!device.ok())
    GTEST_SKIP() << "no GPU to run on: " << device.getStatus().getMessage();
  std::vector<uint8_t> bytes = buildModule(ptxModule());
  StatusOr<std::shared_ptr<const Module>> module =
      loadModuleFromMemory(bytes.data(), bytes.size());
  ASSERT_EQ(messageOf(module), "<ok>");
  StatusOr<std::unique_ptr<Session>> session =
      Session::create(*device, module.take());
  ASSERT_EQ(messageOf(session), "<ok>");

  StatusOr<Function *> add = (*session)->lookupFunction("add");
  ASSERT_EQ(messageOf(add), "<ok>");
  std::vector<float> a(1024), b(1024);
  for (int i = 0; i < 1024; ++i) {
    a[i] = float(i) * 0.5f;
    b[i] = float(3 - i);
  }
  std::vector<int64_t> shape = {1024};
  TensorView inputs[] = {view(a, shape), view(b, shape)};
  ASSERT_EQ(messageOf((*add)->call(inputs, 2)), "<ok>");
  std::vector<float> sum = result<float>(**add, 0);
  for (int i = 0; i < 1024; ++i)
    ASSERT_EQ(sum[i], a[i] + b[i]) << i;
  EXPECT_GT((*add)->getCommandStats()[0].totalNanoseconds, 0u);

  StatusOr<Function *> reverse = (*session)->lookupFunction("reverse");
  ASSERT_EQ(messageOf(reverse), "<ok>");
  ASSERT_EQ(messageOf((*reverse)->call(inputs, 1)), "<ok>");
  std::vector<float> reversed = result<float>(**reverse, 0);
  for (int i = 0; i < 1024; ++i)
    ASSERT_EQ(reversed[i], a[i / 256 * 256 + 255 - i % 256]) << i;
  EXPECT_EQ((*device)->getAllocator().peakBytes(), 6u * 4096 + 64);
}

} // namespace
