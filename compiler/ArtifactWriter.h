//===- ArtifactWriter.h - the .lcm FlatBuffers file -------------*- C++ -*-===//

#ifndef LCC_COMPILER_ARTIFACTWRITER_H
#define LCC_COMPILER_ARTIFACTWRITER_H

#include "compiler/HostProgram.h"

#include <array>
#include <string>

namespace lcc {

/// A kernel as one executable exports it. GPU entry points also give the
/// block size and the dynamic shared memory of their launch.
struct EntryPointImage {
  std::string name;
  unsigned bindingCount = 0;
  /// What the kernel was compiled for: every dispatch of it runs these
  /// workgroups and binds these bytes (static shapes).
  std::array<uint32_t, 3> workgroupCount = {1, 1, 1};
  llvm::SmallVector<uint64_t> bindingBytes;
  std::array<uint32_t, 3> blockSize = {0, 0, 0};
  uint32_t sharedMemoryBytes = 0;
};

/// The code of every dispatch for one kind of device.
struct ExecutableImage {
  enum class Format { HostSharedObject, Ptx, Cubin, CudaEmulator };
  Format format = Format::HostSharedObject;
  std::string target; // "x86_64", "sm_90"
  std::string data;   // ELF, PTX text, cubin bytes or the emulator's ELF
  llvm::SmallVector<EntryPointImage> entryPoints;
  std::vector<std::string> cpuFeatures; // HostSharedObject: see lcm.fbs
};

/// Serialises a module (runtime/schema/lcm.fbs). Every executable must list
/// the same entry points in the same order: dispatches name one by its
/// index in that list. Fails with a message when they differ, when a
/// dispatch names an entry point no executable has, or when a type has no
/// artifact dtype. `contextParallel`: the ranks each sequence is split
/// over (lcc --context-parallel), 1 when none.
mlir::FailureOr<std::string>
writeArtifact(llvm::ArrayRef<HostProgram> functions,
              const ParameterTable &parameters,
              llvm::ArrayRef<ExecutableImage> executables, std::string &error,
              uint32_t contextParallel = 1);

} // namespace lcc

#endif // LCC_COMPILER_ARTIFACTWRITER_H
