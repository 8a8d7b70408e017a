//===- NcclCommunicator.h - a job's collectives on CUDA memory --*- C++ -*-===//
//
// NCCL (libnccl.so.2, or $LCC_NCCL_LIBRARY), loaded with dlopen the first
// time a job of several ranks reduces CUDA device memory, as the CUDA
// driver is: nothing links against it. Bootstrapped over the job's own
// communicator (MPI): every rank takes rank 0's NCCL id from an
// all-gather. Its all-reduces and exchanges (grouped sends and receives)
// are enqueued on the device's stream, on the device's memory, without
// passing through the host.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_RUNTIME_COMM_NCCLCOMMUNICATOR_H
#define LCC_RUNTIME_COMM_NCCLCOMMUNICATOR_H

#include "comm/Communicator.h"

#include <cstdint>
#include <memory>
#include <string>

namespace lcc::runtime {

class NcclCommunicator {
public:
  /// NCCL's communicator of `job`'s ranks, on the CUDA context current on
  /// the calling thread; every rank must call it. An error starting "nccl
  /// unavailable: " names the library when it cannot be loaded.
  static StatusOr<std::unique_ptr<NcclCommunicator>> create(Communicator &job);
  ~NcclCommunicator();
  NcclCommunicator(const NcclCommunicator &) = delete;
  NcclCommunicator &operator=(const NcclCommunicator &) = delete;

  /// Enqueues on `stream` the sum, or with `mean` the mean, over the ranks
  /// of the `count` floats at device address `data`, in place.
  Status allReduce(uint64_t data, size_t count, bool mean, void *stream);

  /// Enqueues on `stream` the exchange of `blockBytes`-byte blocks at
  /// `source` (one per rank of the job's `ranks`) into `target`, as
  /// Communicator::allToAll.
  Status allToAll(uint64_t source, size_t blockBytes, int ranks,
                  uint64_t target, void *stream);
  /// Enqueues on `stream` the send of `bytes` at `source` to rank `to`
  /// and the receive into `target` of rank `from`'s.
  Status sendAroundRing(uint64_t source, size_t bytes, int to, int from,
                        uint64_t target, void *stream);

  struct Library;

private:
  NcclCommunicator(std::unique_ptr<Library> library, void *comm);
  std::unique_ptr<Library> library;
  void *comm;
};

} // namespace lcc::runtime

#endif // LCC_RUNTIME_COMM_NCCLCOMMUNICATOR_H
