//===- HostProgramVerifier.cpp - no command clobbers a live tensor --------===//
//
// The planner shares bytes in four ways: reshapes alias their source,
// assemblies of slices and dispatch results written in place share a
// buffer, a dispatch updates in place an initial output value that nothing
// else reads, and the arena gives buffers with disjoint live ranges the
// same offsets. Each is a chance to overwrite a tensor that a later command
// still reads, which the kernels cannot notice: the result is silently
// wrong. This check replays the planned program and proves that every
// write lands on bytes no completed, still-read tensor holds, and that no
// dispatch writes bytes that another of its bindings reaches.
//
//===----------------------------------------------------------------------===//

#include "compiler/HostProgram.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <vector>

using namespace lcc;

namespace {

/// A byte range in one address space: the arena (every transient buffer, at
/// its offset) or a buffer of its own (arguments, results, parameters).
struct Extent {
  int64_t space; // -1: the arena; otherwise the buffer index
  uint64_t begin, end;
};

Extent extentOf(const HostProgram &program, const BufferRange &range) {
  const PlannedBuffer &buffer = program.buffers[range.buffer];
  if (buffer.kind == BufferKind::Transient)
    return {-1, buffer.arenaOffset + range.offset,
            buffer.arenaOffset + range.offset + range.length};
  return {int64_t(range.buffer), range.offset, range.offset + range.length};
}

bool intersect(const Extent &a, const Extent &b) {
  return a.space == b.space && a.begin < b.end && b.begin < a.end;
}

/// The ranges command `c` writes.
llvm::SmallVector<BufferRange> writesOf(const PlannedCommand &command) {
  if (command.kind == PlannedCommand::Kind::Copy)
    return {command.target};
  return llvm::SmallVector<BufferRange>(
      llvm::ArrayRef(command.bindings).take_back(command.outputCount));
}

} // namespace

std::optional<std::string>
lcc::verifyHostProgram(const HostProgram &program,
                       llvm::ArrayRef<PlannedTensor> tensors) {
  // The tensors a write at command c may clobber are those defined before c
  // and read at c or later: kept as a list as c advances, so that a deep
  // model's check is not every tensor for every write.
  std::vector<unsigned> byDefinition(tensors.size());
  for (unsigned t = 0; t < tensors.size(); ++t)
    byDefinition[t] = t;
  std::stable_sort(byDefinition.begin(), byDefinition.end(),
                   [&](unsigned a, unsigned b) {
                     return tensors[a].definedBy < tensors[b].definedBy;
                   });
  size_t nextDefined = 0;
  std::vector<unsigned> live;
  for (auto [c, command] : llvm::enumerate(program.commands)) {
    int64_t at = c;
    while (nextDefined < byDefinition.size() &&
           tensors[byDefinition[nextDefined]].definedBy < at)
      live.push_back(byDefinition[nextDefined++]);
    llvm::erase_if(live, [&](unsigned t) { return tensors[t].lastRead < at; });
    // A kernel's outputs are noalias pointers (DispatchBuffers.cpp): no byte
    // it writes may be reachable through another of its bindings.
    // A collective's ranges are reduced in place, each on its own bytes.
    if (command.kind != PlannedCommand::Kind::Copy) {
      size_t firstOutput = command.bindings.size() - command.outputCount;
      for (size_t o = firstOutput; o < command.bindings.size(); ++o)
        for (size_t other = 0; other < command.bindings.size(); ++other) {
          const BufferRange &a = command.bindings[o],
                            &b = command.bindings[other];
          if (other == o || a.length == 0 || b.length == 0 ||
              !intersect(extentOf(program, a), extentOf(program, b)))
            continue;
          return llvm::formatv("command {0} '{1}' of '{2}' writes its output "
                               "{3} over bytes of its binding {4}",
                               c, command.name, program.name, o - firstOutput,
                               other)
              .str();
        }
    }
    for (const BufferRange &write : writesOf(command)) {
      if (write.length == 0)
        continue;
      Extent written = extentOf(program, write);
      for (unsigned t : live) {
        const PlannedTensor &tensor = tensors[t];
        // Its last reader, through the output it updates.
        if (tensor.updatedBy == at)
          continue;
        for (const BufferRange &held : tensor.defined) {
          if (held.length == 0 || !intersect(written, extentOf(program, held)))
            continue;
          std::string reader =
              tensor.lastRead == int64_t(program.commands.size())
                  ? std::string("the caller")
                  : llvm::formatv("command {0} '{1}'", tensor.lastRead,
                                  program.commands[tensor.lastRead].name)
                        .str();
          return llvm::formatv("command {0} '{1}' of '{2}' writes bytes "
                               "[{3}, {4}) of buffer {5}, which hold {6}, "
                               "still read by {7}",
                               c, command.name, program.name, write.offset,
                               write.offset + write.length, write.buffer,
                               tensor.description, reader)
              .str();
        }
      }
    }
  }
  return std::nullopt;
}
