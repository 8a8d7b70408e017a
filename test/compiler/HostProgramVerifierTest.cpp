//===- HostProgramVerifierTest.cpp - the planner's hazard check -----------===//
//
// The planner is right today, so no compiled model makes verifyHostProgram
// fire; these plans are written by hand to show that it catches each way of
// overwriting a tensor that is still read, and accepts legitimate reuse.
//
//===----------------------------------------------------------------------===//

#include "compiler/HostProgram.h"

#include <gtest/gtest.h>

using namespace lcc;

namespace {

/// Two 64-byte transient buffers and an input; commands are added per test.
HostProgram program(uint64_t secondOffset) {
  HostProgram p;
  p.name = "forward";
  p.buffers.push_back({BufferKind::Input, 0, 64});
  p.buffers.push_back({BufferKind::Transient, 0, 64, 0, 0, 1});
  p.buffers.push_back({BufferKind::Transient, 0, 64, secondOffset, 1, 2});
  p.arenaSize = 128;
  return p;
}

PlannedCommand dispatch(const char *name, std::vector<BufferRange> reads,
                        std::vector<BufferRange> writes) {
  PlannedCommand c;
  c.name = c.entryPoint = name;
  c.bindings.append(reads.begin(), reads.end());
  c.bindings.append(writes.begin(), writes.end());
  c.outputCount = writes.size();
  return c;
}

TEST(HostProgramVerifier, AcceptsArenaReuseAfterTheLastRead) {
  // Buffer 2 takes buffer 1's arena bytes once buffer 1's tensor is read
  // for the last time (command 1).
  HostProgram p = program(/*secondOffset=*/0);
  p.buffers.push_back({BufferKind::Transient, 0, 64, 64, 1, 2});
  p.commands.push_back(dispatch("a", {{0, 0, 64}}, {{1, 0, 64}}));
  p.commands.push_back(dispatch("b", {{1, 0, 64}}, {{3, 0, 64}}));
  p.commands.push_back(dispatch("c", {{3, 0, 64}}, {{2, 0, 64}}));
  std::vector<PlannedTensor> tensors = {
      {"input 0", {{0, 0, 64}}, -1, 1},
      {"result 0 of 'a'", {{1, 0, 64}}, 0, 1},
      {"result 0 of 'b'", {{3, 0, 64}}, 1, 2},
      {"result 0 of 'c'", {{2, 0, 64}}, 2, 3},
  };
  EXPECT_EQ(verifyHostProgram(p, tensors), std::nullopt);
}

TEST(HostProgramVerifier, RejectsAnArenaOverlapWithALiveTensor) {
  // Buffer 2 is placed on buffer 1's bytes while buffer 1 is still read.
  HostProgram p = program(/*secondOffset=*/0);
  p.commands.push_back(dispatch("a", {{0, 0, 64}}, {{1, 0, 64}}));
  p.commands.push_back(dispatch("b", {{0, 0, 64}}, {{2, 0, 64}}));
  p.commands.push_back(dispatch("c", {{1, 0, 64}, {2, 0, 64}}, {}));
  std::vector<PlannedTensor> tensors = {
      {"result 0 of 'a'", {{1, 0, 64}}, 0, 2},
      {"result 0 of 'b'", {{2, 0, 64}}, 1, 2},
  };
  std::optional<std::string> hazard = verifyHostProgram(p, tensors);
  ASSERT_TRUE(hazard.has_value());
  EXPECT_EQ(*hazard, "command 1 'b' of 'forward' writes bytes [0, 64) of "
                     "buffer 2, which hold result 0 of 'a', still read by "
                     "command 2 'c'");
}

TEST(HostProgramVerifier, RejectsAWriteIntoBytesTheSameKernelReads) {
  HostProgram p = program(/*secondOffset=*/64);
  p.commands.push_back(dispatch("a", {{0, 0, 64}}, {{1, 0, 64}}));
  p.commands.push_back(dispatch("b", {{1, 0, 64}}, {{1, 0, 32}}));
  std::vector<PlannedTensor> tensors = {
      {"result 0 of 'a'", {{1, 0, 64}}, 0, 1},
  };
  ASSERT_TRUE(verifyHostProgram(p, tensors).has_value());
}

TEST(HostProgramVerifier, RejectsOutputsOfOneKernelThatOverlap) {
  // A kernel's outputs are noalias pointers: two of them sharing bytes is a
  // miscompile even when nothing reads those bytes later.
  HostProgram p = program(/*secondOffset=*/64);
  p.commands.push_back(dispatch("a", {{0, 0, 64}}, {{1, 0, 48}, {1, 32, 32}}));
  std::optional<std::string> hazard = verifyHostProgram(p, {});
  ASSERT_TRUE(hazard.has_value());
  EXPECT_EQ(*hazard, "command 0 'a' of 'forward' writes its output 0 over "
                     "bytes of its binding 2");
}

TEST(HostProgramVerifier, AcceptsInputsThatShareBytes) {
  // Two bindings may read the same bytes (q and k of shared-QK attention).
  HostProgram p = program(/*secondOffset=*/64);
  p.commands.push_back(dispatch("a", {{0, 0, 64}, {0, 0, 64}}, {{1, 0, 64}}));
  EXPECT_EQ(verifyHostProgram(p, {}), std::nullopt);
}

TEST(HostProgramVerifier, RejectsACopyOverATensorTheCallerReads) {
  HostProgram p = program(/*secondOffset=*/64);
  p.buffers.push_back({BufferKind::Output, 0, 64});
  p.commands.push_back(dispatch("a", {{0, 0, 64}}, {{3, 0, 64}}));
  PlannedCommand copy;
  copy.kind = PlannedCommand::Kind::Copy;
  copy.name = "result0";
  copy.source = {0, 0, 64};
  copy.target = {3, 0, 32};
  p.commands.push_back(copy);
  std::vector<PlannedTensor> tensors = {
      {"result 0 of 'a'", {{3, 0, 64}}, 0, 2},
  };
  std::optional<std::string> hazard = verifyHostProgram(p, tensors);
  ASSERT_TRUE(hazard.has_value());
  EXPECT_NE(hazard->find("still read by the caller"), std::string::npos);
}

TEST(HostProgramVerifier, AcceptsSlicesWrittenBesideDefinedOnes) {
  // An assembly: its first slice is defined, the second is written next.
  HostProgram p = program(/*secondOffset=*/64);
  p.commands.push_back(dispatch("a", {{0, 0, 64}}, {{1, 0, 32}}));
  p.commands.push_back(dispatch("b", {{0, 0, 64}}, {{1, 32, 32}}));
  p.commands.push_back(dispatch("c", {{1, 0, 64}}, {{2, 0, 64}}));
  std::vector<PlannedTensor> tensors = {
      {"result 0 of 'a'", {{1, 0, 32}}, 0, -1},
      {"an assembly", {{1, 0, 32}}, 0, -1},
      {"the whole assembly", {{1, 0, 32}, {1, 32, 32}}, 1, 2},
  };
  EXPECT_EQ(verifyHostProgram(p, tensors), std::nullopt);
}

} // namespace
