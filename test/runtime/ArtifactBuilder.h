//===- ArtifactBuilder.h - test-only .lcm writer ----------------*- C++ -*-===//
//
// Describes a module as plain structs and writes it with the FlatBuffers
// builder API. Tests start from a valid description, change one field, and
// check what the loader says; nothing here validates anything.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_TEST_RUNTIME_ARTIFACTBUILDER_H
#define LCC_TEST_RUNTIME_ARTIFACTBUILDER_H

#include "ModuleFormat.h"
#include "lcc/lcm_generated.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lcc::test {

struct SignatureSpec {
  std::string name;
  lcm::DType dtype = lcm::DType::F32;
  std::vector<int64_t> shape;
  std::optional<std::vector<int64_t>> validRange;
  int32_t splitDim = -1;
};

struct ParameterSpec {
  SignatureSpec signature;
  lcm::ParameterInit init = lcm::ParameterInit::Zeros;
  float initScale = 0;
  std::optional<std::vector<uint8_t>> data;
  // Optimizer state (Adam's moments): as init says on a fresh session, never
  // embedded, bound from a weights file only when the file holds it.
  bool state = false;
  // The checksum written with `data`: computed from it when unset.
  std::optional<uint64_t> dataChecksum;
  bool writeChecksum = true;
  float initValue = 0; // Constant init's value
};

struct BufferSpec {
  lcm::BufferKind kind = lcm::BufferKind::Transient;
  uint32_t index = 0;
  uint64_t size = 0;
  uint64_t arenaOffset = 0;
};

struct BindingSpec {
  uint32_t buffer = 0;
  uint64_t offset = 0;
  uint64_t length = 0;
};

struct CommandSpec {
  lcm::CommandKind kind = lcm::CommandKind::Dispatch;
  std::string name;
  // Dispatch
  uint32_t entryPoint = 0;
  std::vector<uint32_t> workgroupCount = {1, 1, 1};
  std::vector<BindingSpec> bindings;
  // Copy, Exchange
  BindingSpec source;
  BindingSpec target;
  // AllReduce
  lcm::Reduction reduction = lcm::Reduction::Mean;
  std::vector<BindingSpec> ranges;
  // Exchange
  lcm::ExchangePattern pattern = lcm::ExchangePattern::AllToAll;
  uint64_t blocks = 1;
  int64_t ringOffset = 0;
  // Which tables to write; by default the one `kind` names.
  std::optional<bool> writeDispatch;
  std::optional<bool> writeCopy;
  std::optional<bool> writeAllReduce;
  std::optional<bool> writeExchange;
};

struct FunctionSpec {
  std::string name;
  std::vector<SignatureSpec> inputs;
  std::vector<SignatureSpec> outputs;
  std::vector<BufferSpec> buffers;
  uint64_t arenaSize = 0;
  std::vector<CommandSpec> commands;
};

struct EntryPointSpec {
  std::string name;
  uint32_t bindingCount = 0;
  // GPU formats; an empty block size is not written.
  std::vector<uint32_t> blockSize;
  uint32_t sharedMemoryBytes = 0;
  // What the kernel was compiled for. Unset, they are taken from the first
  // dispatch of the entry point (so a module is consistent unless a test
  // says otherwise): its workgroup count and its bindings' lengths.
  std::optional<std::vector<uint32_t>> workgroupCount;
  std::optional<std::vector<uint64_t>> bindingBytes;
};

struct ExecutableSpec {
  lcm::ExecutableFormat format = lcm::ExecutableFormat::HostSharedObject;
  std::string target = "x86_64";
  std::vector<EntryPointSpec> entryPoints;
  std::vector<uint8_t> data;
  std::vector<std::string> cpuFeatures;
  // The checksum written with `data`: computed from it when unset (a test
  // that corrupts the data sets the one it had).
  std::optional<uint64_t> dataChecksum;
  bool writeChecksum = true;
};

struct ModuleSpec {
  uint32_t version = lcm::kModuleVersion;
  std::string producer = "lcc runtime tests";
  std::string identifier = "LCM1";
  std::vector<FunctionSpec> functions;
  std::vector<ParameterSpec> parameters;
  std::vector<ExecutableSpec> executables;
  uint32_t contextParallel = 1;
};

/// `spec` with every entry point's requirements written out (from the first
/// dispatch of each, as buildModule would take them), so that a test can
/// then change a dispatch alone.
ModuleSpec pinKernelRequirements(ModuleSpec spec);

/// The .lcm bytes of `spec`.
std::vector<uint8_t> buildModule(const ModuleSpec &spec);

/// The description of a module that has passed the FlatBuffers verifier
/// (the inverse of buildModule, for tools that edit compiled artifacts).
/// Entry point requirements are read as written.
ModuleSpec describeModule(const lcm::Module &module);

} // namespace lcc::test

#endif // LCC_TEST_RUNTIME_ARTIFACTBUILDER_H
