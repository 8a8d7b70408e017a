//===- SessionTest.cpp - running functions end to end ---------------------===//
//
// Modules built around kernels.c run through the whole runtime (loader,
// session, CPU device) and give exactly the numbers a reference computes.
//
//===----------------------------------------------------------------------===//

#include "module/Session.h"
#include "devices/cpu/CpuDevice.h"
#include "formats/Safetensors.h"

#include "TestModules.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

using namespace lcc;
using namespace lcc::runtime;
using namespace lcc::test;

namespace {

/// A session over `spec` on a CPU device of `threads` threads.
struct Loaded {
  std::shared_ptr<CpuDevice> device;
  std::unique_ptr<Session> session;
};

Loaded load(const ModuleSpec &spec, unsigned threads = 2) {
  std::vector<uint8_t> bytes = buildModule(spec);
  StatusOr<std::shared_ptr<const Module>> module =
      loadModuleFromMemory(bytes.data(), bytes.size());
  EXPECT_EQ(messageOf(module), "<ok>");
  Loaded loaded;
  loaded.device = std::make_shared<CpuDevice>(threads);
  StatusOr<std::unique_ptr<Session>> session =
      Session::create(loaded.device, module.take());
  EXPECT_EQ(messageOf(session), "<ok>");
  loaded.session = session.take();
  return loaded;
}

Function *lookup(Session &session, const std::string &name) {
  StatusOr<Function *> function = session.lookupFunction(name);
  EXPECT_EQ(messageOf(function), "<ok>");
  return function.ok() ? *function : nullptr;
}

/// A view of `values` with `shape` (owned by the caller).
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

TEST(Session, AddsVectorsExactly) {
  for (unsigned threads : {1u, 4u}) {
    Loaded loaded = load(vectorAddModule(256), threads);
    Function *add = lookup(*loaded.session, "add");
    ASSERT_TRUE(add);
    std::vector<float> a(256), b(256);
    for (int i = 0; i < 256; ++i) {
      a[i] = float(i);
      b[i] = float(1000 - 3 * i);
    }
    std::vector<int64_t> shape = {256};
    TensorView inputs[] = {view(a, shape), view(b, shape)};
    ASSERT_EQ(messageOf(add->call(inputs, 2)), "<ok>");
    std::vector<float> sum = result<float>(*add, 0);
    for (int i = 0; i < 256; ++i)
      ASSERT_EQ(sum[i], float(1000 - 2 * i)) << i;
    TensorView out = add->getResult(0);
    EXPECT_EQ(out.dtype, DType::F32);
    EXPECT_EQ(std::vector<int64_t>(out.shape, out.shape + out.rank), shape);
  }
}

TEST(Session, MultipliesMatricesOverA2DGrid) {
  Loaded loaded = load(matmulModule());
  Function *matmul = lookup(*loaded.session, "matmul");
  ASSERT_TRUE(matmul);
  // Small integers: every product and sum is exact in f32.
  std::vector<float> a(8 * 6), b(6 * 12);
  for (int i = 0; i < 8 * 6; ++i)
    a[i] = float(i % 7 - 3);
  for (int i = 0; i < 6 * 12; ++i)
    b[i] = float(i % 5 - 2);
  std::vector<int64_t> shapeA = {8, 6}, shapeB = {6, 12};
  TensorView inputs[] = {view(a, shapeA), view(b, shapeB)};
  ASSERT_EQ(messageOf(matmul->call(inputs, 2)), "<ok>");
  std::vector<float> c = result<float>(*matmul, 0);
  for (int row = 0; row < 8; ++row)
    for (int col = 0; col < 12; ++col) {
      double expected = 0;
      for (int k = 0; k < 6; ++k)
        expected += double(a[row * 6 + k]) * b[k * 12 + col];
      ASSERT_EQ(c[row * 12 + col], expected) << row << ", " << col;
    }
}

std::vector<float> biasValues() {
  std::vector<float> bias(64);
  for (int i = 0; i < 64; ++i)
    bias[i] = 0.5f * float(i) - 7;
  return bias;
}

void expectAffine(Function &affine, float offset) {
  std::vector<float> x(128);
  for (int i = 0; i < 128; ++i)
    x[i] = float(i) + offset;
  std::vector<int64_t> shape = {128};
  TensorView input = view(x, shape);
  ASSERT_EQ(messageOf(affine.call(&input, 1)), "<ok>");
  std::vector<float> y = result<float>(affine, 0);
  std::vector<float> bias = biasValues();
  for (int i = 0; i < 128; ++i)
    ASSERT_EQ(y[i], 2 * x[i] + bias[i % 64]) << i;
}

TEST(Session, RunsThroughATransientWithAnEmbeddedParameter) {
  std::vector<float> bias = biasValues();
  Loaded loaded = load(affineModule(&bias));
  Function *affine = lookup(*loaded.session, "affine");
  ASSERT_TRUE(affine);
  expectAffine(*affine, 0.25f);
}

TEST(Session, ReusesTheArenaAcrossCalls) {
  std::vector<float> bias = biasValues();
  Loaded loaded = load(affineModule(&bias));
  Function *affine = lookup(*loaded.session, "affine");
  ASSERT_TRUE(affine);
  EXPECT_EQ(affine->getArenaBytes(), 576u);
  uint64_t current = loaded.device->getAllocator().currentBytes();
  uint64_t peak = loaded.device->getAllocator().peakBytes();
  // Parameter 256 + input 512 + output 512 + arena 576.
  EXPECT_EQ(current, 256u + 512 + 512 + 576);
  EXPECT_EQ(peak, current);
  for (int call = 0; call < 5; ++call) {
    expectAffine(*affine, float(call));
    EXPECT_EQ(loaded.device->getAllocator().currentBytes(), current);
    EXPECT_EQ(loaded.device->getAllocator().peakBytes(), peak);
  }
  EXPECT_EQ(affine->getCallCount(), 5u);
  // A second lookup returns the same function, allocating nothing.
  EXPECT_EQ(lookup(*loaded.session, "affine"), affine);
  EXPECT_EQ(loaded.device->getAllocator().peakBytes(), peak);
}

TEST(Session, BindsParametersFromSafetensors) {
  TempDir dir;
  std::vector<float> bias = biasValues();
  HostTensor tensor{DType::F32, {64}, toBytes(bias)};
  HostTensor unused{DType::I32, {2}, std::vector<uint8_t>(8)};
  ASSERT_EQ(messageOf(writeSafetensors(dir.file("w.safetensors"),
                                       {{"unused", unused}, {"bias", tensor}})),
            "<ok>");
  Loaded loaded = load(affineModule());
  Function *affine = lookup(*loaded.session, "affine");
  ASSERT_TRUE(affine);
  std::vector<float> x(128, 1);
  std::vector<int64_t> shape = {128};
  TensorView input = view(x, shape);
  EXPECT_EQ(messageOf(affine->call(&input, 1)),
            "parameter 'bias' of function 'affine' is not bound; give a "
            "weights file (--params)");
  ASSERT_EQ(
      messageOf(loaded.session->bindParameters(dir.file("w.safetensors"))),
      "<ok>");
  expectAffine(*affine, 3);
}

TEST(Session, NamesTheParameterAWeightsFileLacks) {
  TempDir dir;
  HostTensor other{DType::F32, {64}, std::vector<uint8_t>(256)};
  ASSERT_TRUE(
      writeSafetensors(dir.file("w.safetensors"), {{"other", other}}).ok());
  Loaded loaded = load(affineModule());
  EXPECT_EQ(
      messageOf(loaded.session->bindParameters(dir.file("w.safetensors"))),
      "weights file '" + dir.file("w.safetensors") + "' has no tensor 'bias'");
}

TEST(Session, RejectsAWeightOfTheWrongType) {
  TempDir dir;
  HostTensor wrong{DType::F32, {32}, std::vector<uint8_t>(128)};
  ASSERT_TRUE(
      writeSafetensors(dir.file("w.safetensors"), {{"bias", wrong}}).ok());
  Loaded loaded = load(affineModule());
  EXPECT_EQ(
      messageOf(loaded.session->bindParameters(dir.file("w.safetensors"))),
      "weights file '" + dir.file("w.safetensors") +
          "': parameter 'bias': expected shape [64] f32, got [32] f32");
  HostTensor half{DType::F16, {64}, std::vector<uint8_t>(128)};
  ASSERT_TRUE(
      writeSafetensors(dir.file("h.safetensors"), {{"bias", half}}).ok());
  EXPECT_EQ(
      messageOf(loaded.session->bindParameters(dir.file("h.safetensors"))),
      "weights file '" + dir.file("h.safetensors") +
          "': parameter 'bias': expected shape [64] f32, got [64] f16");
}

TEST(Session, BindsAParameterFromMemory) {
  Loaded loaded = load(affineModule());
  std::vector<float> bias = biasValues();
  std::vector<int64_t> shape = {64};
  ASSERT_EQ(messageOf(loaded.session->bindParameter("bias", view(bias, shape))),
            "<ok>");
  Function *affine = lookup(*loaded.session, "affine");
  ASSERT_TRUE(affine);
  expectAffine(*affine, -2);
  EXPECT_EQ(messageOf(loaded.session->bindParameter("nope", view(bias, shape))),
            "the module has no parameter 'nope'");
  std::vector<int64_t> wrong = {32};
  EXPECT_EQ(messageOf(loaded.session->bindParameter(
                "bias", view(std::vector<float>(32), wrong))),
            "parameter 'bias': expected shape [64] f32, got [32] f32");
  Loaded widen = load(widenModule());
  std::vector<uint16_t> values(4);
  std::vector<int64_t> four = {4};
  EXPECT_EQ(messageOf(widen.session->bindParameter(
                "values", view(values, four, DType::BF16))),
            "parameter 'values' is embedded in the module and cannot be "
            "rebound");
}

TEST(Session, RunsCopyCommands) {
  Loaded loaded = load(copyModule());
  Function *copy = lookup(*loaded.session, "copy");
  ASSERT_TRUE(copy);
  std::vector<float> x(64);
  for (int i = 0; i < 64; ++i)
    x[i] = float(i * i) - 0.5f;
  std::vector<int64_t> shape = {4, 16};
  TensorView input = view(x, shape);
  ASSERT_EQ(messageOf(copy->call(&input, 1)), "<ok>");
  EXPECT_EQ(result<float>(*copy, 0), x);
  EXPECT_EQ(result<float>(*copy, 1),
            std::vector<float>(x.begin() + 48, x.end()));
  const std::vector<CommandStats> &stats = copy->getCommandStats();
  ASSERT_EQ(stats.size(), 3u);
  EXPECT_EQ(stats[0].name, "to_arena");
  EXPECT_EQ(stats[2].name, "last_row");
  EXPECT_EQ(stats[1].kind, lcm::CommandKind::Copy);
}

TEST(Session, WritesEachWorkgroupIdAndReusesOutputs) {
  Loaded loaded = load(gridModule(), 4);
  Function *grid = lookup(*loaded.session, "");
  ASSERT_TRUE(grid);
  EXPECT_EQ(grid->getName(), "grid");
  ASSERT_EQ(messageOf(grid->call(nullptr, 0)), "<ok>");
  std::vector<int32_t> ids = result<int32_t>(*grid, 0);
  for (int z = 0; z < 2; ++z)
    for (int y = 0; y < 3; ++y)
      for (int x = 0; x < 4; ++x)
        EXPECT_EQ(ids[(z * 3 + y) * 4 + x], x + 100 * y + 10000 * z);

  // count_visits adds one per workgroup to an output the function keeps:
  // all ones shows every workgroup ran once, all twos that the output
  // buffer is the same one across calls.
  Function *visits = lookup(*loaded.session, "visits");
  ASSERT_TRUE(visits);
  ASSERT_TRUE(visits->call(nullptr, 0).ok());
  EXPECT_EQ(result<int32_t>(*visits, 0), std::vector<int32_t>(1000, 1));
  ASSERT_TRUE(visits->call(nullptr, 0).ok());
  EXPECT_EQ(result<int32_t>(*visits, 0), std::vector<int32_t>(1000, 2));
}

TEST(Session, ChecksInputs) {
  Loaded loaded = load(vectorAddModule(256));
  Function *add = lookup(*loaded.session, "add");
  ASSERT_TRUE(add);
  std::vector<float> a(256), half(128);
  std::vector<int32_t> ints(256);
  std::vector<int64_t> shape = {256}, halfShape = {128}, matrix = {16, 16};
  TensorView one[] = {view(a, shape)};
  EXPECT_EQ(messageOf(add->call(one, 1)),
            "function 'add' takes 2 inputs, got 1");
  TensorView shortB[] = {view(a, shape), view(half, halfShape)};
  EXPECT_EQ(messageOf(add->call(shortB, 2)),
            "input 1 'b': expected shape [256] f32, got [128] f32");
  TensorView intA[] = {view(ints, shape, DType::I32), view(a, shape)};
  EXPECT_EQ(messageOf(add->call(intA, 2)),
            "input 0 'a': expected shape [256] f32, got [256] i32");
  TensorView rank2[] = {view(a, shape), view(a, matrix)};
  EXPECT_EQ(messageOf(add->call(rank2, 2)),
            "input 1 'b': expected shape [256] f32, got [16, 16] f32");
  TensorView lying[] = {view(a, shape), view(half, shape)};
  EXPECT_EQ(messageOf(add->call(lying, 2)),
            "input 1 'b': expected 1024 bytes of data for [256] f32, got 512");
  EXPECT_EQ(add->getCallCount(), 0u);
}

TEST(Session, CarriesAResultToTheNextCallsInput) {
  // add(a, b) with its sum carried to a: a, a + b, a + 2b, ...
  Loaded loaded = load(vectorAddModule(256));
  Function *add = lookup(*loaded.session, "add");
  ASSERT_TRUE(add);
  std::vector<float> a(256), b(256);
  for (int i = 0; i < 256; ++i) {
    a[i] = float(i);
    b[i] = float(3 - i);
  }
  std::vector<int64_t> shape = {256};
  ASSERT_EQ(messageOf(add->carryResult(0, 0)), "<ok>");
  TensorView first[] = {view(a, shape), view(b, shape)};
  // No value carried yet: the first call must give a.
  TensorView none[] = {TensorView{DType::F32, shape.data(), 1, nullptr, 1024},
                       view(b, shape)};
  EXPECT_EQ(messageOf(add->call(none, 2)),
            "input 0 'a': expected 1024 bytes of data for [256] f32, got 0");
  ASSERT_EQ(messageOf(add->call(first, 2)), "<ok>");
  for (int step = 2; step <= 3; ++step) {
    ASSERT_EQ(messageOf(add->call(none, 2)), "<ok>");
    std::vector<float> sum = result<float>(*add, 0);
    for (int i = 0; i < 256; ++i)
      ASSERT_EQ(sum[i], float(i + step * (3 - i))) << step << " " << i;
  }
  // Data given for a carried input is used: a new sequence.
  ASSERT_EQ(messageOf(add->call(first, 2)), "<ok>");
  EXPECT_EQ(result<float>(*add, 0)[10], float(10 + 3 - 10));

  EXPECT_EQ(messageOf(add->carryResult(0, 1)), "<ok>");
  EXPECT_EQ(messageOf(add->carryResult(1, 0)),
            "function 'add' has 1 result and 2 inputs: it cannot carry result "
            "1 to input 0");
  EXPECT_EQ(messageOf(add->carryResult(0, 2)),
            "function 'add' has 1 result and 2 inputs: it cannot carry result "
            "0 to input 2");
}

TEST(Session, CarriesOnlyResultsOfTheInputsType) {
  Loaded loaded = load(matmulModule());
  Function *matmul = lookup(*loaded.session, "matmul");
  ASSERT_TRUE(matmul);
  EXPECT_EQ(messageOf(matmul->carryResult(0, 0)),
            "carrying result 0 'C' to input 0 'A': their types differ, "
            "[8, 12] f32 and [8, 6] f32");
}

TEST(Session, RecordsCommandTimes) {
  std::vector<float> bias = biasValues();
  Loaded loaded = load(affineModule(&bias));
  Function *affine = lookup(*loaded.session, "affine");
  ASSERT_TRUE(affine);
  for (int i = 0; i < 3; ++i)
    expectAffine(*affine, 0);
  const std::vector<CommandStats> &stats = affine->getCommandStats();
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[0].name, "scale");
  EXPECT_EQ(stats[1].name, "bias");
  EXPECT_EQ(stats[0].kind, lcm::CommandKind::Dispatch);
  EXPECT_GT(stats[0].totalNanoseconds, 0u);
  EXPECT_GE(affine->getTotalNanoseconds(),
            stats[0].totalNanoseconds + stats[1].totalNanoseconds);
  affine->resetStats();
  EXPECT_EQ(affine->getCallCount(), 0u);
  EXPECT_EQ(affine->getTotalNanoseconds(), 0u);
  EXPECT_EQ(affine->getCommandStats()[1].totalNanoseconds, 0u);
}

TEST(Session, NamesUnknownFunctions) {
  Loaded loaded = load(gridModule());
  EXPECT_EQ(messageOf(loaded.session->lookupFunction("nope")),
            "no function 'nope' in the module; it has 'grid', 'visits'");
  Loaded empty = load(parameterInitModule());
  EXPECT_EQ(messageOf(empty.session->lookupFunction("")),
            "the module has no functions");
}

TEST(Session, RunsTheExecutableMadeForTheCpu) {
  ModuleSpec spec = withGpuExecutables(vectorAddModule(64));
  std::rotate(spec.executables.begin(), spec.executables.begin() + 1,
              spec.executables.end());
  ASSERT_EQ(spec.executables[2].format,
            lcm::ExecutableFormat::HostSharedObject);
  Loaded loaded = load(spec);
  Function *add = lookup(*loaded.session, "add");
  ASSERT_TRUE(add);
  std::vector<float> a(64, 1.5f), b(64, 2);
  std::vector<int64_t> shape = {64};
  TensorView inputs[] = {view(a, shape), view(b, shape)};
  ASSERT_EQ(messageOf(add->call(inputs, 2)), "<ok>");
  EXPECT_EQ(result<float>(*add, 0), std::vector<float>(64, 3.5f));
}

TEST(Session, ReportsKernelsItCannotRun) {
  ModuleSpec spec = vectorAddModule();
  spec.executables = {fakeGpuExecutable(lcm::ExecutableFormat::Cubin)};
  std::vector<uint8_t> bytes = buildModule(spec);
  StatusOr<std::shared_ptr<const Module>> module =
      loadModuleFromMemory(bytes.data(), bytes.size());
  ASSERT_EQ(messageOf(module), "<ok>");
  StatusOr<std::unique_ptr<Session>> cubin =
      Session::create(std::make_shared<CpuDevice>(1), *module);
  EXPECT_EQ(messageOf(cubin),
            "module has no code for the cpu device: it holds sm_90 (Cubin)");
  EXPECT_EQ(cubin.getStatus().getCode(), StatusCode::Unavailable);
  spec = vectorAddModule();
  spec.executables[0].entryPoints[kVectorAdd].name = "vector_sub";
  Loaded missing = load(spec);
  EXPECT_EQ(messageOf(missing.session->lookupFunction("add")),
            "functions[0].commands[0]: executables[0] has no entry point "
            "'vector_sub' (no such exported symbol)");
}

TEST(Session, OutlivesTheHandlesItWasMadeFrom) {
  std::vector<uint8_t> bytes = buildModule(vectorAddModule(64));
  StatusOr<std::shared_ptr<const Module>> module =
      loadModuleFromMemory(bytes.data(), bytes.size());
  ASSERT_TRUE(module.ok());
  auto device = std::make_shared<CpuDevice>(2);
  StatusOr<std::unique_ptr<Session>> session =
      Session::create(device, module.take());
  ASSERT_TRUE(session.ok());
  device.reset();
  bytes.assign(bytes.size(), 0);
  Function *add = lookup(**session, "add");
  ASSERT_TRUE(add);
  std::vector<float> a(64, 1.5f), b(64, 2);
  std::vector<int64_t> shape = {64};
  TensorView inputs[] = {view(a, shape), view(b, shape)};
  ASSERT_TRUE(add->call(inputs, 2).ok());
  EXPECT_EQ(result<float>(*add, 0), std::vector<float>(64, 3.5f));
}

} // namespace
