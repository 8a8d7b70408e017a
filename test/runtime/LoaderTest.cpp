//===- LoaderTest.cpp - the .lcm loader's checks --------------------------===//
//
// Each malformed module gives one exact message naming the item, and no
// input, however corrupted, crashes the loader.
//
//===----------------------------------------------------------------------===//

#include "module/Loader.h"
#include "devices/cpu/CpuDevice.h"
#include "module/Session.h"

#include "TestModules.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace lcc;
using namespace lcc::runtime;
using namespace lcc::test;

namespace {

std::string loadError(const std::vector<uint8_t> &bytes) {
  return messageOf(loadModuleFromMemory(bytes.data(), bytes.size()));
}

std::string loadError(const ModuleSpec &spec) {
  return loadError(buildModule(spec));
}

TEST(Loader, LoadsEachSampleModule) {
  for (const ModuleSpec &spec :
       {vectorAddModule(), matmulModule(), affineModule(), copyModule(),
        gridModule(), widenModule(), parameterInitModule(), trainingModule(),
        withGpuExecutables(affineModule())})
    EXPECT_EQ(loadError(spec), "<ok>");
  std::vector<uint8_t> bytes = buildModule(gridModule());
  StatusOr<std::shared_ptr<const Module>> module =
      loadModuleFromMemory(bytes.data(), bytes.size());
  ASSERT_TRUE(module.ok());
  EXPECT_EQ((*module)->getFunctionCount(), 2u);
  EXPECT_EQ(*(*module)->findFunction("visits"), 1u);
  EXPECT_EQ(messageOf((*module)->findFunction("nope")),
            "no function 'nope' in the module; it has 'grid', 'visits'");
}

TEST(Loader, RejectsEmptyFile) {
  EXPECT_EQ(loadError(std::vector<uint8_t>{}), "empty file, not an lcc module");
}

TEST(Loader, RejectsFileShorterThanAHeader) {
  EXPECT_EQ(loadError(std::vector<uint8_t>{1, 2, 3, 4, 5}),
            "file of 5 bytes is too small to be an lcc module");
}

TEST(Loader, RejectsWrongIdentifier) {
  ModuleSpec spec = vectorAddModule();
  spec.identifier = "LCM2";
  EXPECT_EQ(loadError(spec),
            "not an lcc module: file identifier 'LCM2', expected 'LCM1'");
  std::vector<uint8_t> bytes = buildModule(vectorAddModule());
  bytes[4] = 0x00;
  bytes[5] = 0xff;
  EXPECT_EQ(loadError(bytes), "not an lcc module: file identifier "
                              "'\\x00\\xffM1', expected 'LCM1'");
}

TEST(Loader, RejectsOtherVersions) {
  // Version 1 dispatched an executable of its choice; version 2 lets the
  // device choose; version 3 states what each kernel was compiled for;
  // version 4 marks optimizer state; version 5 checksums embedded bytes;
  // version 6 gives hyper-parameters their starting value (Constant init);
  // version 7 adds collectives among ranks (all-reduce commands), 8
  // exchanges (all-to-all, ring shift), 9 zigzag shares of the positions.
  ModuleSpec spec = vectorAddModule();
  spec.version = 8;
  EXPECT_EQ(loadError(spec),
            "unsupported module version 8; this runtime reads version 9");
  spec.version = 10;
  EXPECT_EQ(loadError(spec),
            "unsupported module version 10; this runtime reads version 9");
}

// Every bit of an executable's code and of an embedded parameter is
// covered by its checksum: one flipped bit anywhere in them is refused at
// load, before anything is mapped (a flip in the code had run to a crash
// or, worse, to a different result).
TEST(Loader, RejectsEveryBitFlipInCodeAndConstants) {
  std::vector<float> bias(64, 0.25f);
  ModuleSpec spec = withGpuExecutables(affineModule(&bias));
  for (size_t e = 0; e < spec.executables.size(); ++e) {
    const std::vector<uint8_t> &code = spec.executables[e].data;
    // Every bit of the first and last 8 bytes, and one bit of every 13th
    // byte between (a CRC catches every single-bit flip: this checks that
    // the loader asks it over the whole code).
    for (size_t bit = 0; bit < code.size() * 8; ++bit) {
      size_t byte = bit / 8;
      if (byte >= 8 && byte + 8 < code.size() &&
          (byte % 13 != 0 || bit % 8 != byte % 8))
        continue;
      ModuleSpec corrupted = spec;
      corrupted.executables[e].dataChecksum =
          lcm::checksum(code.data(), code.size());
      corrupted.executables[e].data[byte] ^= uint8_t(1u << (bit % 8));
      ASSERT_EQ(loadError(corrupted),
                "executables[" + std::to_string(e) + "] is corrupted: its " +
                    std::to_string(code.size()) +
                    " bytes of data do not match their checksum")
          << "bit " << bit;
    }
  }
  const std::vector<uint8_t> &constants = *spec.parameters[0].data;
  for (size_t bit = 0; bit < constants.size() * 8; ++bit) {
    ModuleSpec corrupted = spec;
    corrupted.parameters[0].dataChecksum =
        lcm::checksum(constants.data(), constants.size());
    (*corrupted.parameters[0].data)[bit / 8] ^= uint8_t(1u << (bit % 8));
    ASSERT_EQ(loadError(corrupted),
              "parameters[0] 'bias' is corrupted: its 256 bytes of data do "
              "not match their checksum");
  }
}

TEST(Loader, RequiresChecksumsOfEmbeddedBytes) {
  std::vector<float> bias(64, 0.25f);
  ModuleSpec spec = affineModule(&bias);
  spec.executables[0].writeChecksum = false;
  EXPECT_EQ(loadError(spec),
            "executables[0] has no data_checksum for its " +
                std::to_string(spec.executables[0].data.size()) +
                " bytes of data");
  spec = affineModule(&bias);
  spec.parameters[0].writeChecksum = false;
  EXPECT_EQ(loadError(spec), "parameters[0] 'bias' has no data_checksum for "
                             "its 256 bytes of data");
  spec = affineModule();
  spec.parameters[0].dataChecksum = 1;
  EXPECT_EQ(loadError(spec),
            "parameters[0] 'bias' has a data_checksum but no data");
  EXPECT_EQ(loadError(affineModule(&bias)), "<ok>");
}

TEST(Loader, RejectsCorruptedRootOffset) {
  std::vector<uint8_t> bytes = buildModule(vectorAddModule());
  bytes[0] = 0xf0;
  bytes[1] = 0xff;
  bytes[2] = 0xff;
  bytes[3] = 0x7f;
  EXPECT_EQ(loadError(bytes), "corrupted or truncated module (FlatBuffers "
                              "verification failed)");
}

TEST(Loader, PrefixesFileErrorsWithThePath) {
  TempDir dir;
  writeBytes(dir.file("empty.lcm"), {});
  EXPECT_EQ(messageOf(loadModuleFromFile(dir.file("empty.lcm"))),
            dir.file("empty.lcm") + ": empty file, not an lcc module");
  EXPECT_EQ(messageOf(loadModuleFromFile(dir.file("missing.lcm"))),
            "cannot open '" + dir.file("missing.lcm") +
                "': No such file or directory");
  EXPECT_EQ(loadModuleFromFile(dir.file("missing.lcm")).getStatus().getCode(),
            StatusCode::NotFound);
  EXPECT_EQ(messageOf(loadModuleFromFile(dir.path())),
            "cannot read '" + dir.path() + "': Is a directory");
  writeBytes(dir.file("add.lcm"), buildModule(vectorAddModule()));
  EXPECT_EQ(messageOf(loadModuleFromFile(dir.file("add.lcm"))), "<ok>");
}

// Every strict prefix of a valid module fails cleanly, except one that only
// drops trailing alignment padding (FlatBuffers writes back to front, so the
// first-written object may be followed by zero padding nothing refers to).
TEST(Loader, RejectsEveryTruncation) {
  for (const ModuleSpec &spec : {affineModule(), copyModule()}) {
    std::vector<uint8_t> bytes = buildModule(spec);
    size_t loaded = 0;
    for (size_t length = 0; length < bytes.size(); ++length) {
      StatusOr<std::shared_ptr<const Module>> module =
          loadModuleFromMemory(bytes.data(), length);
      if (module.ok()) {
        ++loaded;
        for (size_t i = length; i < bytes.size(); ++i)
          ASSERT_EQ(bytes[i], 0) << "a prefix of " << length << " of "
                                 << bytes.size() << " bytes loaded";
        continue;
      }
      EXPECT_EQ(module.getStatus().getCode(), StatusCode::InvalidModule);
    }
    EXPECT_LT(loaded, 8u);
  }
}

/// Whether `code` is the code of one of `executables`.
bool isCodeOf(const std::vector<ExecutableSpec> &executables,
              const std::vector<uint8_t> &code) {
  for (const ExecutableSpec &executable : executables)
    if (executable.data == code)
      return true;
  return false;
}

/// Whether running `module` needs little enough memory to try in a test.
bool isSmall(const Module &module) {
  uint64_t total = 0;
  for (size_t i = 0; i < module.getFunctionCount(); ++i)
    total += module.getFunction(i).arena_size();
  return total < (1u << 20);
}

// Every single-byte corruption of a module either fails to load with a
// message or loads; a module that loads is then run as far as is safe:
// the Copy-only module is called (its commands are all memmoves the loader
// bounded), the module with kernels gets its functions prepared (kernels
// trust their bindings, so they are not called on a corrupted module).
TEST(Loader, SurvivesEveryByteFlip) {
  struct Case {
    ModuleSpec spec;
    bool call;
  };
  for (const Case &c : {Case{copyModule(), true}, Case{affineModule(), false},
                        Case{withGpuExecutables(affineModule()), false}}) {
    std::vector<uint8_t> original = buildModule(c.spec);
    size_t loaded = 0, failed = 0;
    for (size_t position = 0; position < original.size(); ++position) {
      std::vector<uint8_t> bytes = original;
      bytes[position] ^= 0xff;
      StatusOr<std::shared_ptr<const Module>> module =
          loadModuleFromMemory(bytes.data(), bytes.size());
      if (!module.ok()) {
        EXPECT_FALSE(module.getStatus().getMessage().empty());
        ++failed;
        continue;
      }
      ++loaded;
      const Module &checked = **module;
      // A flipped byte inside any code never loads: the checksums refuse
      // it, so every executable that loaded holds code of the original
      // module (a flip elsewhere may relabel or swap whole executables).
      bool touchesLibrary = false;
      const std::vector<uint8_t> &library = getKernelLibrary();
      if (checked.get().executables())
        for (const lcm::Executable *executable : *checked.get().executables()) {
          std::vector<uint8_t> code(executable->data()->begin(),
                                    executable->data()->end());
          ASSERT_TRUE(isCodeOf(c.spec.executables, code))
              << "a module whose code changed at byte " << position
              << " loaded";
          // Another executable's code labelled a shared object is not
          // dlopen'ed here: the ELF check refuses it, tested elsewhere.
          touchesLibrary |=
              executable->format() == lcm::ExecutableFormat::HostSharedObject &&
              code != library;
        }
      if (touchesLibrary || !isSmall(checked))
        continue;
      auto device = std::make_shared<CpuDevice>(2);
      StatusOr<std::unique_ptr<Session>> session =
          Session::create(device, *module);
      if (!session.ok())
        continue;
      for (size_t f = 0; f < checked.getFunctionCount(); ++f) {
        StatusOr<Function *> function =
            (*session)->lookupFunction(checked.getFunction(f).name()->str());
        if (!function.ok() || !c.call)
          continue;
        std::vector<float> x(64, 1.0f);
        int64_t shape[] = {4, 16};
        TensorView input{DType::F32, shape, 2, x.data(), 256};
        (void)(*function)->call(&input, 1);
      }
    }
    EXPECT_GT(failed, 0u);
    EXPECT_EQ(loaded + failed, original.size());
  }
}

//===----------------------------------------------------------------------===//
// One test per semantic check, each asserting the exact message.
//===----------------------------------------------------------------------===//

TEST(Loader, RejectsBindingOfMissingBuffer) {
  ModuleSpec spec = affineModule();
  spec.functions[0].commands[1].bindings[1].buffer = 9;
  EXPECT_EQ(loadError(spec), "functions[0].commands[1].bindings[1] binds "
                             "buffer 9, only 4 exist");
}

TEST(Loader, RejectsBindingBeyondItsBuffer) {
  ModuleSpec spec = affineModule();
  spec.functions[0].commands[0].bindings[1] = {1, 64, 512};
  EXPECT_EQ(loadError(spec), "functions[0].commands[0].bindings[1] binds 512 "
                             "bytes at offset 64 of buffer 1, which has 512");
}

TEST(Loader, RejectsBindingWhoseEndWrapsAround) {
  ModuleSpec spec = affineModule();
  spec.functions[0].commands[0].bindings[0] = {0, UINT64_MAX, 2};
  EXPECT_EQ(loadError(spec),
            "functions[0].commands[0].bindings[0] binds 2 bytes at offset "
            "18446744073709551615 of buffer 0, which has 512");
}

TEST(Loader, RejectsTransientBeyondTheArena) {
  ModuleSpec spec = affineModule();
  spec.functions[0].buffers[1].arenaOffset = 128;
  EXPECT_EQ(loadError(spec), "functions[0].buffers[1] holds 512 bytes at "
                             "arena_offset 128, beyond arena_size 576");
}

TEST(Loader, RejectsUnalignedArenaOffset) {
  ModuleSpec spec = affineModule();
  spec.functions[0].buffers[1].arenaOffset = 32;
  EXPECT_EQ(loadError(spec), "functions[0].buffers[1] has arena_offset 32, "
                             "not a multiple of 64");
}

TEST(Loader, RejectsUnalignedArenaSize) {
  ModuleSpec spec = affineModule();
  spec.functions[0].arenaSize = 600;
  EXPECT_EQ(loadError(spec),
            "functions[0] has arena_size 600, not a multiple of 64");
}

TEST(Loader, RejectsHugeArena) {
  ModuleSpec spec = affineModule();
  spec.functions[0].arenaSize = uint64_t(1) << 50;
  EXPECT_EQ(loadError(spec), "functions[0] has arena_size 1125899906842624, "
                             "more than the 1099511627776-byte limit");
}

TEST(Loader, RejectsTwoWorkgroupCounts) {
  ModuleSpec spec = pinKernelRequirements(affineModule());
  spec.functions[0].commands[0].workgroupCount = {2, 1};
  EXPECT_EQ(loadError(spec), "functions[0].commands[0] has 2 workgroup_count "
                             "values, expected 3");
  spec = affineModule();
  spec.executables[0].entryPoints[kScale2].workgroupCount = {2, 1};
  EXPECT_EQ(loadError(spec), "executables[0].entry_points[2] 'scale2' has 2 "
                             "workgroup_count values, expected 3");
}

TEST(Loader, RejectsZeroWorkgroupCount) {
  ModuleSpec spec = affineModule();
  spec.executables[0].entryPoints[kAddBias].workgroupCount = {2, 0, 1};
  EXPECT_EQ(loadError(spec), "executables[0].entry_points[3] 'add_bias' has "
                             "workgroup_count[1] = 0, expected >= 1");
}

TEST(Loader, RejectsTooManyWorkgroups) {
  ModuleSpec spec = affineModule();
  spec.executables[0].entryPoints[kScale2].workgroupCount = {65536, 65536, 2};
  EXPECT_EQ(loadError(spec), "executables[0].entry_points[2] 'scale2' runs "
                             "more than 4294967296 workgroups");
}

// A kernel indexes its buffers from its workgroup id and static shapes: a
// dispatch edited to run more workgroups, or to bind fewer bytes, than the
// kernel was compiled for would make it read and write outside its
// bindings (a SIGSEGV, or a silently wrong result).
TEST(Loader, RejectsADispatchOfOtherWorkgroupsThanItsKernel) {
  ModuleSpec spec = pinKernelRequirements(affineModule());
  spec.functions[0].commands[1].workgroupCount[0] *= 8;
  EXPECT_EQ(loadError(spec),
            "functions[0].commands[1] runs workgroup_count[0] = 16, entry "
            "point 'add_bias' was compiled for 2");
}

TEST(Loader, RejectsABindingShorterThanItsKernelReads) {
  ModuleSpec spec = pinKernelRequirements(affineModule());
  spec.functions[0].commands[1].bindings[0].length -= 4;
  EXPECT_EQ(loadError(spec),
            "functions[0].commands[1].bindings[0] binds 508 bytes, entry "
            "point 'add_bias' was compiled for 512");
}

TEST(Loader, RejectsKernelRequirementsOfTheWrongSize) {
  ModuleSpec spec = affineModule();
  spec.executables[0].entryPoints[kAddBias].bindingBytes =
      std::vector<uint64_t>{512, 256};
  EXPECT_EQ(loadError(spec), "executables[0].entry_points[3] 'add_bias' has "
                             "2 binding_bytes values for 3 bindings");
  spec.executables[0].entryPoints[kAddBias].bindingBytes =
      std::vector<uint64_t>{512, (uint64_t(1) << 40) + 1, 512};
  EXPECT_EQ(loadError(spec),
            "executables[0].entry_points[3] 'add_bias' binds 1099511627777 "
            "bytes at binding 1, more than the 1099511627776-byte limit");
}

TEST(Loader, RejectsExecutablesCompiledForOtherShapes) {
  ModuleSpec spec = pinKernelRequirements(withGpuExecutables(affineModule()));
  (*spec.executables[1].entryPoints[kAddBias].bindingBytes)[2] = 64;
  EXPECT_EQ(loadError(spec),
            "executables[1].entry_points[3] 'add_bias' was compiled for other "
            "workgroups or binding sizes than executables[0]'s");
}

TEST(Loader, RejectsWrongBindingCount) {
  ModuleSpec spec = pinKernelRequirements(affineModule());
  spec.functions[0].commands[1].bindings.pop_back();
  EXPECT_EQ(loadError(spec),
            "functions[0].commands[1] has 2 bindings, entry point 'add_bias' "
            "takes 3");
  spec = pinKernelRequirements(withGpuExecutables(affineModule()));
  spec.functions[0].commands[0].bindings.push_back({0, 0, 4});
  EXPECT_EQ(loadError(spec),
            "functions[0].commands[0] has 3 bindings, entry point 'scale2' "
            "takes 2");
}

// A dispatch names an entry point of the list every executable shares.
TEST(Loader, RejectsMissingEntryPoint) {
  ModuleSpec spec = affineModule();
  spec.functions[0].commands[0].entryPoint = 6;
  EXPECT_EQ(loadError(spec), "functions[0].commands[0] dispatches entry "
                             "point 6, only 6 exist");
  spec = withGpuExecutables(affineModule());
  spec.functions[0].commands[1].entryPoint = 17;
  EXPECT_EQ(loadError(spec), "functions[0].commands[1] dispatches entry "
                             "point 17, only 6 exist");
}

TEST(Loader, RejectsDispatchWithoutExecutables) {
  ModuleSpec spec = affineModule();
  spec.executables.clear();
  EXPECT_EQ(loadError(spec), "functions[0].commands[0] dispatches entry "
                             "point 2, but the module has no executables");
}

TEST(Loader, RejectsExecutablesWithDifferentEntryPointCounts) {
  ModuleSpec spec = withGpuExecutables(affineModule());
  spec.executables[2].entryPoints.pop_back();
  EXPECT_EQ(loadError(spec), "executables[2] has 5 entry points, "
                             "executables[0] has 6; every executable must "
                             "list the same ones");
  spec = withGpuExecutables(affineModule());
  spec.executables[0].entryPoints.push_back({"extra", 1});
  EXPECT_EQ(loadError(spec), "executables[1] has 6 entry points, "
                             "executables[0] has 7; every executable must "
                             "list the same ones");
}

TEST(Loader, RejectsExecutablesWithDifferentEntryPoints) {
  ModuleSpec spec = withGpuExecutables(affineModule());
  spec.executables[1].entryPoints[kAddBias].name = "add_bias_v2";
  EXPECT_EQ(loadError(spec),
            "executables[1].entry_points[3] is 'add_bias_v2' with 3 bindings, "
            "executables[0].entry_points[3] is 'add_bias' with 3; every "
            "executable must list the same entry points in the same order");
  spec = withGpuExecutables(affineModule());
  spec.executables[2].entryPoints[kGridIds].bindingCount = 2;
  EXPECT_EQ(loadError(spec),
            "executables[2].entry_points[4] is 'grid_ids' with 2 bindings, "
            "executables[0].entry_points[4] is 'grid_ids' with 1; every "
            "executable must list the same entry points in the same order");
  // The same entry points in another order name other kernels by index.
  spec = withGpuExecutables(affineModule());
  std::swap(spec.executables[1].entryPoints[0],
            spec.executables[1].entryPoints[1]);
  EXPECT_EQ(loadError(spec),
            "executables[1].entry_points[0] is 'matmul' with 3 bindings, "
            "executables[0].entry_points[0] is 'vector_add' with 3; every "
            "executable must list the same entry points in the same order");
}

TEST(Loader, RejectsGpuExecutableWithoutAnArchitecture) {
  ModuleSpec spec = withGpuExecutables(affineModule());
  spec.executables[1].target = "";
  EXPECT_EQ(loadError(spec), "executables[1] is Ptx but has no target");
  for (const char *target : {"x86_64", "sm_", "sm_9", "sm_90b", "compute_90",
                             "sm_090", "sm_1234567"}) {
    spec.executables[2].target = target;
    spec.executables[1].target = "sm_80";
    EXPECT_EQ(loadError(spec), std::string("executables[2] is Cubin for "
                                           "target '") +
                                   target +
                                   "', expected an NVIDIA architecture "
                                   "such as 'sm_90'");
  }
  spec.executables[2].target = "sm_90a";
  EXPECT_EQ(loadError(spec), "<ok>");
  // The CPU's target names nothing the loader checks.
  spec.executables[0].target = "";
  EXPECT_EQ(loadError(spec), "<ok>");
}

TEST(Loader, RejectsGpuEntryPointWithoutThreeBlockSizes) {
  ModuleSpec spec = withGpuExecutables(affineModule());
  spec.executables[1].entryPoints[2].blockSize = {64, 1};
  EXPECT_EQ(loadError(spec), "executables[1].entry_points[2] 'scale2' has 2 "
                             "block_size values, expected 3");
  spec.executables[1].entryPoints[2].blockSize = {};
  EXPECT_EQ(loadError(spec), "executables[1].entry_points[2] 'scale2' has 0 "
                             "block_size values, expected 3");
  // A host shared object's entry points need none.
  spec = withGpuExecutables(affineModule());
  spec.executables[0].entryPoints[2].blockSize = {};
  EXPECT_EQ(loadError(spec), "<ok>");
}

TEST(Loader, RejectsGpuEntryPointWithAnEmptyBlock) {
  ModuleSpec spec = withGpuExecutables(affineModule());
  spec.executables[2].entryPoints[0].blockSize = {32, 0, 1};
  EXPECT_EQ(loadError(spec), "executables[2].entry_points[0] 'vector_add' "
                             "has block_size[1] = 0, expected >= 1");
}

TEST(Loader, RejectsGpuEntryPointWithTooManyThreads) {
  ModuleSpec spec = withGpuExecutables(affineModule());
  spec.executables[1].entryPoints[1].blockSize = {1024, 1, 1};
  spec.executables[2].entryPoints[1].blockSize = {8, 8, 16};
  EXPECT_EQ(loadError(spec), "<ok>");
  spec.executables[2].entryPoints[1].blockSize = {64, 32, 1};
  EXPECT_EQ(loadError(spec), "executables[2].entry_points[1] 'matmul' has "
                             "block_size [64, 32, 1] of 2048 threads, more "
                             "than 1024");
  // A product that would wrap 32 or 64 bits is still too many.
  spec.executables[2].entryPoints[1].blockSize = {65536, 65536, 65536};
  EXPECT_EQ(loadError(spec), "executables[2].entry_points[1] 'matmul' has "
                             "block_size [65536, 65536, 65536] of over "
                             "4294967295 threads, more than 1024");
}

// Context parallelism: a tensor split over ranks names one of its
// dimensions, in a module split over several ranks, and that dimension is
// each rank's two equal chunks of positions; parameters are never split.
TEST(Loader, ChecksSplitDimensions) {
  ModuleSpec spec = affineModule();
  spec.contextParallel = 2;
  spec.functions[0].inputs[0].splitDim = 0;
  EXPECT_EQ(loadError(spec), "<ok>");
  spec.functions[0].inputs[0].splitDim = 1;
  EXPECT_EQ(loadError(spec),
            "functions[0].inputs[0] splits dimension 1 of [128] over ranks");
  spec.functions[0].inputs[0].splitDim = 0;
  spec.contextParallel = 1;
  EXPECT_EQ(loadError(spec), "functions[0].inputs[0] is split over ranks in a "
                             "module of context_parallel 1");
  spec.contextParallel = 2;
  spec.functions[0].inputs[0].shape = {127};
  EXPECT_EQ(loadError(spec),
            "functions[0].inputs[0] splits dimension 0 of [127] over ranks, "
            "whose shares are two equal chunks of positions each");
  spec = affineModule();
  spec.contextParallel = 2;
  spec.parameters[0].signature.splitDim = 0;
  EXPECT_EQ(loadError(spec), "parameters[0] is split over ranks: every rank "
                             "holds the whole of a parameter");
}

TEST(Loader, RejectsInputBufferOfWrongSize) {
  ModuleSpec spec = affineModule();
  spec.functions[0].buffers[0].size = 256;
  EXPECT_EQ(loadError(spec), "functions[0].buffers[0] has size 256, input 0 "
                             "'x' ([128] f32) needs 512");
}

TEST(Loader, RejectsOutputBufferOfWrongSize) {
  ModuleSpec spec = affineModule();
  spec.functions[0].buffers[3].size = 1024;
  EXPECT_EQ(loadError(spec), "functions[0].buffers[3] has size 1024, output "
                             "0 'y' ([128] f32) needs 512");
}

TEST(Loader, RejectsParameterBufferOfWrongSize) {
  ModuleSpec spec = affineModule();
  spec.functions[0].buffers[2].size = 512;
  EXPECT_EQ(loadError(spec), "functions[0].buffers[2] has size 512, "
                             "parameter 0 'bias' ([64] f32) needs 256");
}

TEST(Loader, RejectsMissingInput) {
  ModuleSpec spec = affineModule();
  spec.functions[0].buffers[0].index = 3;
  EXPECT_EQ(loadError(spec),
            "functions[0].buffers[0] is input 3, only 1 inputs exist");
}

TEST(Loader, RejectsMissingOutput) {
  ModuleSpec spec = affineModule();
  spec.functions[0].buffers[3].index = 1;
  EXPECT_EQ(loadError(spec),
            "functions[0].buffers[3] is output 1, only 1 outputs exist");
}

TEST(Loader, RejectsMissingParameter) {
  ModuleSpec spec = affineModule();
  spec.functions[0].buffers[2].index = 5;
  EXPECT_EQ(loadError(spec),
            "functions[0].buffers[2] is parameter 5, only 1 parameters exist");
}

TEST(Loader, RejectsUnknownBufferKind) {
  ModuleSpec spec = affineModule();
  spec.functions[0].buffers[2].kind = lcm::BufferKind(7);
  EXPECT_EQ(loadError(spec), "functions[0].buffers[2] has unknown kind 7");
}

TEST(Loader, RejectsCopyOfMissingBuffer) {
  ModuleSpec spec = copyModule();
  spec.functions[0].commands[2].source.buffer = 7;
  EXPECT_EQ(loadError(spec), "functions[0].commands[2].copy.source binds "
                             "buffer 7, only 4 exist");
}

TEST(Loader, RejectsCopyBeyondItsTarget) {
  ModuleSpec spec = copyModule();
  spec.functions[0].commands[2].target = {3, 16, 64};
  EXPECT_EQ(loadError(spec), "functions[0].commands[2].copy.target binds 64 "
                             "bytes at offset 16 of buffer 3, which has 64");
}

TEST(Loader, RejectsCopyOfUnequalLengths) {
  ModuleSpec spec = copyModule();
  spec.functions[0].commands[2].target = {3, 0, 32};
  EXPECT_EQ(loadError(spec), "functions[0].commands[2] copies 64 bytes into "
                             "a target of 32");
}

TEST(Loader, RejectsCommandWithoutItsTable) {
  ModuleSpec spec = affineModule();
  spec.functions[0].commands[0].writeDispatch = false;
  EXPECT_EQ(loadError(spec), "functions[0].commands[0] is a dispatch without "
                             "a dispatch table");
  spec = copyModule();
  spec.functions[0].commands[1].writeCopy = false;
  EXPECT_EQ(loadError(spec),
            "functions[0].commands[1] is a copy without a copy table");
}

TEST(Loader, RejectsCommandWithBothTables) {
  ModuleSpec spec = copyModule();
  spec.functions[0].commands[0].writeDispatch = true;
  EXPECT_EQ(loadError(spec), "functions[0].commands[0] has 2 command tables; "
                             "a command has the one its kind names");
}

/// copyModule with an all-reduce of `ranges` after its first copy.
ModuleSpec allReduceModule(std::vector<BindingSpec> ranges) {
  ModuleSpec spec = copyModule();
  CommandSpec reduce;
  reduce.kind = lcm::CommandKind::AllReduce;
  reduce.name = "gradients";
  reduce.ranges = std::move(ranges);
  auto &commands = spec.functions[0].commands;
  commands.insert(commands.begin() + 1, reduce);
  return spec;
}

TEST(Loader, ChecksAllReduces) {
  EXPECT_EQ(loadError(allReduceModule({{1, 0, 128}, {1, 128, 128}})), "<ok>");
  EXPECT_EQ(loadError(allReduceModule({})),
            "functions[0].commands[1] is an all-reduce of no range");
  EXPECT_EQ(loadError(allReduceModule({{1, 0, 130}})),
            "functions[0].commands[1].ranges[0] is 130 bytes, not whole f32 "
            "elements");
  EXPECT_EQ(loadError(allReduceModule({{1, 0, 128}, {1, 64, 128}})),
            "functions[0].commands[1].ranges[1] overlaps range 0");
  EXPECT_EQ(loadError(allReduceModule({{0, 0, 64}})),
            "functions[0].commands[1].ranges[0] reduces in place into input "
            "buffer 0");
  EXPECT_EQ(loadError(allReduceModule({{1, 0, 512}})),
            "functions[0].commands[1].ranges[0] binds 512 bytes at offset 0 of "
            "buffer 1, which has 256");
  ModuleSpec spec = allReduceModule({{1, 0, 64}});
  spec.functions[0].commands[1].reduction = lcm::Reduction(7);
  EXPECT_EQ(loadError(spec),
            "functions[0].commands[1] has unknown reduction 7");
  spec = allReduceModule({{1, 0, 64}});
  spec.functions[0].commands[1].writeAllReduce = false;
  EXPECT_EQ(loadError(spec), "functions[0].commands[1] is an all-reduce "
                             "without an all_reduce table");
}

TEST(Loader, ChecksExchanges) {
  EXPECT_EQ(loadError(exchangeModule(4)), "<ok>");
  auto withBlocks = [](auto change) {
    ModuleSpec spec = exchangeModule(4);
    change(spec.functions[0].commands[1]);
    return loadError(spec);
  };
  EXPECT_EQ(withBlocks([](CommandSpec &c) { c.blocks = 3; }),
            "functions[0].commands[1] divides 256 bytes into 3 blocks, not "
            "equal whole ones");
  EXPECT_EQ(withBlocks([](CommandSpec &c) { c.blocks = 0; }),
            "functions[0].commands[1] divides 256 bytes into 0 blocks, not "
            "equal whole ones");
  EXPECT_EQ(withBlocks([](CommandSpec &c) { c.target = {3, 0, 128}; }),
            "functions[0].commands[1] exchanges 256 bytes into a target of "
            "128");
  EXPECT_EQ(withBlocks([](CommandSpec &c) { c.source = {0, 0, 256}; }),
            "functions[0].commands[1] exchanges from input buffer 0");
  EXPECT_EQ(withBlocks([](CommandSpec &c) { c.target = {0, 0, 256}; }),
            "functions[0].commands[1] exchanges into input buffer 0");
  EXPECT_EQ(withBlocks([](CommandSpec &c) { c.target = {1, 0, 256}; }),
            "functions[0].commands[1] exchanges between overlapping ranges");
  EXPECT_EQ(withBlocks([](CommandSpec &c) { c.target = {2, 64, 256}; }),
            "functions[0].commands[1].exchange.target binds 256 bytes at "
            "offset 64 of buffer 2, which has 256");
  auto withSlice = [](auto change) {
    ModuleSpec spec = exchangeModule(4);
    change(spec.functions[0].commands[3]);
    return loadError(spec);
  };
  EXPECT_EQ(withSlice([](CommandSpec &c) { c.target = {4, 0, 32}; }),
            "functions[0].commands[3] has blocks of 64 bytes, but its other "
            "range is 32");
  EXPECT_EQ(withSlice([](CommandSpec &c) { c.source = {1, 0, 190}; }),
            "functions[0].commands[3] divides 190 bytes into 4 blocks, not "
            "equal whole ones");
  EXPECT_EQ(withSlice([](CommandSpec &c) {
              c.pattern = lcm::ExchangePattern::RankPad;
            }),
            "functions[0].commands[3] has blocks of 16 bytes, but its other "
            "range is 256");
  EXPECT_EQ(withBlocks([](CommandSpec &c) {
              c.pattern = lcm::ExchangePattern(5);
            }),
            "functions[0].commands[1] has unknown exchange pattern 5");
  EXPECT_EQ(withBlocks([](CommandSpec &c) { c.writeExchange = false; }),
            "functions[0].commands[1] is an exchange without an exchange "
            "table");
  EXPECT_EQ(withBlocks([](CommandSpec &c) { c.writeCopy = true; }),
            "functions[0].commands[1] has 2 command tables; a command has the "
            "one its kind names");
}

TEST(Loader, RejectsUnknownCommandKind) {
  ModuleSpec spec = copyModule();
  spec.functions[0].commands[0].kind = lcm::CommandKind(9);
  EXPECT_EQ(loadError(spec), "functions[0].commands[0] has unknown kind 9");
}

TEST(Loader, RejectsUnknownDType) {
  ModuleSpec spec = affineModule();
  spec.functions[0].inputs[0].dtype = lcm::DType(9);
  EXPECT_EQ(loadError(spec), "functions[0].inputs[0] has unknown dtype 9");
}

TEST(Loader, RejectsNegativeDimension) {
  ModuleSpec spec = affineModule();
  spec.functions[0].outputs[0].shape = {2, -64};
  EXPECT_EQ(loadError(spec), "functions[0].outputs[0] has negative "
                             "dimension -64 in shape [2, -64]");
}

TEST(Loader, RejectsHugeTensor) {
  ModuleSpec spec = affineModule();
  spec.functions[0].inputs[0].shape = {1 << 20, 1 << 20, 1 << 20};
  EXPECT_EQ(loadError(spec),
            "functions[0].inputs[0] of type [1048576, 1048576, 1048576] f32 "
            "is larger than the 1099511627776-byte limit");
}

TEST(Loader, RejectsFunctionWithoutName) {
  ModuleSpec spec = affineModule();
  spec.functions[0].name = "";
  EXPECT_EQ(loadError(spec), "functions[0] has no name");
}

TEST(Loader, RejectsDuplicateFunctionNames) {
  ModuleSpec spec = gridModule();
  spec.functions[1].name = "grid";
  EXPECT_EQ(loadError(spec),
            "functions[1] and functions[0] are both named 'grid'");
}

TEST(Loader, RejectsParameterWithoutName) {
  ModuleSpec spec = affineModule();
  spec.parameters[0].signature.name = "";
  EXPECT_EQ(loadError(spec), "parameters[0] has no name");
}

TEST(Loader, RejectsDuplicateParameterNames) {
  ModuleSpec spec = parameterInitModule();
  spec.parameters[2].signature.name = "w.normal";
  EXPECT_EQ(loadError(spec),
            "parameters[2] and parameters[0] are both named 'w.normal'");
}

TEST(Loader, RejectsEmbeddedDataOfWrongSize) {
  ModuleSpec spec = affineModule();
  spec.parameters[0].data = std::vector<uint8_t>(12);
  EXPECT_EQ(loadError(spec), "parameters[0] 'bias' embeds 12 bytes, its type "
                             "[64] f32 needs 256");
}

TEST(Loader, RejectsEmbeddedOptimizerState) {
  ModuleSpec spec = trainingModule();
  EXPECT_EQ(loadError(spec), "<ok>");
  spec.parameters[1].data = std::vector<uint8_t>(4);
  EXPECT_EQ(loadError(spec),
            "parameters[1] 'optimizer.steps' is optimizer state but embeds 4 "
            "bytes; state starts as its init says and is never embedded");
}

TEST(Loader, RejectsUnknownParameterInit) {
  ModuleSpec spec = affineModule();
  spec.parameters[0].init = lcm::ParameterInit(5);
  EXPECT_EQ(loadError(spec), "parameters[0] 'bias' has unknown init 5");
}

TEST(Loader, RejectsBadInitScale) {
  ModuleSpec spec = affineModule();
  spec.parameters[0].initScale = -1;
  EXPECT_EQ(loadError(spec), "parameters[0] 'bias' has init_scale -1, "
                             "expected a finite value >= 0");
  spec.parameters[0].initScale = NAN;
  EXPECT_EQ(loadError(spec), "parameters[0] 'bias' has init_scale nan, "
                             "expected a finite value >= 0");
}

TEST(Loader, RejectsBadConstantInit) {
  ModuleSpec spec = affineModule();
  spec.parameters[0].init = lcm::ParameterInit::Constant;
  spec.parameters[0].initValue = 0.25f;
  EXPECT_EQ(loadError(spec), "<ok>");
  spec.parameters[0].initValue = INFINITY;
  EXPECT_EQ(loadError(spec), "parameters[0] 'bias' has init_value inf, "
                             "expected a finite value");
}

TEST(Loader, RejectsUnknownExecutableFormat) {
  ModuleSpec spec = affineModule();
  spec.executables[0].format = lcm::ExecutableFormat(4);
  EXPECT_EQ(loadError(spec), "executables[0] has unknown format 4");
}

TEST(Loader, RejectsExecutableWithoutData) {
  ModuleSpec spec = affineModule();
  spec.executables[0].data.clear();
  EXPECT_EQ(loadError(spec), "executables[0] has no data");
}

TEST(Loader, RejectsEntryPointWithoutName) {
  ModuleSpec spec = affineModule();
  spec.executables[0].entryPoints[4].name = "";
  EXPECT_EQ(loadError(spec), "executables[0].entry_points[4] has no name");
}

} // namespace
