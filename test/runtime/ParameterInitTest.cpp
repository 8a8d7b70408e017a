//===- ParameterInitTest.cpp - freshly initialised weights ----------------===//

#include "module/ParameterInit.h"

#include "TestModules.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace lcc;
using namespace lcc::runtime;
using namespace lcc::test;

namespace {

std::shared_ptr<const Module> loadSpec(const ModuleSpec &spec) {
  std::vector<uint8_t> bytes = buildModule(spec);
  StatusOr<std::shared_ptr<const Module>> module =
      loadModuleFromMemory(bytes.data(), bytes.size());
  EXPECT_EQ(messageOf(module), "<ok>");
  return module.take();
}

std::vector<NamedTensor> initialize(const ModuleSpec &spec, uint64_t seed) {
  StatusOr<std::vector<NamedTensor>> tensors =
      initializeParameters(*loadSpec(spec), seed);
  EXPECT_EQ(messageOf(tensors), "<ok>");
  return tensors.take();
}

std::vector<float> asFloats(const HostTensor &tensor) {
  std::vector<float> values(tensor.data.size() / 4);
  std::memcpy(values.data(), tensor.data.data(), tensor.data.size());
  return values;
}

TEST(SplitMix64, MatchesTheReferenceSequence) {
  // The first outputs of Vigna's splitmix64.c for seed 1234567.
  SplitMix64 generator(1234567);
  EXPECT_EQ(generator.next(), 6457827717110365317ull);
  EXPECT_EQ(generator.next(), 3203168211198807973ull);
  EXPECT_EQ(generator.next(), 9817491932198370423ull);
}

TEST(SplitMix64, UniformsLieInTheHalfOpenUnitInterval) {
  SplitMix64 generator(7);
  for (int i = 0; i < 100000; ++i) {
    double u = generator.nextUniform();
    ASSERT_GT(u, 0.0);
    ASSERT_LE(u, 1.0);
  }
}

TEST(ParameterInit, FillsEachParameterAsItsInitSays) {
  std::vector<NamedTensor> tensors = initialize(parameterInitModule(), 5);
  // Every parameter but the embedded one, in module order.
  ASSERT_EQ(tensors.size(), 5u);
  EXPECT_EQ(tensors[0].name, "w.normal");
  EXPECT_EQ(tensors[0].tensor.shape, (std::vector<int64_t>{100, 101}));

  std::vector<float> normal = asFloats(tensors[0].tensor);
  double sum = 0, squares = 0;
  for (float value : normal) {
    sum += value;
    squares += double(value) * value;
  }
  double n = double(normal.size());
  double mean = sum / n;
  double deviation = std::sqrt(squares / n - mean * mean);
  // N(0, 0.02^2) over 10100 draws: the mean is within 5 standard errors of
  // 0, the deviation within 5%.
  EXPECT_LT(std::abs(mean), 5 * 0.02 / std::sqrt(n));
  EXPECT_NEAR(deviation, 0.02, 0.001);

  EXPECT_EQ(tensors[1].name, "w.zeros");
  EXPECT_EQ(asFloats(tensors[1].tensor), std::vector<float>(15, 0.0f));
  EXPECT_EQ(tensors[2].name, "w.ones.f16");
  for (size_t i = 0; i < 7; ++i)
    EXPECT_EQ(elementAsDouble(DType::F16, tensors[2].tensor.data.data(), i),
              1.0);
  EXPECT_EQ(tensors[3].name, "w.ones.i64");
  EXPECT_EQ(elementAsDouble(DType::I64, tensors[3].tensor.data.data(), 1), 1.0);
  EXPECT_EQ(tensors[4].name, "w.normal.bf16");
  EXPECT_EQ(tensors[4].tensor.data.size(), 6u);
}

TEST(ParameterInit, FollowsTheDocumentedFormula) {
  std::vector<NamedTensor> tensors = initialize(parameterInitModule(), 99);
  SplitMix64 generator(99 ^ fnv1a64("w.normal"));
  double radius = std::sqrt(-2 * std::log(generator.nextUniform()));
  double angle = 2 * M_PI * generator.nextUniform();
  std::vector<float> normal = asFloats(tensors[0].tensor);
  EXPECT_EQ(normal[0], float(0.02f * radius * std::cos(angle)));
  EXPECT_EQ(normal[1], float(0.02f * radius * std::sin(angle)));
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cull);
}

TEST(ParameterInit, IsReproducibleAndDependsOnlyOnSeedAndName) {
  std::vector<NamedTensor> first = initialize(parameterInitModule(), 1);
  std::vector<NamedTensor> again = initialize(parameterInitModule(), 1);
  std::vector<NamedTensor> other = initialize(parameterInitModule(), 2);
  EXPECT_EQ(first[0].tensor.data, again[0].tensor.data);
  EXPECT_EQ(first[4].tensor.data, again[4].tensor.data);
  EXPECT_NE(first[0].tensor.data, other[0].tensor.data);

  // The same parameter alone in a module, at another index: same values.
  ModuleSpec alone;
  alone.parameters = {parameterInitModule().parameters[0]};
  EXPECT_EQ(initialize(alone, 1)[0].tensor.data, first[0].tensor.data);
}

TEST(ParameterInit, RefusesNormalIntegers) {
  ModuleSpec spec;
  spec.parameters = {
      {{"ids", lcm::DType::I32, {4}}, lcm::ParameterInit::Normal, 1.0f, {}}};
  EXPECT_EQ(messageOf(initializeParameters(*loadSpec(spec), 0)),
            "parameter 'ids' is i32; Normal init needs a floating-point dtype");
}

TEST(ParameterInit, WritesAWeightsFileTheSessionCanBind) {
  TempDir dir;
  std::shared_ptr<const Module> module = loadSpec(parameterInitModule());
  ASSERT_EQ(messageOf(writeInitialParameters(*module, 3,
                                             dir.file("init.safetensors"))),
            "<ok>");
  StatusOr<std::unique_ptr<SafetensorsReader>> reader =
      SafetensorsReader::open(dir.file("init.safetensors"));
  ASSERT_EQ(messageOf(reader), "<ok>");
  EXPECT_EQ((*reader)->getHeader().metadata.at("seed"), "3");
  EXPECT_EQ((*reader)->getHeader().entries.size(), 5u);
  StatusOr<HostTensor> normal = (*reader)->readTensor("w.normal");
  ASSERT_TRUE(normal.ok());
  EXPECT_EQ(normal->data, initialize(parameterInitModule(), 3)[0].tensor.data);
  EXPECT_EQ(messageOf((*reader)->readTensor("w.embedded")),
            "weights file '" + dir.file("init.safetensors") +
                "' has no tensor 'w.embedded'");
}

} // namespace
