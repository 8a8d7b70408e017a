//===- Collectives.h - a function's commands among the ranks ----*- C++ -*-===//
//
// The host steps of a module's collective commands (lcm.fbs AllReduce,
// Exchange):
// run between the device's commands, through the session's communicator,
// on the bytes the planner placed them in.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_RUNTIME_MODULE_COLLECTIVES_H
#define LCC_RUNTIME_MODULE_COLLECTIVES_H

#include "comm/Communicator.h"
#include "devices/Device.h"
#include "module/TransfersInFlight.h"

#include <functional>
#include <string>
#include <vector>

namespace lcc::runtime {

/// One range of device memory that an all-reduce replaces in place.
struct ReducedRange {
  void *data;
  uint64_t bytes; // whole f32 elements
};

/// The step that replaces every range by its sum (or, with `mean`, mean)
/// over the ranks of `*communicator`: on the device's own engine where it
/// has one (NCCL), else staged through host memory where the device's
/// memory is not the host's. `*communicator` is read when the step
/// runs: the session's communicator then, null for one process alone,
/// whose ranges stay as they are (an error in a job mpirun launched).
/// With `inFlight` (a host-addressable device's), each range's reduction
/// starts and the step returns, the reductions noted there with their
/// ranges (a mean scales its range when it finishes).
std::function<Status()>
makeAllReduceStep(Device &device, Communicator *const *communicator,
                  std::vector<ReducedRange> ranges, bool mean, std::string name,
                  TransfersInFlight *inFlight = nullptr);

/// The step that fills the target with what the other ranks of
/// `*communicator` send it (an all-to-all, a ring shift): on the device's
/// own engine where it has one (NCCL), else staged through host memory;
/// or with this rank's block of the source, or the source at this rank's
/// block (a rank slice or pad). One process alone copies a ring shift;
/// the other patterns run within this rank's group of one rank per block
/// (the whole job, or one of its equal groups), and are refused when the
/// job cannot be cut into such groups. With `inFlight` (a host-addressable
/// device's), a ring shift or an all-to-all among ranks starts its
/// transfer and returns, the transfer noted there with the bytes it owns.
std::function<Status()> makeExchangeStep(Device &device,
                                         Communicator *const *communicator,
                                         ExchangeSpec exchange,
                                         std::string name,
                                         TransfersInFlight *inFlight = nullptr);

} // namespace lcc::runtime

#endif // LCC_RUNTIME_MODULE_COLLECTIVES_H
