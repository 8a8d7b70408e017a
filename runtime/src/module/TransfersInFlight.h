//===- TransfersInFlight.h - exchanges that run behind the dispatches -----===//
//
// A ring shift, an all-to-all or an all-reduce starts its transfer and
// returns (docs/runtime.md, "Ranks"): the commands after it run while its
// bytes move, and each waits first for the transfers whose source or
// target bytes it touches (a reader of the moved block, a dispatch the
// memory planner put in the bytes of a source no longer read). The run ends
// with every transfer finished.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_RUNTIME_MODULE_TRANSFERSINFLIGHT_H
#define LCC_RUNTIME_MODULE_TRANSFERSINFLIGHT_H

#include "comm/Communicator.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace lcc::runtime {

/// Bytes of device memory a command reads or writes.
struct ByteRange {
  const void *data;
  uint64_t bytes;

  bool overlaps(const ByteRange &other) const;
};

class TransfersInFlight {
public:
  /// Notes `transfer`, which owns the bytes of `ranges` until it finishes.
  void add(std::unique_ptr<Transfer> transfer, std::vector<ByteRange> ranges);
  /// Finishes the transfers that own bytes of `touched`, and lets the
  /// others move on.
  Status settle(const std::vector<ByteRange> &touched);
  /// Finishes every transfer.
  Status settleAll();
  size_t size() const { return inFlight.size(); }

private:
  struct InFlight {
    std::unique_ptr<Transfer> transfer;
    std::vector<ByteRange> ranges;
  };
  std::vector<InFlight> inFlight;
};

} // namespace lcc::runtime

#endif // LCC_RUNTIME_MODULE_TRANSFERSINFLIGHT_H
