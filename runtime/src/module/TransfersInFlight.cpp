//===- TransfersInFlight.cpp - exchanges that run behind the dispatches ---===//

#include "module/TransfersInFlight.h"

namespace lcc::runtime {

bool ByteRange::overlaps(const ByteRange &other) const {
  auto begin = reinterpret_cast<uintptr_t>(data);
  auto otherBegin = reinterpret_cast<uintptr_t>(other.data);
  return bytes && other.bytes && begin < otherBegin + other.bytes &&
         otherBegin < begin + bytes;
}

void TransfersInFlight::add(std::unique_ptr<Transfer> transfer,
                            std::vector<ByteRange> ranges) {
  inFlight.push_back({std::move(transfer), std::move(ranges)});
}

Status TransfersInFlight::settle(const std::vector<ByteRange> &touched) {
  if (inFlight.empty())
    return Status(); // the common case: before every command
  Status first;
  std::vector<InFlight> left;
  for (InFlight &pending : inFlight) {
    bool owns = false;
    for (const ByteRange &mine : pending.ranges)
      for (const ByteRange &range : touched)
        owns |= mine.overlaps(range);
    Status status =
        owns ? pending.transfer->finish() : pending.transfer->advance();
    if (!status.ok() && first.ok())
      first = status;
    if (!owns)
      left.push_back(std::move(pending));
  }
  inFlight = std::move(left);
  return first;
}

Status TransfersInFlight::settleAll() {
  Status first;
  for (InFlight &pending : inFlight) {
    Status status = pending.transfer->finish();
    if (!status.ok() && first.ok())
      first = status;
  }
  inFlight.clear();
  return first;
}

} // namespace lcc::runtime
