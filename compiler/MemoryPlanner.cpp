//===- MemoryPlanner.cpp - one arena for every transient buffer -----------===//
//
// Transient buffers whose live ranges (first to last command using them) do
// not intersect share bytes. The arena is allocated once per loaded function
// and reused by every call, so a first touch of fresh pages is paid once.
//
//===----------------------------------------------------------------------===//

#include "compiler/HostProgram.h"

#include <algorithm>
#include <tuple>
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

  // The placed buffers' live ranges and bytes, packed and kept in order of
  // their byte ranges: a buffer's first fit is found walking them from
  // offset 0, skipping those not alive with it, and stops at the first gap
  // it fits in (a deep model places thousands).
  struct Placed {
    uint64_t begin, end;
    unsigned firstCommand, lastCommand;
  };
  auto byBytes = [](const Placed &a, const Placed &b) {
    return std::tie(a.begin, a.end) < std::tie(b.begin, b.end);
  };
  std::vector<Placed> placed;
  placed.reserve(order.size());
  uint64_t arenaSize = 0;
  for (unsigned index : order) {
    PlannedBuffer &buffer = program.buffers[index];
    uint64_t offset = 0;
    for (const Placed &o : placed) {
      if (o.firstCommand > buffer.lastCommand ||
          buffer.firstCommand > o.lastCommand)
        continue;
      if (offset + buffer.size <= o.begin)
        break;
      offset = std::max(offset, llvm::alignTo(o.end, kAlignment));
    }
    buffer.arenaOffset = offset;
    arenaSize = std::max(arenaSize, offset + buffer.size);
    Placed now{offset, offset + buffer.size, buffer.firstCommand,
               buffer.lastCommand};
    placed.insert(std::upper_bound(placed.begin(), placed.end(), now, byBytes),
                  now);
  }
  program.arenaSize = llvm::alignTo(arenaSize, kAlignment);
}
