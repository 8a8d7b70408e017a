//===- Collectives.cpp - a function's commands among the ranks ------------===//

#include "module/Collectives.h"

#include "comm/MpiCommunicator.h"

#include <cstring>
#include <memory>

namespace lcc::runtime {

namespace {

/// An error when each rank of a job mpirun launched would compute the
/// collective over itself alone: a silent wrong answer.
Status checkJoined(const Communicator *comm, const std::string &name,
                   const char *what) {
  if (!comm && launchedByMpirun())
    return Status::error(
        StatusCode::Unavailable, quoted(name), " ", what,
        " the ranks of the job that mpirun launched, but the session has no "
        "communicator (lccSessionSetCommunicator)");
  return Status();
}

/// A reduction started in place, divided by the ranks when it finishes
/// (a mean).
class ScaledReduction final : public Transfer {
public:
  ScaledReduction(std::unique_ptr<Transfer> sum, ReducedRange range,
                  float scale)
      : sum(std::move(sum)), range(range), scale(scale) {}
  Status advance() override { return sum->advance(); }
  Status finish() override {
    LCC_RETURN_IF_ERROR(sum->finish());
    float *values = static_cast<float *>(range.data);
    if (scale != 1.0f)
      for (size_t i = 0; i < range.bytes / sizeof(float); ++i)
        values[i] *= scale;
    scale = 1.0f; // once
    return Status();
  }

private:
  std::unique_ptr<Transfer> sum;
  ReducedRange range;
  float scale;
};

} // namespace

std::function<Status()> makeAllReduceStep(Device &device,
                                          Communicator *const *communicator,
                                          std::vector<ReducedRange> ranges,
                                          bool mean, std::string name,
                                          TransfersInFlight *inFlight) {
  // Host memory for a device whose memory is not the host's, kept for
  // every call.
  auto staging = std::make_shared<std::vector<float>>();
  return [&device, communicator, ranges = std::move(ranges), mean,
          name = std::move(name), staging, inFlight]() -> Status {
    Communicator *comm = *communicator;
    LCC_RETURN_IF_ERROR(checkJoined(comm, name, "reduces over"));
    if (!comm || comm->size() == 1)
      return Status();
    float scale = 1.0f / float(comm->size());
    for (const ReducedRange &range : ranges) {
      size_t count = range.bytes / sizeof(float);
      StatusOr<bool> onDevice =
          device.allReduceOnDevice(*comm, range.data, count, mean);
      if (!onDevice.ok())
        return onDevice.getStatus().withContext(quoted(name));
      if (*onDevice)
        continue;
      if (inFlight && device.isHostAddressable()) {
        StatusOr<std::unique_ptr<Transfer>> started =
            comm->startAllReduceSum(static_cast<float *>(range.data), count);
        if (!started.ok())
          return started.getStatus().withContext(quoted(name));
        inFlight->add(std::make_unique<ScaledReduction>(started.take(), range,
                                                        mean ? scale : 1.0f),
                      {{range.data, range.bytes}});
        continue;
      }
      float *values = static_cast<float *>(range.data);
      if (!device.isHostAddressable()) {
        staging->resize(count);
        values = staging->data();
        LCC_RETURN_IF_ERROR(device.copyToHost(values, range.data, range.bytes));
      }
      Status reduced = comm->allReduceSum(values, count);
      if (!reduced.ok())
        return reduced.withContext(quoted(name));
      if (mean)
        for (size_t i = 0; i < count; ++i)
          values[i] *= scale;
      if (!device.isHostAddressable())
        LCC_RETURN_IF_ERROR(
            device.copyToDevice(range.data, values, range.bytes));
    }
    return Status();
  };
}

namespace {

/// A rank slice or pad: this rank's block moved, no other rank involved.
Status moveRankBlock(Device &device, const ExchangeSpec &exchange, int rank,
                     std::vector<char> &zeros) {
  if (exchange.pattern == lcm::ExchangePattern::RankSlice) {
    uint64_t block = exchange.targetBytes;
    return device.copyOnDevice(
        exchange.target,
        static_cast<const char *>(exchange.source) + uint64_t(rank) * block,
        block);
  }
  uint64_t block = exchange.sourceBytes;
  if (device.isHostAddressable()) {
    std::memset(exchange.target, 0, exchange.targetBytes);
  } else {
    zeros.assign(exchange.targetBytes, 0);
    LCC_RETURN_IF_ERROR(device.copyToDevice(exchange.target, zeros.data(),
                                            exchange.targetBytes));
  }
  return device.copyOnDevice(static_cast<char *>(exchange.target) +
                                 uint64_t(rank) * block,
                             exchange.source, block);
}

/// Bytes sent to, and received from, other ranks.
Status sendAmongRanks(Device &device, Communicator &comm,
                      const ExchangeSpec &exchange,
                      std::vector<char> &staging) {
  StatusOr<bool> onDevice = device.exchangeOnDevice(comm, exchange);
  if (!onDevice.ok() || *onDevice)
    return onDevice.getStatus();
  uint64_t bytes = exchange.sourceBytes;
  const void *source = exchange.source;
  void *target = exchange.target;
  if (!device.isHostAddressable()) {
    staging.resize(2 * bytes);
    LCC_RETURN_IF_ERROR(
        device.copyToHost(staging.data(), exchange.source, bytes));
    source = staging.data();
    target = staging.data() + bytes;
  }
  LCC_RETURN_IF_ERROR(
      exchange.pattern == lcm::ExchangePattern::AllToAll
          ? comm.allToAll(source, bytes / exchange.blocks, target)
          : comm.shiftRing(source, bytes, exchange.ringOffset, target));
  if (!device.isHostAddressable())
    LCC_RETURN_IF_ERROR(device.copyToDevice(exchange.target, target, bytes));
  return Status();
}

/// A ring shift's or an all-to-all's transfer started and noted in
/// `inFlight`, which then owns its source and target bytes.
Status startAmongRanks(Communicator &comm, const ExchangeSpec &exchange,
                       TransfersInFlight &inFlight) {
  StatusOr<std::unique_ptr<Transfer>> started =
      exchange.pattern == lcm::ExchangePattern::AllToAll
          ? comm.startAllToAll(exchange.source,
                               exchange.sourceBytes / exchange.blocks,
                               exchange.target)
          : comm.startShiftRing(exchange.source, exchange.sourceBytes,
                                exchange.ringOffset, exchange.target);
  if (!started.ok())
    return started.getStatus();
  inFlight.add(started.take(), {{exchange.source, exchange.sourceBytes},
                                {exchange.target, exchange.targetBytes}});
  return Status();
}

} // namespace

std::function<Status()> makeExchangeStep(Device &device,
                                         Communicator *const *communicator,
                                         ExchangeSpec exchange,
                                         std::string name,
                                         TransfersInFlight *inFlight) {
  auto staging = std::make_shared<std::vector<char>>();
  return [&device, communicator, exchange, name = std::move(name), staging,
          inFlight]() -> Status {
    Communicator *comm = *communicator;
    LCC_RETURN_IF_ERROR(checkJoined(comm, name, "exchanges among"));
    bool ring = exchange.pattern == lcm::ExchangePattern::Ring;
    // A job of several groups of `blocks` ranks (context and data
    // parallelism): the exchange runs within this rank's group.
    if (!ring && comm && exchange.blocks > 0 &&
        uint64_t(comm->size()) % exchange.blocks == 0) {
      StatusOr<Communicator *> group = comm->group(int(exchange.blocks));
      if (!group.ok())
        return group.getStatus().withContext(quoted(name));
      comm = *group;
    }
    uint64_t ranks = comm ? uint64_t(comm->size()) : 1;
    if (!ring && exchange.blocks != ranks)
      return Status::error(
          StatusCode::InvalidArgument, quoted(name), " has one block per rank "
          "of a group of ", exchange.blocks, ", but this job has ", ranks,
          ranks == 1 ? " rank" : " ranks", ": run it under mpirun -np ",
          exchange.blocks, " (or a multiple), or compile it for this job");
    if (exchange.sourceBytes == 0 && exchange.targetBytes == 0)
      return Status();
    Status moved;
    if (exchange.pattern == lcm::ExchangePattern::RankSlice ||
        exchange.pattern == lcm::ExchangePattern::RankPad)
      moved = moveRankBlock(device, exchange, comm ? comm->rank() : 0,
                            *staging);
    else if (ranks == 1 ||
             (ring && comm->ringNeighbour(exchange.ringOffset) == comm->rank()))
      moved = device.copyOnDevice(exchange.target, exchange.source,
                                  exchange.sourceBytes);
    else if (inFlight)
      moved = startAmongRanks(*comm, exchange, *inFlight);
    else
      moved = sendAmongRanks(device, *comm, exchange, *staging);
    return moved.ok() ? moved : moved.withContext(quoted(name));
  };
}

} // namespace lcc::runtime
