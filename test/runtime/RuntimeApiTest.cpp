//===- RuntimeApiTest.cpp - the public C API ------------------------------===//

#include "lcc/runtime.h"

#include "TestModules.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include <cmath>

using namespace lcc::test;

namespace {

/// The message of `status` (freed), or "<ok>".
std::string take(LccStatus status) {
  std::string message = status ? lccStatusGetMessage(status) : "<ok>";
  lccStatusDestroy(status);
  return message;
}

TEST(RuntimeApi, RunsAModuleFromAFile) {
  TempDir dir;
  writeBytes(dir.file("add.lcm"), buildModule(vectorAddModule(128)));
  LccModule module = nullptr;
  ASSERT_EQ(take(lccModuleLoadFile(dir.file("add.lcm").c_str(), &module)),
            "<ok>");
  EXPECT_EQ(lccModuleGetFunctionCount(module), 1u);
  EXPECT_STREQ(lccModuleGetFunctionName(module, 0), "add");
  LccDevice device = nullptr;
  ASSERT_EQ(take(lccDeviceCreate("cpu", 3, &device)), "<ok>");
  EXPECT_EQ(lccDeviceGetThreadCount(device), 3u);
  EXPECT_STREQ(lccDeviceGetKind(device), "cpu");
  EXPECT_STREQ(lccDeviceGetName(device), "host");
  EXPECT_STREQ(lccDeviceGetArchitecture(device), "x86_64");
  LccSession session = nullptr;
  ASSERT_EQ(take(lccSessionCreate(device, module, &session)), "<ok>");
  // The session keeps the module and device alive.
  lccModuleDestroy(module);
  LccFunction function = nullptr;
  ASSERT_EQ(take(lccSessionLookupFunction(session, nullptr, &function)),
            "<ok>");
  EXPECT_STREQ(lccFunctionGetName(function), "add");
  ASSERT_EQ(lccFunctionGetInputCount(function), 2u);
  LccTensorView signature;
  lccFunctionGetInput(function, 1, &signature);
  EXPECT_STREQ(signature.name, "b");
  EXPECT_EQ(signature.dtype, LCC_DTYPE_F32);
  ASSERT_EQ(signature.rank, 1u);
  EXPECT_EQ(signature.shape[0], 128);
  EXPECT_EQ(signature.size, 512u);
  EXPECT_EQ(signature.data, nullptr);
  lccFunctionGetOutput(function, 0, &signature);
  EXPECT_STREQ(signature.name, "sum");
  EXPECT_EQ(signature.data, nullptr);

  std::vector<float> a(128, 0.5f), b(128);
  for (int i = 0; i < 128; ++i)
    b[i] = float(i);
  int64_t shape[] = {128};
  LccTensorView inputs[] = {{nullptr, LCC_DTYPE_F32, 1, shape, a.data(), 512},
                            {nullptr, LCC_DTYPE_F32, 1, shape, b.data(), 512}};
  ASSERT_EQ(take(lccFunctionCall(function, inputs, 2)), "<ok>");
  ASSERT_EQ(take(lccFunctionCall(function, inputs, 2)), "<ok>");
  LccTensorView result;
  lccFunctionGetResult(function, 0, &result);
  EXPECT_STREQ(result.name, "sum");
  ASSERT_EQ(result.size, 512u);
  for (uint64_t i = 0; i < 128; ++i)
    ASSERT_EQ(lccTensorGetElement(&result, i), double(i) + 0.5);

  EXPECT_EQ(lccFunctionGetCallCount(function), 2u);
  EXPECT_EQ(lccFunctionGetArenaBytes(function), 0u);
  ASSERT_EQ(lccFunctionGetCommandCount(function), 1u);
  LccCommandStats stats;
  lccFunctionGetCommandStats(function, 0, &stats);
  EXPECT_STREQ(stats.name, "add");
  EXPECT_STREQ(stats.kind, "dispatch");
  EXPECT_GT(stats.totalNanoseconds, 0u);
  // This module does not count its FLOPs (lcc's do: lcc-run's report).
  EXPECT_EQ(lccFunctionGetCommandFlops(function, 0), 0.0);
  EXPECT_EQ(lccFunctionGetCommandFlops(function, 1), 0.0);
  EXPECT_GE(lccFunctionGetTotalNanoseconds(function), stats.totalNanoseconds);
  lccFunctionResetStats(function);
  EXPECT_EQ(lccFunctionGetCallCount(function), 0u);
  // Inputs, output and the (empty) arena's one line.
  EXPECT_EQ(lccDeviceGetCurrentBytes(device), 3 * 512u + 64);
  EXPECT_EQ(lccDeviceGetPeakBytes(device), 3 * 512u + 64);

  inputs[1].dtype = LCC_DTYPE_I32;
  LccStatus status = lccFunctionCall(function, inputs, 2);
  EXPECT_EQ(lccStatusGetCode(status), LCC_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(take(status),
            "input 1 'b': expected shape [128] f32, got [128] i32");
  lccSessionDestroy(session);
  EXPECT_EQ(lccDeviceGetCurrentBytes(device), 0u);
  lccDeviceDestroy(device);
}

TEST(RuntimeApi, ReportsErrorsAsStatuses) {
  TempDir dir;
  LccModule module = nullptr;
  LccStatus status =
      lccModuleLoadFile(dir.file("missing.lcm").c_str(), &module);
  EXPECT_EQ(lccStatusGetCode(status), LCC_STATUS_NOT_FOUND);
  EXPECT_EQ(take(status), "cannot open '" + dir.file("missing.lcm") +
                              "': No such file or directory");
  EXPECT_EQ(module, nullptr);

  status = lccModuleLoadMemory("LCM", 3, &module);
  EXPECT_EQ(lccStatusGetCode(status), LCC_STATUS_INVALID_MODULE);
  EXPECT_EQ(take(status), "file of 3 bytes is too small to be an lcc module");

  LccDevice device = nullptr;
  {
    // No driver at all: one line that says why.
    ScopedEnvironment driver("LCC_CUDA_DRIVER", "/nonexistent/libcuda.so.1");
    status = lccDeviceCreate("cuda", 0, &device);
    EXPECT_EQ(lccStatusGetCode(status), LCC_STATUS_UNAVAILABLE);
    EXPECT_EQ(take(status),
              "cuda device unavailable: cannot load /nonexistent/libcuda.so.1, "
              "named by LCC_CUDA_DRIVER (/nonexistent/libcuda.so.1: cannot "
              "open shared object file: No such file or directory)");
    EXPECT_EQ(device, nullptr);
  }
  EXPECT_EQ(take(lccDeviceCreate("tpu", 0, &device)),
            "unknown device 'tpu'; expected 'cpu', 'cuda' or 'cuda-emulator'");
  EXPECT_EQ(take(lccDeviceCreate("cpu", 100000, &device)),
            "cannot use 100000 threads; at most 4096");
  EXPECT_EQ(take(lccDeviceCreate(nullptr, 0, &device)),
            "lccDeviceCreate: kind is NULL");
  EXPECT_EQ(take(lccModuleLoadFile("x.lcm", nullptr)),
            "lccModuleLoadFile: module is NULL");
  EXPECT_EQ(lccStatusGetCode(nullptr), LCC_STATUS_OK);
  EXPECT_STREQ(lccStatusGetMessage(nullptr), "");
  lccStatusDestroy(nullptr);
}

// The cuda device through the C API, on the tests' fake driver
// (FakeCudaDriver.c): results come back in host memory.
TEST(RuntimeApi, RunsAModuleOnTheCudaDevice) {
  ScopedEnvironment driver("LCC_CUDA_DRIVER", LCC_FAKE_CUDA_DRIVER_PATH);
  ScopedEnvironment arch("LCC_FAKE_CUDA_ARCH", nullptr);
  std::vector<uint8_t> bytes =
      buildModule(withGpuExecutables(vectorAddModule(128)));
  LccModule module = nullptr;
  ASSERT_EQ(take(lccModuleLoadMemory(bytes.data(), bytes.size(), &module)),
            "<ok>");
  LccDevice device = nullptr;
  ASSERT_EQ(take(lccDeviceCreate("cuda", 0, &device)), "<ok>");
  EXPECT_STREQ(lccDeviceGetKind(device), "cuda");
  EXPECT_STREQ(lccDeviceGetName(device), "Fake CUDA Device");
  EXPECT_STREQ(lccDeviceGetArchitecture(device), "sm_90");
  EXPECT_EQ(lccDeviceGetThreadCount(device), 0u);
  LccSession session = nullptr;
  ASSERT_EQ(take(lccSessionCreate(device, module, &session)), "<ok>");
  LccFunction function = nullptr;
  ASSERT_EQ(take(lccSessionLookupFunction(session, "add", &function)), "<ok>");
  std::vector<float> a(128, 0.5f), b(128);
  for (int i = 0; i < 128; ++i)
    b[i] = float(i);
  int64_t shape[] = {128};
  LccTensorView inputs[] = {{nullptr, LCC_DTYPE_F32, 1, shape, a.data(), 512},
                            {nullptr, LCC_DTYPE_F32, 1, shape, b.data(), 512}};
  ASSERT_EQ(take(lccFunctionCall(function, inputs, 2)), "<ok>");
  LccTensorView result;
  lccFunctionGetResult(function, 0, &result);
  ASSERT_EQ(result.size, 512u);
  for (uint64_t i = 0; i < 128; ++i)
    ASSERT_EQ(lccTensorGetElement(&result, i), double(i) + 0.5);
  EXPECT_EQ(lccDeviceGetPeakBytes(device), 3 * 512u + 64);
  lccSessionDestroy(session);
  EXPECT_EQ(lccDeviceGetCurrentBytes(device), 0u);

  // A module without code for the GPU fails when the session is made.
  std::vector<uint8_t> cpuOnly = buildModule(vectorAddModule(128));
  LccModule other = nullptr;
  ASSERT_EQ(take(lccModuleLoadMemory(cpuOnly.data(), cpuOnly.size(), &other)),
            "<ok>");
  LccStatus status = lccSessionCreate(device, other, &session);
  EXPECT_EQ(lccStatusGetCode(status), LCC_STATUS_UNAVAILABLE);
  EXPECT_EQ(take(status), "module has no code for the cuda device sm_90: it "
                          "holds x86_64 (HostSharedObject)");
  lccModuleDestroy(other);
  lccDeviceDestroy(device);
  lccModuleDestroy(module);
}

TEST(RuntimeApi, BindsParametersAndWritesInitialOnes) {
  TempDir dir;
  std::vector<uint8_t> bytes = buildModule(affineModule());
  LccModule module = nullptr;
  ASSERT_EQ(take(lccModuleLoadMemory(bytes.data(), bytes.size(), &module)),
            "<ok>");
  EXPECT_EQ(lccModuleGetParameterCount(module), 1u);
  std::string weights = dir.file("init.safetensors");
  ASSERT_EQ(take(lccModuleWriteInitialParameters(module, 11, weights.c_str())),
            "<ok>");
  LccDevice device = nullptr;
  LccSession session = nullptr;
  ASSERT_EQ(take(lccDeviceCreate("cpu", 1, &device)), "<ok>");
  ASSERT_EQ(take(lccSessionCreate(device, module, &session)), "<ok>");
  ASSERT_EQ(take(lccSessionBindParametersFile(session, weights.c_str())),
            "<ok>");
  LccFunction function = nullptr;
  ASSERT_EQ(take(lccSessionLookupFunction(session, "affine", &function)),
            "<ok>");
  std::vector<float> x(128, 0.0f);
  int64_t shape[] = {128};
  LccTensorView input = {"x", LCC_DTYPE_F32, 1, shape, x.data(), 512};
  ASSERT_EQ(take(lccFunctionCall(function, &input, 1)), "<ok>");
  // With x = 0 the result is the bias: the initial N(0, 0.5^2) values.
  LccTensorView result;
  lccFunctionGetResult(function, 0, &result);
  double squares = 0;
  for (uint64_t i = 0; i < 64; ++i) {
    EXPECT_EQ(lccTensorGetElement(&result, i),
              lccTensorGetElement(&result, i + 64));
    squares +=
        lccTensorGetElement(&result, i) * lccTensorGetElement(&result, i);
  }
  EXPECT_NEAR(std::sqrt(squares / 64), 0.5, 0.2);

  float bias[64] = {};
  int64_t biasShape[] = {64};
  LccTensorView value = {nullptr, LCC_DTYPE_F32, 1, biasShape, bias, 256};
  ASSERT_EQ(take(lccSessionBindParameter(session, "bias", &value)), "<ok>");
  ASSERT_EQ(take(lccFunctionCall(function, &input, 1)), "<ok>");
  lccFunctionGetResult(function, 0, &result);
  EXPECT_EQ(lccTensorGetElement(&result, 5), 0.0);
  EXPECT_EQ(take(lccSessionLookupFunction(session, "nope", &function)),
            "no function 'nope' in the module; it has 'affine'");
  lccSessionDestroy(session);
  lccDeviceDestroy(device);
  lccModuleDestroy(module);
}

// A training step through the C API: state, fresh weights, reading
// parameters back, a checkpoint and a results file.
TEST(RuntimeApi, TrainsAndWritesCheckpoints) {
  TempDir dir;
  std::vector<uint8_t> bytes = buildModule(trainingModule());
  LccModule module = nullptr;
  ASSERT_EQ(take(lccModuleLoadMemory(bytes.data(), bytes.size(), &module)),
            "<ok>");
  ASSERT_EQ(lccModuleGetParameterCount(module), 2u);
  EXPECT_EQ(lccModuleIsStateParameter(module, 0), 0);
  EXPECT_EQ(lccModuleIsStateParameter(module, 1), 1);
  // The weights alone: what a fresh weights file holds.
  EXPECT_EQ(lccModuleGetParameterBytes(module), 64u);
  LccDevice device = nullptr;
  LccSession session = nullptr;
  ASSERT_EQ(take(lccDeviceCreate("cpu", 1, &device)), "<ok>");
  ASSERT_EQ(take(lccSessionCreate(device, module, &session)), "<ok>");
  ASSERT_EQ(lccSessionGetParameterCount(session), 2u);
  LccTensorView value;
  EXPECT_EQ(take(lccSessionGetParameter(session, 0, &value)),
            "parameter 'w' is not bound; give a weights file (--params)");
  EXPECT_EQ(take(lccSessionGetParameter(session, 2, &value)),
            "lccSessionGetParameter: parameter 2 does not exist; the module "
            "has 2");
  ASSERT_EQ(take(lccSessionInitializeParameters(session, 3)), "<ok>");

  // Fresh weights are those of the initial weights file for the seed.
  std::string initial = dir.file("init.safetensors");
  ASSERT_EQ(take(lccModuleWriteInitialParameters(module, 3, initial.c_str())),
            "<ok>");
  LccSession other = nullptr;
  ASSERT_EQ(take(lccSessionCreate(device, module, &other)), "<ok>");
  ASSERT_EQ(take(lccSessionBindParametersFile(other, initial.c_str())), "<ok>");
  ASSERT_EQ(take(lccSessionGetParameter(other, 0, &value)), "<ok>");
  std::vector<uint8_t> fromFile((const uint8_t *)value.data,
                                (const uint8_t *)value.data + value.size);
  lccSessionDestroy(other);
  ASSERT_EQ(take(lccSessionGetParameter(session, 0, &value)), "<ok>");
  EXPECT_STREQ(value.name, "w");
  EXPECT_EQ(value.dtype, LCC_DTYPE_F32);
  ASSERT_EQ(value.rank, 1u);
  EXPECT_EQ(value.shape[0], 16);
  ASSERT_EQ(value.size, 64u);
  EXPECT_EQ(std::memcmp(value.data, fromFile.data(), 64), 0);

  LccFunction step = nullptr;
  ASSERT_EQ(take(lccSessionLookupFunction(session, "train_step", &step)),
            "<ok>");
  std::vector<float> x(64, 0.5f);
  int32_t weight[4] = {1, 1, 1, 1};
  int64_t xShape[] = {4, 16}, weightShape[] = {4};
  LccTensorView inputs[] = {
      {nullptr, LCC_DTYPE_F32, 2, xShape, x.data(), 256},
      {nullptr, LCC_DTYPE_I32, 1, weightShape, weight, 16}};
  for (int call = 0; call < 3; ++call)
    ASSERT_EQ(take(lccFunctionCall(step, inputs, 2)), "<ok>");
  ASSERT_EQ(take(lccSessionGetParameter(session, 1, &value)), "<ok>");
  EXPECT_STREQ(value.name, "optimizer.steps");
  EXPECT_EQ(lccTensorGetElement(&value, 0), 3.0);

  std::string checkpoint = dir.file("checkpoint.safetensors");
  ASSERT_EQ(take(lccSessionWriteParametersFile(session, checkpoint.c_str())),
            "<ok>");
  ASSERT_EQ(take(lccSessionCreate(device, module, &other)), "<ok>");
  ASSERT_EQ(take(lccSessionBindParametersFile(other, checkpoint.c_str())),
            "<ok>");
  ASSERT_EQ(take(lccSessionGetParameter(other, 1, &value)), "<ok>");
  EXPECT_EQ(lccTensorGetElement(&value, 0), 3.0);
  lccSessionDestroy(other);

  // The gradients function's results, by name, in one file.
  LccFunction gradients = nullptr;
  ASSERT_EQ(
      take(lccSessionLookupFunction(session, "loss_gradients", &gradients)),
      "<ok>");
  ASSERT_EQ(take(lccFunctionCall(gradients, inputs, 2)), "<ok>");
  LccTensorView results[2];
  lccFunctionGetResult(gradients, 0, &results[0]);
  lccFunctionGetResult(gradients, 1, &results[1]);
  std::string resultsFile = dir.file("results.safetensors");
  ASSERT_EQ(take(lccSafetensorsWrite(resultsFile.c_str(), results, 2)), "<ok>");
  ASSERT_EQ(take(lccSessionBindParametersFile(session, resultsFile.c_str())),
            "<ok>");
  ASSERT_EQ(take(lccSessionGetParameter(session, 0, &value)), "<ok>");
  EXPECT_EQ(std::memcmp(value.data, results[1].data, 64), 0);
  results[1].name = "loss";
  EXPECT_EQ(take(lccSafetensorsWrite(resultsFile.c_str(), results, 2)),
            "cannot write '" + resultsFile + "': tensor 'loss' appears twice");
  results[1].name = nullptr;
  EXPECT_EQ(take(lccSafetensorsWrite(resultsFile.c_str(), results, 2)),
            "lccSafetensorsWrite: tensor 1 has no name");
  EXPECT_EQ(take(lccSessionWriteParametersFile(session, nullptr)),
            "lccSessionWriteParametersFile: path is NULL");
  lccSessionDestroy(session);
  lccDeviceDestroy(device);
  lccModuleDestroy(module);
}

TEST(RuntimeApi, ReadsAndWritesNpy) {
  TempDir dir;
  uint16_t halves[] = {0x3c00, 0xc000, 0x3800};
  int64_t shape[] = {3};
  LccTensorView tensor = {nullptr, LCC_DTYPE_F16, 1, shape, halves, 6};
  std::string path = dir.file("h.npy");
  ASSERT_EQ(take(lccNpyWrite(path.c_str(), &tensor)), "<ok>");
  LccHostTensor read = nullptr;
  ASSERT_EQ(take(lccNpyRead(path.c_str(), &read)), "<ok>");
  LccTensorView view;
  lccHostTensorGetView(read, &view);
  EXPECT_EQ(view.dtype, LCC_DTYPE_F16);
  ASSERT_EQ(view.rank, 1u);
  EXPECT_EQ(view.shape[0], 3);
  EXPECT_EQ(lccTensorGetElement(&view, 0), 1.0);
  EXPECT_EQ(lccTensorGetElement(&view, 1), -2.0);
  EXPECT_EQ(lccTensorGetElement(&view, 2), 0.5);
  lccHostTensorDestroy(read);
  tensor.size = 4;
  EXPECT_EQ(take(lccNpyWrite(path.c_str(), &tensor)),
            "lccNpyWrite: 4 bytes of data do not hold a [3] f16");
  EXPECT_STREQ(lccDTypeGetName(LCC_DTYPE_BF16), "bf16");
  EXPECT_EQ(lccDTypeGetSize(LCC_DTYPE_I64), 8u);
  EXPECT_EQ(lccDTypeGetSize(LccDType(17)), 0u);
}

// A C caller may put any integer in an LccDType. One the schema lacks is
// refused, never wrapped onto a valid dtype (259 is i32 modulo 256) nor read
// as an enum outside its values (undefined behaviour UBSan reported).
TEST(RuntimeApi, RejectsDTypesTheSchemaLacks) {
  TempDir dir;
  int64_t shape[] = {3};
  float data[3] = {1, 2, 3};
  LccTensorView tensor = {nullptr, LCC_DTYPE_F32, 1, shape, data, 12};
  for (int raw : {259, 5, -1, 1 << 20}) {
    std::memcpy(&tensor.dtype, &raw, sizeof(raw));
    std::string path = dir.file("t.npy");
    EXPECT_EQ(take(lccNpyWrite(path.c_str(), &tensor)),
              "lccNpyWrite: 12 bytes of data do not hold a [3] tensor of "
              "unknown dtype");
    // (lccDTypeGetName and lccDTypeGetSize take the enum by value: loading
    // 259 as an LccDType in C++ is itself undefined, so CApiExample.c, a C
    // program, checks those.)
    EXPECT_TRUE(std::isnan(lccTensorGetElement(&tensor, 0)));
  }
}

} // namespace
