//===- Collectives.cpp - a function's commands among the ranks ------------===//

#include "module/Collectives.h"

#include "comm/MpiCommunicator.h"

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

} // namespace

std::function<Status()> makeAllReduceStep(Device &device,
                                          Communicator *const *communicator,
                                          std::vector<ReducedRange> ranges,
                                          bool mean, std::string name) {
  // Host memory for a device whose memory is not the host's, kept for
  // every call.
  auto staging = std::make_shared<std::vector<float>>();
  return [&device, communicator, ranges = std::move(ranges), mean,
          name = std::move(name), staging]() -> Status {
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

std::function<Status()> makeExchangeStep(Device &device,
                                         Communicator *const *communicator,
                                         ExchangeSpec exchange,
                                         std::string name) {
  auto staging = std::make_shared<std::vector<char>>();
  return [&device, communicator, exchange, name = std::move(name),
          staging]() -> Status {
    Communicator *comm = *communicator;
    LCC_RETURN_IF_ERROR(checkJoined(comm, name, "exchanges among"));
    uint64_t ranks = comm ? uint64_t(comm->size()) : 1;
    if (exchange.allToAll && exchange.blocks != ranks)
      return Status::error(
          StatusCode::InvalidArgument, quoted(name), " sends one of its ",
          exchange.blocks, " blocks to each rank, but the job has ", ranks,
          ranks == 1 ? " rank" : " ranks",
          ": run it under mpirun -np ", exchange.blocks,
          ", or compile it for this job");
    if (exchange.bytes == 0)
      return Status();
    bool toItself = ranks == 1 || (!exchange.allToAll &&
                                   comm->ringNeighbour(exchange.ringOffset) ==
                                       comm->rank());
    if (toItself)
      return device.copyOnDevice(exchange.target, exchange.source,
                                 exchange.bytes);
    StatusOr<bool> onDevice = device.exchangeOnDevice(*comm, exchange);
    if (!onDevice.ok())
      return onDevice.getStatus().withContext(quoted(name));
    if (*onDevice)
      return Status();
    const void *source = exchange.source;
    void *target = exchange.target;
    if (!device.isHostAddressable()) {
      staging->resize(2 * exchange.bytes);
      LCC_RETURN_IF_ERROR(device.copyToHost(staging->data(), exchange.source,
                                            exchange.bytes));
      source = staging->data();
      target = staging->data() + exchange.bytes;
    }
    Status sent =
        exchange.allToAll
            ? comm->allToAll(source, exchange.bytes / exchange.blocks, target)
            : comm->shiftRing(source, exchange.bytes, exchange.ringOffset,
                              target);
    if (!sent.ok())
      return sent.withContext(quoted(name));
    if (!device.isHostAddressable())
      LCC_RETURN_IF_ERROR(
          device.copyToDevice(exchange.target, target, exchange.bytes));
    return Status();
  };
}

} // namespace lcc::runtime
