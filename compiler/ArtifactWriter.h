//===- ArtifactWriter.h - the .lcm FlatBuffers file -------------*- C++ -*-===//

#ifndef LCC_COMPILER_ARTIFACTWRITER_H
#define LCC_COMPILER_ARTIFACTWRITER_H

#include "compiler/HostProgram.h"

#include <string>

namespace lcc {

/// One executable and the entry points (dispatch name, binding count) it
/// exports, in the order dispatch commands refer to them.
struct ExecutableImage {
  std::string target;        // "x86_64"
  std::string sharedObject;  // ELF bytes
  llvm::SmallVector<std::pair<std::string, unsigned>> entryPoints;
};

/// Serialises a module (runtime/schema/lcm.fbs, version 1). Fails with a
/// message when a dispatch names an entry point the executable lacks or a
/// type has no artifact dtype.
mlir::FailureOr<std::string>
writeArtifact(llvm::ArrayRef<HostProgram> functions,
              const ParameterTable &parameters,
              const ExecutableImage &executable, std::string &error);

} // namespace lcc

#endif // LCC_COMPILER_ARTIFACTWRITER_H
