//===- ExecutableSelectionTest.cpp - which executable a device runs -------===//
//
// The rule of ExecutableSelection.h on modules as the compiler writes them:
// a cubin of the device's architecture first, else PTX it can JIT, else an
// error that lists what the module holds.
//
//===----------------------------------------------------------------------===//

#include "module/ExecutableSelection.h"
#include "module/Loader.h"

#include "TestModules.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

using namespace lcc;
using namespace lcc::runtime;
using namespace lcc::test;

namespace {

using lcm::ExecutableFormat;

/// A checked module holding vector_add's function and `executables`.
std::shared_ptr<const Module>
moduleWith(const std::vector<ExecutableSpec> &executables) {
  ModuleSpec spec = vectorAddModule(64);
  spec.executables = executables;
  std::vector<uint8_t> bytes = buildModule(spec);
  StatusOr<std::shared_ptr<const Module>> module =
      loadModuleFromMemory(bytes.data(), bytes.size());
  EXPECT_EQ(messageOf(module), "<ok>");
  return module.ok() ? *module : nullptr;
}

ExecutableSpec ptx(const std::string &target) {
  return fakeGpuExecutable(ExecutableFormat::Ptx, target);
}

ExecutableSpec cubin(const std::string &target) {
  return fakeGpuExecutable(ExecutableFormat::Cubin, target);
}

/// The index chosen for `target`, or the error message.
std::string select(const Module &module, const DeviceTarget &target) {
  StatusOr<size_t> index = selectExecutable(module.get(), target);
  return index.ok() ? std::to_string(*index) : messageOf(index);
}

TEST(ExecutableSelection, ParsesArchitectures) {
  std::optional<CudaArchitecture> sm90 = parseCudaArchitecture("sm_90");
  ASSERT_TRUE(sm90);
  EXPECT_EQ(sm90->version, 90u);
  EXPECT_FALSE(sm90->specific);
  std::optional<CudaArchitecture> sm90a = parseCudaArchitecture("sm_90a");
  ASSERT_TRUE(sm90a);
  EXPECT_EQ(sm90a->version, 90u);
  EXPECT_TRUE(sm90a->specific);
  EXPECT_EQ(parseCudaArchitecture("sm_120")->version, 120u);
  for (const char *bad : {"", "sm", "sm_", "sm_9", "sm_09", "sm_90b", "sm_90aa",
                          "compute_90", "SM_90", "sm_123456"})
    EXPECT_FALSE(parseCudaArchitecture(bad)) << bad;
  EXPECT_EQ(formatCudaArchitecture(9, 0), "sm_90");
  EXPECT_EQ(formatCudaArchitecture(8, 6), "sm_86");
  EXPECT_EQ(formatCudaArchitecture(12, 0), "sm_120");
}

TEST(ExecutableSelection, CpuRunsTheHostSharedObject) {
  auto module = moduleWith({ptx("sm_90"), cubin("sm_90"), kernelExecutable()});
  ASSERT_TRUE(module);
  EXPECT_EQ(select(*module, DeviceTarget::cpu()), "2");
}

TEST(ExecutableSelection, CudaPrefersTheCubinOfItsArchitecture) {
  // As the compiler writes them: CPU, PTX, cubin.
  auto module = moduleWith({kernelExecutable(), ptx("sm_90"), cubin("sm_90")});
  ASSERT_TRUE(module);
  EXPECT_EQ(select(*module, DeviceTarget::cuda(9, 0)), "2");
  auto specific = moduleWith({ptx("sm_90"), cubin("sm_90a")});
  ASSERT_TRUE(specific);
  EXPECT_EQ(select(*specific, DeviceTarget::cuda(9, 0)), "1");
  // A cubin of another architecture is never used, even an older one.
  auto older = moduleWith({cubin("sm_80"), ptx("sm_80")});
  ASSERT_TRUE(older);
  EXPECT_EQ(select(*older, DeviceTarget::cuda(8, 6)), "1");
}

TEST(ExecutableSelection, CudaFallsBackToPtx) {
  // A newer device JITs the sm_90 PTX: sm_100 (B200), sm_120.
  auto module = moduleWith({kernelExecutable(), ptx("sm_90"), cubin("sm_90")});
  ASSERT_TRUE(module);
  EXPECT_EQ(select(*module, DeviceTarget::cuda(10, 0)), "1");
  EXPECT_EQ(select(*module, DeviceTarget::cuda(12, 0)), "1");
}

TEST(ExecutableSelection, CudaTakesTheNewestPtxItCanJit) {
  auto module = moduleWith({ptx("sm_70"), ptx("sm_90"), ptx("sm_80")});
  ASSERT_TRUE(module);
  EXPECT_EQ(select(*module, DeviceTarget::cuda(8, 6)), "2");
  EXPECT_EQ(select(*module, DeviceTarget::cuda(8, 0)), "2");
  EXPECT_EQ(select(*module, DeviceTarget::cuda(7, 5)), "0");
  EXPECT_EQ(select(*module, DeviceTarget::cuda(9, 0)), "1");
  // "a" PTX uses features of exactly its architecture.
  auto specific = moduleWith({ptx("sm_80"), ptx("sm_90a")});
  ASSERT_TRUE(specific);
  EXPECT_EQ(select(*specific, DeviceTarget::cuda(9, 0)), "1");
  EXPECT_EQ(select(*specific, DeviceTarget::cuda(10, 0)), "0");
}

TEST(ExecutableSelection, RefusesPtxTooNewForTheDevice) {
  auto module = moduleWith({kernelExecutable(), cubin("sm_90"), ptx("sm_90")});
  ASSERT_TRUE(module);
  StatusOr<size_t> index =
      selectExecutable(module->get(), DeviceTarget::cuda(8, 0));
  EXPECT_EQ(messageOf(index),
            "module has no code for the cuda device sm_80: it holds x86_64 "
            "(HostSharedObject), sm_90 (Cubin), sm_90 (Ptx)");
  EXPECT_EQ(index.getStatus().getCode(), StatusCode::Unavailable);
}

TEST(ExecutableSelection, RefusesModulesWithoutCodeForTheDevice) {
  auto cpuOnly = moduleWith({kernelExecutable()});
  ASSERT_TRUE(cpuOnly);
  EXPECT_EQ(select(*cpuOnly, DeviceTarget::cuda(9, 0)),
            "module has no code for the cuda device sm_90: it holds x86_64 "
            "(HostSharedObject)");
  auto gpuOnly = moduleWith({ptx("sm_90"), cubin("sm_90a")});
  ASSERT_TRUE(gpuOnly);
  EXPECT_EQ(select(*gpuOnly, DeviceTarget::cpu()),
            "module has no code for the cpu device: it holds sm_90 (Ptx), "
            "sm_90a (Cubin)");
  std::vector<uint8_t> bytes = buildModule(copyModule());
  StatusOr<std::shared_ptr<const Module>> none =
      loadModuleFromMemory(bytes.data(), bytes.size());
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(select(**none, DeviceTarget::cuda(9, 0)),
            "module has no code for the cuda device sm_90: it holds no "
            "executables");
}

} // namespace
