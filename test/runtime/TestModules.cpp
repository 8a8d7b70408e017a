//===- TestModules.cpp - sample modules over the test kernels -------------===//

#include "TestModules.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

namespace lcc::test {

using lcm::BufferKind;
using lcm::CommandKind;
using lcm::DType;

namespace {

std::vector<uint8_t> readLibrary(const char *path) {
  std::ifstream file(path, std::ios::binary);
  std::vector<uint8_t> contents((std::istreambuf_iterator<char>(file)),
                                std::istreambuf_iterator<char>());
  if (contents.empty()) {
    // Nothing can run without it: stop the test program here.
    std::fprintf(stderr, "cannot read the test kernels at %s\n", path);
    std::exit(1);
  }
  return contents;
}

} // namespace

const std::vector<uint8_t> &getKernelLibrary() {
  static const std::vector<uint8_t> bytes = readLibrary(LCC_TEST_KERNELS_PATH);
  return bytes;
}

const std::vector<uint8_t> &getVariantKernelLibrary() {
  static const std::vector<uint8_t> bytes =
      readLibrary(LCC_TEST_VARIANT_KERNELS_PATH);
  return bytes;
}

ExecutableSpec kernelExecutable() {
  ExecutableSpec executable;
  executable.entryPoints = {{"vector_add", 3}, {"matmul", 3},
                            {"scale2", 2},     {"add_bias", 3},
                            {"grid_ids", 1},   {"count_visits", 1}};
  executable.data = getKernelLibrary();
  return executable;
}

ExecutableSpec trainingExecutable() {
  ExecutableSpec executable = kernelExecutable();
  executable.entryPoints.push_back({"mse_loss", 4});
  executable.entryPoints.push_back({"mse_gradients", 5});
  executable.entryPoints.push_back({"mse_train_step", 5});
  return executable;
}

ExecutableSpec fakeGpuExecutable(lcm::ExecutableFormat format,
                                 const std::string &target) {
  ExecutableSpec executable = kernelExecutable();
  executable.format = format;
  executable.target = target;
  for (EntryPointSpec &entryPoint : executable.entryPoints)
    entryPoint.blockSize = {64, 1, 1};
  // What FakeCudaDriver.c expects: text for PTX, an ELF header for a cubin.
  std::string image =
      format == lcm::ExecutableFormat::Ptx
          ? "// lcc runtime tests: fake PTX\n.target " + target + "\n"
          : std::string(1, '\x7f') + "ELF lcc fake cubin " + target;
  executable.data.assign(image.begin(), image.end());
  return executable;
}

ModuleSpec withGpuExecutables(ModuleSpec spec) {
  spec.executables.push_back(fakeGpuExecutable(lcm::ExecutableFormat::Ptx));
  spec.executables.push_back(fakeGpuExecutable(lcm::ExecutableFormat::Cubin));
  return spec;
}

std::vector<uint8_t> toBytes(const std::vector<float> &values) {
  std::vector<uint8_t> bytes(values.size() * 4);
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

ModuleSpec vectorAddModule(int64_t n) {
  uint64_t bytes = uint64_t(n) * 4;
  FunctionSpec function;
  function.name = "add";
  function.inputs = {{"a", DType::F32, {n}}, {"b", DType::F32, {n}}};
  function.outputs = {{"sum", DType::F32, {n}}};
  function.buffers = {{BufferKind::Input, 0, bytes, 0},
                      {BufferKind::Input, 1, bytes, 0},
                      {BufferKind::Output, 0, bytes, 0}};
  CommandSpec add;
  add.name = "add";
  add.entryPoint = kVectorAdd;
  add.workgroupCount = {uint32_t(n / 64), 1, 1};
  add.bindings = {{0, 0, bytes}, {1, 0, bytes}, {2, 0, bytes}};
  function.commands = {add};
  ModuleSpec module;
  module.functions = {function};
  module.executables = {kernelExecutable()};
  return module;
}

ModuleSpec matmulModule() {
  FunctionSpec function;
  function.name = "matmul";
  function.inputs = {{"A", DType::F32, {8, 6}}, {"B", DType::F32, {6, 12}}};
  function.outputs = {{"C", DType::F32, {8, 12}}};
  function.buffers = {{BufferKind::Input, 0, 8 * 6 * 4, 0},
                      {BufferKind::Input, 1, 6 * 12 * 4, 0},
                      {BufferKind::Output, 0, 8 * 12 * 4, 0}};
  CommandSpec matmul;
  matmul.name = "matmul_tiles";
  matmul.entryPoint = kMatmul;
  matmul.workgroupCount = {3, 2, 1};
  matmul.bindings = {{0, 0, 8 * 6 * 4}, {1, 0, 6 * 12 * 4}, {2, 0, 8 * 12 * 4}};
  function.commands = {matmul};
  ModuleSpec module;
  module.functions = {function};
  module.executables = {kernelExecutable()};
  return module;
}

ModuleSpec affineModule(const std::vector<float> *embeddedBias) {
  FunctionSpec function;
  function.name = "affine";
  function.inputs = {{"x", DType::F32, {128}}};
  function.outputs = {{"y", DType::F32, {128}}};
  // The transient sits at offset 64 of a 576-byte arena, so a wrong base
  // pointer or offset shows in the numbers.
  function.arenaSize = 576;
  function.buffers = {{BufferKind::Input, 0, 512, 0},
                      {BufferKind::Transient, 0, 512, 64},
                      {BufferKind::Parameter, 0, 256, 0},
                      {BufferKind::Output, 0, 512, 0}};
  CommandSpec scale;
  scale.name = "scale";
  scale.entryPoint = kScale2;
  scale.workgroupCount = {2, 1, 1};
  scale.bindings = {{0, 0, 512}, {1, 0, 512}};
  CommandSpec bias;
  bias.name = "bias";
  bias.entryPoint = kAddBias;
  bias.workgroupCount = {2, 1, 1};
  bias.bindings = {{1, 0, 512}, {2, 0, 256}, {3, 0, 512}};
  function.commands = {scale, bias};

  ParameterSpec parameter;
  parameter.signature = {"bias", DType::F32, {64}};
  parameter.init = lcm::ParameterInit::Normal;
  parameter.initScale = 0.5f;
  if (embeddedBias)
    parameter.data = toBytes(*embeddedBias);

  ModuleSpec module;
  module.functions = {function};
  module.parameters = {parameter};
  module.executables = {kernelExecutable()};
  return module;
}

ModuleSpec copyModule() {
  FunctionSpec function;
  function.name = "copy";
  function.inputs = {{"x", DType::F32, {4, 16}}};
  function.outputs = {{"y", DType::F32, {4, 16}}, {"row3", DType::F32, {16}}};
  function.arenaSize = 256;
  function.buffers = {{BufferKind::Input, 0, 256, 0},
                      {BufferKind::Transient, 0, 256, 0},
                      {BufferKind::Output, 0, 256, 0},
                      {BufferKind::Output, 1, 64, 0}};
  CommandSpec toArena;
  toArena.kind = CommandKind::Copy;
  toArena.name = "to_arena";
  toArena.source = {0, 0, 256};
  toArena.target = {1, 0, 256};
  CommandSpec toOutput = toArena;
  toOutput.name = "to_output";
  toOutput.source = {1, 0, 256};
  toOutput.target = {2, 0, 256};
  CommandSpec lastRow = toArena;
  lastRow.name = "last_row";
  lastRow.source = {0, 192, 64};
  lastRow.target = {3, 0, 64};
  function.commands = {toArena, toOutput, lastRow};
  ModuleSpec module;
  module.functions = {function};
  return module;
}

ModuleSpec reduceOverRanksModule() {
  ModuleSpec spec = copyModule();
  CommandSpec mean, sum;
  mean.kind = sum.kind = CommandKind::AllReduce;
  mean.name = "mean";
  mean.ranges = {{1, 0, 128}};
  sum.name = "sum";
  sum.reduction = lcm::Reduction::Sum;
  sum.ranges = {{1, 128, 64}, {1, 192, 64}};
  auto &commands = spec.functions[0].commands;
  commands.insert(commands.begin() + 1, {mean, sum});
  return spec;
}

ModuleSpec exchangeModule(uint64_t ranks) {
  FunctionSpec function;
  function.name = "exchange";
  function.inputs = {{"x", DType::F32, {4, 16}}};
  int64_t blockCount = int64_t(ranks);
  function.outputs = {{"blocks", DType::F32, {4, 16}},
                      {"shifted", DType::F32, {4, 16}},
                      {"mine", DType::F32, {16}},
                      {"padded", DType::F32, {blockCount, 16}}};
  function.arenaSize = 256;
  function.buffers = {{BufferKind::Input, 0, 256, 0},
                      {BufferKind::Transient, 0, 256, 0},
                      {BufferKind::Output, 0, 256, 0},
                      {BufferKind::Output, 1, 256, 0},
                      {BufferKind::Output, 2, 64, 0},
                      {BufferKind::Output, 3, 64 * ranks, 0}};
  CommandSpec toArena;
  toArena.kind = CommandKind::Copy;
  toArena.name = "to_arena";
  toArena.source = {0, 0, 256};
  toArena.target = {1, 0, 256};
  CommandSpec blocks;
  blocks.kind = CommandKind::Exchange;
  blocks.name = "blocks";
  blocks.blocks = ranks;
  blocks.source = {1, 0, 256};
  blocks.target = {2, 0, 256};
  CommandSpec shifted = blocks;
  shifted.name = "shifted";
  shifted.pattern = lcm::ExchangePattern::Ring;
  shifted.ringOffset = -1;
  shifted.target = {3, 0, 256};
  CommandSpec mine = blocks;
  mine.name = "mine";
  mine.pattern = lcm::ExchangePattern::RankSlice;
  mine.source = {1, 0, 64 * ranks};
  mine.target = {4, 0, 64};
  CommandSpec padded = mine;
  padded.name = "padded";
  padded.pattern = lcm::ExchangePattern::RankPad;
  padded.source = {1, 0, 64};
  padded.target = {5, 0, 64 * ranks};
  function.commands = {toArena, blocks, shifted, mine, padded};
  ModuleSpec module;
  module.functions = {function};
  return module;
}

ModuleSpec gridModule() {
  FunctionSpec grid;
  grid.name = "grid";
  grid.outputs = {{"ids", DType::I32, {2, 3, 4}}};
  grid.buffers = {{BufferKind::Output, 0, 96, 0}};
  CommandSpec ids;
  ids.name = "grid_ids";
  ids.entryPoint = kGridIds;
  ids.workgroupCount = {4, 3, 2};
  ids.bindings = {{0, 0, 96}};
  grid.commands = {ids};

  FunctionSpec visits;
  visits.name = "visits";
  visits.outputs = {{"visits", DType::I32, {1000}}};
  visits.buffers = {{BufferKind::Output, 0, 4000, 0}};
  CommandSpec count;
  count.name = "count_visits";
  count.entryPoint = kCountVisits;
  count.workgroupCount = {1000, 1, 1};
  count.bindings = {{0, 0, 4000}};
  visits.commands = {count};

  ModuleSpec module;
  module.functions = {grid, visits};
  module.executables = {kernelExecutable()};
  return module;
}

ModuleSpec widenModule() {
  // bf16 is the top half of an f32: 1.5, -2, 0.25, 3.
  std::vector<uint8_t> data;
  for (uint16_t bits : {uint16_t(0x3fc0), uint16_t(0xc000), uint16_t(0x3e80),
                        uint16_t(0x4040)}) {
    data.push_back(uint8_t(bits));
    data.push_back(uint8_t(bits >> 8));
  }
  ParameterSpec parameter;
  parameter.signature = {"values", DType::BF16, {4}};
  parameter.data = data;

  FunctionSpec function;
  function.name = "widen";
  function.outputs = {{"values", DType::BF16, {4}}};
  function.buffers = {{BufferKind::Parameter, 0, 8, 0},
                      {BufferKind::Output, 0, 8, 0}};
  CommandSpec copy;
  copy.kind = CommandKind::Copy;
  copy.name = "copy_values";
  copy.source = {0, 0, 8};
  copy.target = {1, 0, 8};
  function.commands = {copy};
  ModuleSpec module;
  module.functions = {function};
  module.parameters = {parameter};
  return module;
}

ModuleSpec parameterInitModule() {
  using lcm::ParameterInit;
  ModuleSpec module;
  module.parameters = {
      {{"w.normal", DType::F32, {100, 101}}, ParameterInit::Normal, 0.02f, {}},
      {{"w.zeros", DType::F32, {3, 5}}, ParameterInit::Zeros, 0, {}},
      {{"w.ones.f16", DType::F16, {7}}, ParameterInit::Ones, 0, {}},
      {{"w.ones.i64", DType::I64, {2}}, ParameterInit::Ones, 0, {}},
      {{"w.normal.bf16", DType::BF16, {3}}, ParameterInit::Normal, 1.0f, {}},
      {{"w.embedded", DType::F32, {1}},
       ParameterInit::Ones,
       0,
       toBytes({42.0f})},
  };
  return module;
}

ModuleSpec trainingModule() {
  std::vector<SignatureSpec> inputs = {
      {"x", DType::F32, {4, 16}},
      {"weight", DType::I32, {4}, std::vector<int64_t>{0, 3}}};
  SignatureSpec loss = {"loss", DType::F32, {}};
  // Buffers: the inputs, the parameters w and optimizer.steps, the outputs.
  std::vector<BufferSpec> buffers = {
      {BufferKind::Input, 0, 256, 0},    {BufferKind::Input, 1, 16, 0},
      {BufferKind::Parameter, 0, 64, 0}, {BufferKind::Parameter, 1, 4, 0},
      {BufferKind::Output, 0, 4, 0},     {BufferKind::Output, 1, 64, 0}};
  auto function = [&](const char *name, uint32_t kernel,
                      std::vector<uint32_t> bound) {
    FunctionSpec spec;
    spec.name = name;
    spec.inputs = inputs;
    spec.outputs = {loss};
    CommandSpec command;
    command.name = name;
    command.entryPoint = kernel;
    for (uint32_t buffer : bound) {
      spec.buffers.push_back(buffers[buffer]);
      command.bindings.push_back(
          {uint32_t(spec.buffers.size() - 1), 0, buffers[buffer].size});
    }
    spec.commands = {command};
    return spec;
  };
  FunctionSpec gradients =
      function("loss_gradients", kMseGradients, {0, 1, 2, 4, 5});
  gradients.outputs.push_back({"w", DType::F32, {16}});
  ModuleSpec module;
  module.functions = {function("loss", kMseLoss, {0, 1, 2, 4}),
                      function("train_step", kMseTrainStep, {0, 1, 2, 3, 4}),
                      gradients};
  ParameterSpec w;
  w.signature = {"w", DType::F32, {16}};
  w.init = lcm::ParameterInit::Normal;
  w.initScale = 1.0f;
  ParameterSpec steps;
  steps.signature = {"optimizer.steps", DType::F32, {1}};
  steps.state = true;
  module.parameters = {w, steps};
  module.executables = {trainingExecutable()};
  return module;
}

} // namespace lcc::test
