//===- Collectives.cpp - a function's commands among the ranks ------------===//

#include "module/Collectives.h"

#include "comm/MpiCommunicator.h"

#include <memory>

namespace lcc::runtime {

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
    // Each rank would reduce over itself alone: a silent wrong answer.
    if (!comm && launchedByMpirun())
      return Status::error(
          StatusCode::Unavailable, quoted(name),
          " reduces over the ranks of the job that mpirun launched, but the "
          "session has no communicator (lccSessionSetCommunicator)");
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

} // namespace lcc::runtime
