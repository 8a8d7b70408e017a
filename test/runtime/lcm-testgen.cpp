//===- lcm-testgen.cpp - writes sample modules for the lcc-run tests ------===//
//
// lcm-testgen DIR
//
// Writes the sample modules of TestModules.h (valid and broken), their
// inputs as .npy and weights as .safetensors into DIR, for the lit tests of
// lcc-run (test/tools/lcc-run-*.test). Test-only: not installed.
//
//===----------------------------------------------------------------------===//

#include "formats/Npy.h"
#include "formats/Safetensors.h"

#include "TestModules.h"

#include <cmath>
#include <cstdio>
#include <string>

using namespace lcc;
using namespace lcc::runtime;
using namespace lcc::test;

namespace {

std::string directory;

bool writeOut(const std::string &name, const std::vector<uint8_t> &bytes) {
  std::string path = directory + "/" + name;
  FILE *file = std::fopen(path.c_str(), "wb");
  if (!file) {
    std::fprintf(stderr, "lcm-testgen: error: cannot write '%s'\n",
                 path.c_str());
    return false;
  }
  if (!bytes.empty())
    std::fwrite(bytes.data(), 1, bytes.size(), file);
  return std::fclose(file) == 0;
}

template <typename T>
std::vector<uint8_t> npy(DType dtype, const std::vector<int64_t> &shape,
                         const std::vector<T> &values) {
  return encodeNpy(dtype, shape, values.data());
}

/// 0, 1, 2, ... scaled by `step`.
std::vector<float> ramp(size_t count, float step = 1) {
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i)
    values[i] = float(i) * step;
  return values;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: lcm-testgen DIR\n");
    return 2;
  }
  directory = argv[1];
  bool ok = true;

  // Valid modules (see TestModules.h for what each computes).
  ok &= writeOut("add.lcm", buildModule(vectorAddModule(128)));
  ok &= writeOut("matmul.lcm", buildModule(matmulModule()));
  ok &= writeOut("affine.lcm", buildModule(affineModule()));
  ok &= writeOut("copy.lcm", buildModule(copyModule()));
  ok &= writeOut("reduce.lcm", buildModule(reduceOverRanksModule()));
  ok &= writeOut("exchange.lcm", buildModule(exchangeModule(2)));
  ok &= writeOut("grid.lcm", buildModule(gridModule()));
  ok &= writeOut("widen.lcm", buildModule(widenModule()));
  ok &= writeOut("params.lcm", buildModule(parameterInitModule()));
  // add with PTX and a cubin too; the GPU code only runs on the tests' fake
  // driver (LCC_CUDA_DRIVER=libfake-cuda.so).
  ok &= writeOut("add-gpu.lcm",
                 buildModule(withGpuExecutables(vectorAddModule(128))));

  // Inputs: add sums to 3 * (0 + ... + 127) = 24384.
  ok &= writeOut("a.npy", npy(DType::F32, {128}, ramp(128)));
  ok &= writeOut("b.npy", npy(DType::F32, {128}, ramp(128, 2)));
  ok &= writeOut("a-short.npy", npy(DType::F32, {64}, ramp(64)));
  ok &= writeOut("a-i32.npy",
                 npy(DType::I32, {128}, std::vector<int32_t>(128, 1)));
  ok &= writeOut("A.npy", npy(DType::F32, {8, 6}, ramp(48)));
  ok &= writeOut("B.npy", npy(DType::F32, {6, 12}, ramp(72)));
  ok &= writeOut("x4x16.npy", npy(DType::F32, {4, 16}, ramp(64)));
  ok &= writeOut("not-npy.npy", {'n', 'o', 't', ' ', 'n', 'p', 'y'});
  std::vector<uint8_t> fortran = encodeNpy(DType::F32, {2, 2}, ramp(4).data());
  std::string header(fortran.begin(), fortran.end());
  header.replace(header.find("False"), 5, "True ");
  ok &= writeOut("fortran.npy",
                 std::vector<uint8_t>(header.begin(), header.end()));

  // Weights: affine on x = 0..127 with bias[i] = i sums to
  // 2 * 8128 + 2 * 2016 = 20288.
  HostTensor bias{DType::F32, {64}, toBytes(ramp(64))};
  ok &= writeOut("x.npy", npy(DType::F32, {128}, ramp(128)));
  ok &= writeOut("bias.safetensors", encodeSafetensors({{"bias", bias}}));
  ok &= writeOut("other.safetensors", encodeSafetensors({{"other", bias}}));
  HostTensor shortBias{DType::F32, {32}, toBytes(ramp(32))};
  ok &= writeOut("short-bias.safetensors",
                 encodeSafetensors({{"bias", shortBias}}));

  // Training (lcc-train-*.test): the toy model of trainingModule() and
  // data for it, 12 rows (3 batches of 4), with one bad file per error.
  ok &= writeOut("train.lcm", buildModule(trainingModule()));
  ModuleSpec untrained = trainingModule();
  untrained.functions.erase(untrained.functions.begin());
  ok &= writeOut("train-no-loss.lcm", buildModule(untrained));
  auto trainX = [](int64_t rows) {
    std::vector<float> x(static_cast<size_t>(rows) * 16);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < 16; ++j)
        x[size_t(r * 16 + j)] = float((r * 7 + j * 3) % 11) * 0.25f - 1;
    return x;
  };
  auto trainWeight = [](int64_t rows) {
    std::vector<int32_t> weight(static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r)
      weight[size_t(r)] = int32_t(1 + r % 3);
    return weight;
  };
  ok &= writeOut("train-x.npy", npy(DType::F32, {12, 16}, trainX(12)));
  ok &= writeOut("train-weight.npy", npy(DType::I32, {12}, trainWeight(12)));
  ok &= writeOut("train-x4.npy", npy(DType::F32, {4, 16}, trainX(4)));
  ok &= writeOut("train-weight4.npy", npy(DType::I32, {4}, trainWeight(4)));
  ok &= writeOut("eval-x.npy", npy(DType::F32, {9, 16}, trainX(9)));
  ok &= writeOut("eval-weight.npy", npy(DType::I32, {9}, trainWeight(9)));
  ok &= writeOut("train-x3.npy", npy(DType::F32, {3, 16}, trainX(3)));
  ok &= writeOut("train-x-wide.npy", npy(DType::F32, {12, 15}, trainX(12)));
  ok &= writeOut("train-weight10.npy", npy(DType::I32, {10}, trainWeight(10)));
  ok &= writeOut("train-weight-f32.npy",
                 npy(DType::F32, {12}, std::vector<float>(12, 1)));
  std::vector<int32_t> outOfRange = trainWeight(12);
  outOfRange[5] = 7;
  ok &= writeOut("train-weight-bad.npy", npy(DType::I32, {12}, outOfRange));
  // Row 9 is in the third batch: the loss is nan at step 3.
  std::vector<float> withNan = trainX(12);
  withNan[9 * 16 + 2] = std::nanf("");
  ok &= writeOut("train-x-nan.npy", npy(DType::F32, {12, 16}, withNan));

  // Broken modules, one problem each.
  std::vector<uint8_t> add = buildModule(vectorAddModule(128));
  ok &= writeOut("empty.lcm", {});
  ok &=
      writeOut("truncated.lcm",
               std::vector<uint8_t>(add.begin(), add.begin() + add.size() / 2));
  std::vector<uint8_t> corrupted = add;
  corrupted[0] ^= 0x7f;
  ok &= writeOut("corrupted.lcm", corrupted);
  ModuleSpec spec = vectorAddModule(128);
  spec.identifier = "ABCD";
  ok &= writeOut("wrong-identifier.lcm", buildModule(spec));
  spec = vectorAddModule(128);
  spec.version = 1;
  ok &= writeOut("version1.lcm", buildModule(spec));
  spec = vectorAddModule(128);
  spec.functions[0].commands[0].bindings[2].buffer = 9;
  ok &= writeOut("bad-binding.lcm", buildModule(spec));
  spec = vectorAddModule(128);
  spec.executables[0].entryPoints[kVectorAdd].name = "vector_sub";
  ok &= writeOut("missing-symbol.lcm", buildModule(spec));
  spec = vectorAddModule(128);
  spec.executables = {fakeGpuExecutable(lcm::ExecutableFormat::Ptx)};
  ok &= writeOut("ptx.lcm", buildModule(spec));
  // Memory bombs: small files that declare a 1 TiB arena, or 2 GiB of
  // parameters.
  spec = affineModule();
  spec.functions[0].arenaSize = uint64_t(1) << 40;
  spec.functions[0].buffers[1].arenaOffset = (uint64_t(1) << 40) - 512;
  ok &= writeOut("huge-arena.lcm", buildModule(spec));
  spec = parameterInitModule();
  spec.parameters[0].signature.shape = {int64_t(1) << 29}; // 2 GiB of f32
  ok &= writeOut("huge-params.lcm", buildModule(spec));
  spec.parameters[0].signature.shape = {int64_t(1) << 38}; // 1 TiB
  ok &= writeOut("huger-params.lcm", buildModule(spec));
  // A dispatch edited to run 8x the workgroups its kernel was compiled for,
  // and a binding cut short (these ran out of bounds).
  spec = pinKernelRequirements(affineModule());
  spec.functions[0].commands[1].workgroupCount[0] *= 8;
  ok &= writeOut("edited-workgroups.lcm", buildModule(spec));
  spec = pinKernelRequirements(affineModule());
  spec.functions[0].commands[1].bindings[2].length = 256;
  ok &= writeOut("cut-binding.lcm", buildModule(spec));
  // Names that would forge lines or print NUL bytes if echoed raw.
  spec = vectorAddModule(128);
  spec.functions[0].name = "add\nlcc-run: error: forged";
  ok &= writeOut("forged-name.lcm", buildModule(spec));
  return ok ? 0 : 1;
}
