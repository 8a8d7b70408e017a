//===- MemoryPlanner.cpp - one arena for every transient buffer -----------===//
//
// Transient buffers whose live ranges (first to last command using them) do
// not intersect share bytes. The arena is allocated once per loaded function
// and reused by every call, so a first touch of fresh pages is paid once.
//
//===----------------------------------------------------------------------===//

#include "compiler/HostProgram.h"

#include <algorithm>
#include <vector>

using namespace lcc;
using llvm::SmallVector;

static constexpr uint64_t kAlignment = 64;

void lcc::planArena(HostProgram &program) {
  SmallVector<unsigned> order;
  for (auto [i, buffer] : llvm::enumerate(program.buffers))
    if (buffer.kind == BufferKind::Transient)
      order.push_back(i);
  // Largest first leaves the fewest holes; ties in program order keep the
  // plan deterministic.
  std::stable_sort(order.begin(), order.end(), [&](unsigned a, unsigned b) {
    return program.buffers[a].size > program.buffers[b].size;
  });

  // The placed buffers' live ranges and bytes, packed: a deep model's
  // thousands of buffers are each compared with every one placed before.
  struct Placed {
    unsigned firstCommand, lastCommand;
    uint64_t begin, end;
  };
  std::vector<Placed> placed;
  placed.reserve(order.size());
  uint64_t arenaSize = 0;
  for (unsigned index : order) {
    PlannedBuffer &buffer = program.buffers[index];
    // Byte ranges of placed buffers alive at the same time, by offset.
    SmallVector<std::pair<uint64_t, uint64_t>> busy;
    for (const Placed &o : placed)
      if (o.firstCommand <= buffer.lastCommand &&
          buffer.firstCommand <= o.lastCommand)
        busy.push_back({o.begin, o.end});
    llvm::sort(busy);
    uint64_t offset = 0;
    for (auto [begin, end] : busy) {
      if (offset + buffer.size <= begin)
        break;
      offset = std::max(offset, llvm::alignTo(end, kAlignment));
    }
    buffer.arenaOffset = offset;
    arenaSize = std::max(arenaSize, offset + buffer.size);
    placed.push_back({buffer.firstCommand, buffer.lastCommand, offset,
                      offset + buffer.size});
  }
  program.arenaSize = llvm::alignTo(arenaSize, kAlignment);
}
