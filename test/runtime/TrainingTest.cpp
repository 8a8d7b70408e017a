//===- TrainingTest.cpp - parameters that functions train -----------------===//
//
// A training step is a function whose kernels write Parameter buffers in
// place (trainingModule(): SGD on a toy loss, with one optimizer state
// parameter). The session keeps those values across calls and functions,
// starts state at zero, reads parameters back, and writes them as a
// checkpoint that a new session resumes from; files are written atomically.
//
//===----------------------------------------------------------------------===//

#include "devices/cpu/CpuDevice.h"
#include "module/ParameterInit.h"
#include "formats/Safetensors.h"
#include "module/Session.h"

#include "TestModules.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <dirent.h>

using namespace lcc;
using namespace lcc::runtime;
using namespace lcc::test;

namespace {

std::unique_ptr<Session> openSession(const ModuleSpec &spec) {
  std::vector<uint8_t> bytes = buildModule(spec);
  StatusOr<std::shared_ptr<const Module>> module =
      loadModuleFromMemory(bytes.data(), bytes.size());
  EXPECT_EQ(messageOf(module), "<ok>");
  StatusOr<std::unique_ptr<Session>> session =
      Session::create(std::make_shared<CpuDevice>(2), module.take());
  EXPECT_EQ(messageOf(session), "<ok>");
  return session.ok() ? session.take() : nullptr;
}

Function *lookup(Session &session, const std::string &name) {
  StatusOr<Function *> function = session.lookupFunction(name);
  EXPECT_EQ(messageOf(function), "<ok>");
  return function.ok() ? *function : nullptr;
}

std::vector<float> asFloats(const std::vector<uint8_t> &bytes) {
  std::vector<float> values(bytes.size() / 4);
  std::memcpy(values.data(), bytes.data(), values.size() * 4);
  return values;
}

std::vector<float> readFloats(Session &session, size_t index) {
  std::vector<uint8_t> bytes;
  EXPECT_EQ(messageOf(session.readParameter(index, bytes)), "<ok>");
  return asFloats(bytes);
}

/// One batch of the toy model and a double-precision reference of it.
struct Batch {
  std::vector<float> x = std::vector<float>(64);
  std::vector<int32_t> weight = {1, 2, 0, 3};
  std::vector<int64_t> xShape = {4, 16}, weightShape = {4};

  explicit Batch(float offset) {
    for (int i = 0; i < 64; ++i)
      x[i] = float(i % 9) * 0.25f - offset;
  }
  std::vector<TensorView> inputs() const {
    return {{DType::F32, xShape.data(), 2, x.data(), 256},
            {DType::I32, weightShape.data(), 1, weight.data(), 16}};
  }
  double loss(const std::vector<double> &w) const {
    double sum = 0;
    for (int b = 0; b < 4; ++b)
      for (int j = 0; j < 16; ++j)
        sum += weight[b] * (x[b * 16 + j] - w[j]) * (x[b * 16 + j] - w[j]);
    return sum / 64;
  }
  /// What the train step does to `w` (SGD, learning rate 4).
  void step(std::vector<double> &w) const {
    for (int j = 0; j < 16; ++j) {
      double gradient = 0;
      for (int b = 0; b < 4; ++b)
        gradient += weight[b] * (w[j] - x[b * 16 + j]);
      w[j] -= 4 * gradient * 2 / 64;
    }
  }
};

std::vector<float> initialW() {
  std::vector<float> w(16);
  for (int j = 0; j < 16; ++j)
    w[j] = 0.125f * float(j) - 1;
  return w;
}

Status bindW(Session &session, const std::vector<float> &w) {
  std::vector<int64_t> shape = {16};
  return session.bindParameter(
      "w", TensorView{DType::F32, shape.data(), 1, w.data(), 64});
}

float loss(const Function &function) {
  float value;
  std::memcpy(&value, function.getResult(0).data, 4);
  return value;
}

void expectNear(const std::vector<float> &actual,
                const std::vector<double> &expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i)
    EXPECT_NEAR(actual[i], expected[i], 1e-5 * (1 + std::fabs(expected[i])))
        << i;
}

/// The names in `directory`, to show no temporary file is left behind.
std::vector<std::string> listDirectory(const std::string &directory) {
  std::vector<std::string> names;
  if (DIR *dir = ::opendir(directory.c_str())) {
    while (dirent *entry = ::readdir(dir))
      if (std::strcmp(entry->d_name, ".") && std::strcmp(entry->d_name, ".."))
        names.push_back(entry->d_name);
    ::closedir(dir);
  }
  std::sort(names.begin(), names.end());
  return names;
}

TEST(Training, StartsStateAtZeroAndWaitsForWeights) {
  std::unique_ptr<Session> session = openSession(trainingModule());
  ASSERT_TRUE(session);
  EXPECT_EQ(session->getParameterCount(), 2u);
  EXPECT_EQ(readFloats(*session, 1), std::vector<float>({0}));
  std::vector<uint8_t> bytes;
  EXPECT_EQ(messageOf(session->readParameter(0, bytes)),
            "parameter 'w' is not bound; give a weights file (--params)");
  Batch batch(0);
  std::vector<TensorView> inputs = batch.inputs();
  Function *step = lookup(*session, "train_step");
  ASSERT_TRUE(step);
  EXPECT_EQ(messageOf(step->call(inputs.data(), inputs.size())),
            "parameter 'w' of function 'train_step' is not bound; give a "
            "weights file (--params)");
}

TEST(Training, UpdatesParametersInPlaceAcrossCallsAndFunctions) {
  std::unique_ptr<Session> session = openSession(trainingModule());
  ASSERT_TRUE(session);
  ASSERT_EQ(messageOf(bindW(*session, initialW())), "<ok>");
  Function *step = lookup(*session, "train_step");
  Function *evaluate = lookup(*session, "loss");
  ASSERT_TRUE(step && evaluate);
  std::vector<float> start = initialW();
  std::vector<double> w(start.begin(), start.end());
  for (int call = 0; call < 3; ++call) {
    Batch batch(0.5f * float(call));
    std::vector<TensorView> inputs = batch.inputs();
    ASSERT_EQ(messageOf(step->call(inputs.data(), inputs.size())), "<ok>");
    // The loss of the batch before the update, then the update.
    EXPECT_NEAR(loss(*step), batch.loss(w), 1e-5);
    batch.step(w);
    expectNear(readFloats(*session, 0), w);
    EXPECT_EQ(readFloats(*session, 1), std::vector<float>({float(call + 1)}));
    // Another function of the session sees the trained weights.
    ASSERT_EQ(messageOf(evaluate->call(inputs.data(), inputs.size())), "<ok>");
    EXPECT_NEAR(loss(*evaluate), batch.loss(w), 1e-5);
  }
}

TEST(Training, ResumesFromACheckpoint) {
  TempDir dir;
  std::string checkpoint = dir.file("checkpoint.safetensors");
  std::unique_ptr<Session> first = openSession(trainingModule());
  ASSERT_TRUE(first);
  ASSERT_EQ(messageOf(bindW(*first, initialW())), "<ok>");
  Function *step = lookup(*first, "train_step");
  ASSERT_TRUE(step);
  Batch batch(0.25f);
  std::vector<TensorView> inputs = batch.inputs();
  for (int call = 0; call < 2; ++call)
    ASSERT_EQ(messageOf(step->call(inputs.data(), inputs.size())), "<ok>");
  ASSERT_EQ(messageOf(first->writeParameters(checkpoint)), "<ok>");

  // Every parameter by name, state included, with its current value.
  StatusOr<std::unique_ptr<SafetensorsReader>> reader =
      SafetensorsReader::open(checkpoint);
  ASSERT_EQ(messageOf(reader), "<ok>");
  const std::vector<SafetensorsEntry> &entries = (*reader)->getHeader().entries;
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].name, "w");
  EXPECT_EQ(entries[0].shape, std::vector<int64_t>({16}));
  EXPECT_EQ(entries[1].name, "optimizer.steps");
  StatusOr<HostTensor> steps = (*reader)->readTensor("optimizer.steps");
  ASSERT_EQ(messageOf(steps), "<ok>");
  EXPECT_EQ(asFloats(steps->data), std::vector<float>({2}));
  StatusOr<HostTensor> w = (*reader)->readTensor("w");
  ASSERT_EQ(messageOf(w), "<ok>");
  EXPECT_EQ(asFloats(w->data), readFloats(*first, 0));

  // A new session bound from it continues exactly where the first is.
  std::unique_ptr<Session> second = openSession(trainingModule());
  ASSERT_TRUE(second);
  ASSERT_EQ(messageOf(second->bindParameters(checkpoint)), "<ok>");
  EXPECT_EQ(readFloats(*second, 1), std::vector<float>({2}));
  Function *resumed = lookup(*second, "train_step");
  ASSERT_TRUE(resumed);
  ASSERT_EQ(messageOf(step->call(inputs.data(), inputs.size())), "<ok>");
  ASSERT_EQ(messageOf(resumed->call(inputs.data(), inputs.size())), "<ok>");
  EXPECT_EQ(loss(*resumed), loss(*step));
  EXPECT_EQ(readFloats(*second, 0), readFloats(*first, 0));
  EXPECT_EQ(readFloats(*second, 1), std::vector<float>({3}));
}

TEST(Training, BindsWeightsWithoutStateAndStateOfTheRightType) {
  TempDir dir;
  std::unique_ptr<Session> session = openSession(trainingModule());
  ASSERT_TRUE(session);
  ASSERT_EQ(messageOf(bindW(*session, initialW())), "<ok>");
  Function *step = lookup(*session, "train_step");
  ASSERT_TRUE(step);
  Batch batch(0);
  std::vector<TensorView> inputs = batch.inputs();
  ASSERT_EQ(messageOf(step->call(inputs.data(), inputs.size())), "<ok>");

  // A weights file holds no state: the state is left as it is.
  HostTensor w{DType::F32, {16}, toBytes(initialW())};
  ASSERT_EQ(messageOf(writeSafetensors(dir.file("w.safetensors"), {{"w", w}})),
            "<ok>");
  ASSERT_EQ(messageOf(session->bindParameters(dir.file("w.safetensors"))),
            "<ok>");
  EXPECT_EQ(readFloats(*session, 0), initialW());
  EXPECT_EQ(readFloats(*session, 1), std::vector<float>({1}));

  // State a file does hold must match.
  HostTensor steps{DType::F32, {2}, toBytes({5, 6})};
  ASSERT_EQ(messageOf(writeSafetensors(dir.file("s.safetensors"),
                                       {{"w", w}, {"optimizer.steps", steps}})),
            "<ok>");
  EXPECT_EQ(messageOf(session->bindParameters(dir.file("s.safetensors"))),
            "weights file '" + dir.file("s.safetensors") +
                "': parameter 'optimizer.steps': expected shape [1] f32, got "
                "[2] f32");
  // One state parameter binds from memory like a weight.
  std::vector<float> seven = {7};
  std::vector<int64_t> shape = {1};
  ASSERT_EQ(messageOf(session->bindParameter(
                "optimizer.steps",
                TensorView{DType::F32, shape.data(), 1, seven.data(), 4})),
            "<ok>");
  EXPECT_EQ(readFloats(*session, 1), seven);
}

TEST(Training, FreshWeightsAreThoseOfTheInitialWeightsFile) {
  TempDir dir;
  ModuleSpec spec = trainingModule();
  std::vector<uint8_t> bytes = buildModule(spec);
  StatusOr<std::shared_ptr<const Module>> module =
      loadModuleFromMemory(bytes.data(), bytes.size());
  ASSERT_EQ(messageOf(module), "<ok>");
  // The file holds the weights only: state starts at zero.
  ASSERT_EQ(
      messageOf(writeInitialParameters(**module, 9, dir.file("w.safetensors"))),
      "<ok>");
  StatusOr<std::unique_ptr<SafetensorsReader>> reader =
      SafetensorsReader::open(dir.file("w.safetensors"));
  ASSERT_EQ(messageOf(reader), "<ok>");
  ASSERT_EQ((*reader)->getHeader().entries.size(), 1u);
  StatusOr<HostTensor> w = (*reader)->readTensor("w");
  ASSERT_EQ(messageOf(w), "<ok>");
  StatusOr<std::vector<NamedTensor>> fresh = initializeParameters(**module, 9);
  ASSERT_EQ(messageOf(fresh), "<ok>");
  ASSERT_EQ(fresh->size(), 1u);
  EXPECT_EQ((*fresh)[0].tensor.data, w->data);

  std::unique_ptr<Session> session = openSession(spec);
  ASSERT_TRUE(session);
  ASSERT_EQ(messageOf(session->initializeParameters(9)), "<ok>");
  EXPECT_EQ(readFloats(*session, 0), asFloats(w->data));
  EXPECT_EQ(readFloats(*session, 1), std::vector<float>({0}));
  ASSERT_EQ(messageOf(session->initializeParameters(10)), "<ok>");
  EXPECT_NE(readFloats(*session, 0), asFloats(w->data));
}

TEST(Training, WritesNoCheckpointOfUnboundWeights) {
  TempDir dir;
  std::unique_ptr<Session> session = openSession(trainingModule());
  ASSERT_TRUE(session);
  std::string path = dir.file("checkpoint.safetensors");
  EXPECT_EQ(messageOf(session->writeParameters(path)),
            "cannot write '" + path +
                "': parameter 'w' is not bound; give a weights file "
                "(--params)");
  EXPECT_EQ(listDirectory(dir.path()), std::vector<std::string>());
  EXPECT_EQ(messageOf(session->writeParameters(dir.file("no/such/dir.st"))),
            "cannot write '" + dir.file("no/such/dir.st") +
                "': parameter 'w' is not bound; give a weights file "
                "(--params)");
  ASSERT_EQ(messageOf(bindW(*session, initialW())), "<ok>");
  EXPECT_EQ(messageOf(session->writeParameters(dir.file("no/dir.st"))),
            "cannot write '" + dir.file("no/dir.st") +
                "': No such file or directory");
}

TEST(Training, SkipsEmbeddedParametersInCheckpoints) {
  TempDir dir;
  std::vector<float> bias(64, 0.5f);
  std::unique_ptr<Session> session = openSession(affineModule(&bias));
  ASSERT_TRUE(session);
  EXPECT_EQ(readFloats(*session, 0), bias);
  ASSERT_EQ(messageOf(session->writeParameters(dir.file("c.safetensors"))),
            "<ok>");
  StatusOr<std::unique_ptr<SafetensorsReader>> reader =
      SafetensorsReader::open(dir.file("c.safetensors"));
  ASSERT_EQ(messageOf(reader), "<ok>");
  EXPECT_TRUE((*reader)->getHeader().entries.empty());
}

//===----------------------------------------------------------------------===//
// The atomic .safetensors writer
//===----------------------------------------------------------------------===//

TEST(SafetensorsWriter, ReplacesAFileOnlyWhenComplete) {
  TempDir dir;
  std::string path = dir.file("w.safetensors");
  writeBytes(path, {'o', 'l', 'd'});
  std::vector<SafetensorsLayout> layout = {{"a", DType::F32, {2}, 8},
                                           {"b", DType::I32, {}, 4}};
  std::vector<uint8_t> data = toBytes({1.5f, -2, 0});
  {
    // Dropped before commit(): the old file stays, no temporary is left.
    StatusOr<SafetensorsWriter> writer =
        SafetensorsWriter::create(path, layout);
    ASSERT_EQ(messageOf(writer), "<ok>");
    ASSERT_EQ(messageOf(writer->write(data.data(), 8)), "<ok>");
    EXPECT_EQ(listDirectory(dir.path()).size(), 2u);
  }
  EXPECT_EQ(listDirectory(dir.path()),
            std::vector<std::string>({"w.safetensors"}));
  StatusOr<std::vector<uint8_t>> old = readFile(path, 100, "the file");
  ASSERT_EQ(messageOf(old), "<ok>");
  EXPECT_EQ(*old, std::vector<uint8_t>({'o', 'l', 'd'}));

  {
    // Short of the bytes its header promises: commit() refuses.
    StatusOr<SafetensorsWriter> writer =
        SafetensorsWriter::create(path, layout);
    ASSERT_EQ(messageOf(writer), "<ok>");
    ASSERT_EQ(messageOf(writer->write(data.data(), 8)), "<ok>");
    EXPECT_EQ(messageOf(writer->commit()),
              "a .safetensors file got 8 of its 12 data bytes");
    EXPECT_EQ(messageOf(writer->write(data.data(), 8)),
              "writing 8 bytes past the end of a .safetensors file");
  }
  EXPECT_EQ(listDirectory(dir.path()),
            std::vector<std::string>({"w.safetensors"}));

  StatusOr<SafetensorsWriter> writer = SafetensorsWriter::create(path, layout);
  ASSERT_EQ(messageOf(writer), "<ok>");
  ASSERT_EQ(messageOf(writer->write(data.data(), 4)), "<ok>");
  ASSERT_EQ(messageOf(writer->write(data.data() + 4, 8)), "<ok>");
  ASSERT_EQ(messageOf(writer->commit()), "<ok>");
  EXPECT_EQ(listDirectory(dir.path()),
            std::vector<std::string>({"w.safetensors"}));
  StatusOr<std::unique_ptr<SafetensorsReader>> reader =
      SafetensorsReader::open(path);
  ASSERT_EQ(messageOf(reader), "<ok>");
  StatusOr<HostTensor> a = (*reader)->readTensor("a");
  ASSERT_EQ(messageOf(a), "<ok>");
  EXPECT_EQ(asFloats(a->data), std::vector<float>({1.5f, -2}));
}

TEST(SafetensorsWriter, RefusesWhatAReaderWouldRefuse) {
  TempDir dir;
  std::string path = dir.file("w.safetensors");
  auto error = [&](std::vector<SafetensorsLayout> layout) {
    return messageOf(SafetensorsWriter::create(path, layout));
  };
  std::string prefix = "cannot write '" + path + "': ";
  EXPECT_EQ(error({{"a", DType::F32, {1}, 4}, {"a", DType::F32, {1}, 4}}),
            prefix + "tensor 'a' appears twice");
  EXPECT_EQ(error({{"__metadata__", DType::F32, {1}, 4}}),
            prefix + "'__metadata__' is reserved and cannot name a tensor");
  EXPECT_EQ(error({{"a", DType::F32, {3}, 4}}),
            prefix + "tensor 'a' has 4 bytes of data, not those of a [3] f32");
  EXPECT_EQ(error({{"a", DType(9), {1}, 4}}),
            prefix +
                "tensor 'a' has 4 bytes of data, not those of a [1] tensor "
                "of unknown dtype");
  EXPECT_EQ(listDirectory(dir.path()), std::vector<std::string>());
}

} // namespace

namespace {

// A checkpoint is marked one, carries its writer's metadata, and must hold
// all of the optimizer state: one missing a state tensor is refused rather
// than resumed with zeros in its place.
TEST(Training, CheckpointsCarryMetadataAndAllTheirState) {
  TempDir dir;
  std::unique_ptr<Session> session = openSession(trainingModule());
  ASSERT_TRUE(session);
  ASSERT_EQ(messageOf(bindW(*session, initialW())), "<ok>");
  std::string path = dir.file("c.safetensors");
  ASSERT_EQ(messageOf(session->writeParameters(
                path, {{"lcc-train.position", "28"}})),
            "<ok>");
  StatusOr<std::unique_ptr<SafetensorsReader>> reader =
      SafetensorsReader::open(path);
  ASSERT_EQ(messageOf(reader), "<ok>");
  const std::map<std::string, std::string> &metadata =
      (*reader)->getHeader().metadata;
  EXPECT_EQ(metadata.at("lcc-train.position"), "28");
  EXPECT_EQ(metadata.count(kCheckpointKey), 1u);
  ASSERT_EQ(messageOf(session->bindParameters(path)), "<ok>");

  // The same checkpoint without its state tensor.
  HostTensor w{DType::F32, {16}, toBytes(initialW())};
  std::string damaged = dir.file("damaged.safetensors");
  ASSERT_EQ(messageOf(writeSafetensors(damaged, {{"w", w}},
                                       {{kCheckpointKey, "yes"}})),
            "<ok>");
  EXPECT_EQ(messageOf(session->bindParameters(damaged)),
            "checkpoint '" + damaged +
                "' lacks the optimizer state 'optimizer.steps': a checkpoint "
                "holds all of it (resuming with zeros in its place would not "
                "continue the run); a weights file holds none");
}

} // namespace
