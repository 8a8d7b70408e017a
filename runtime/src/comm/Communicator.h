//===- Communicator.h - the processes of one job -----------------*- C++
//-*-===//
//
// Beyond one process (docs/runtime.md, "Ranks"): the ranks of a job and
// the collectives among them, on an existing engine. One process alone is
// a job of one rank, whose collectives copy; a job launched by mpirun runs
// on MPI (MpiCommunicator.h), loaded at run time like the CUDA driver.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_RUNTIME_COMM_COMMUNICATOR_H
#define LCC_RUNTIME_COMM_COMMUNICATOR_H

#include "support/Status.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

namespace lcc::runtime {

/// A transfer among ranks that has started and may not have finished
/// (Communicator::startShiftRing, startAllToAll, startAllReduceSum): its
/// buffers are the engine's until finish() returns.
class Transfer {
public:
  virtual ~Transfer();
  /// Lets the engine move it on without waiting for it (MPI's progress,
  /// which Open MPI makes only inside its calls).
  virtual Status advance() { return Status(); }
  /// Returns once every byte has arrived and been sent.
  virtual Status finish() = 0;
};

class Communicator {
public:
  virtual ~Communicator();

  /// This process's rank, in [0, size()).
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// What carries the collectives ("one process", "MPI (libmpi.so.40)").
  virtual std::string describe() const = 0;

  /// `count` floats summed element by element over the ranks, in place on
  /// every rank.
  Status allReduceSum(float *data, size_t count) {
    sentBytes += count * sizeof(float);
    return reduceSum(data, count);
  }
  /// allReduceSum, started: the floats at `data` are the transfer's until
  /// its finish() returns (by default finished before returning).
  StatusOr<std::unique_ptr<Transfer>> startAllReduceSum(float *data,
                                                        size_t count) {
    sentBytes += count * sizeof(float);
    return startReduceSum(data, count);
  }
  /// Every rank's `bytes` bytes at `data`, in rank order, into `out`
  /// (size() * bytes), on every rank.
  Status allGather(const void *data, size_t bytes, void *out) {
    sentBytes += bytes;
    return gather(data, bytes, out);
  }
  /// Block j of the size() blocks of `blockBytes` at `data` to rank j,
  /// whose block r of `out` it becomes (r: this rank), on every rank.
  Status allToAll(const void *data, size_t blockBytes, void *out) {
    sentBytes += blockBytes * size_t(size() - 1);
    return exchangeBlocks(data, blockBytes, out);
  }
  /// allToAll, started: the bytes at `data` and `out` are the transfer's
  /// until its finish() returns. An engine that cannot start one and
  /// return (the default) finishes it before returning.
  StatusOr<std::unique_ptr<Transfer>>
  startAllToAll(const void *data, size_t blockBytes, void *out) {
    sentBytes += blockBytes * size_t(size() - 1);
    return startExchangeBlocks(data, blockBytes, out);
  }
  /// `bytes` at `data` to rank (rank() + offset) mod size(), and into `out`
  /// those of rank (rank() - offset) mod size(), on every rank.
  Status shiftRing(const void *data, size_t bytes, int64_t offset, void *out) {
    int to = ringNeighbour(offset);
    if (to != rank())
      sentBytes += bytes;
    return sendAroundRing(data, bytes, to, ringNeighbour(-offset), out);
  }
  /// shiftRing, started: the bytes at `data` and `out` are the transfer's
  /// until its finish() returns. An engine that cannot start one and
  /// return (the default) finishes it before returning.
  StatusOr<std::unique_ptr<Transfer>>
  startShiftRing(const void *data, size_t bytes, int64_t offset, void *out) {
    int to = ringNeighbour(offset);
    if (to != rank())
      sentBytes += bytes;
    return startSendAroundRing(data, bytes, to, ringNeighbour(-offset), out);
  }
  /// The rank `offset` ranks on from this one around the ring.
  int ringNeighbour(int64_t offset) const {
    int64_t p = size();
    return int(((int64_t(rank()) + offset % p) % p + p) % p);
  }
  /// Bytes this rank has given to collectives so far (each all-reduce's
  /// tensor, each all-gather's share, what an exchange sends to others,
  /// its groups' included): what reports call communicated.
  uint64_t getSentBytes() const {
    uint64_t bytes = sentBytes;
    for (const auto &[size, group] : groups)
      if (group.get() != this)
        bytes += group->getSentBytes();
    return bytes;
  }
  /// The communicator of the `size` consecutive ranks this one is among
  /// (ranks g * size to (g + 1) * size - 1, g = rank() / size): one group
  /// of a job that splits each sequence over `size` ranks and its batch
  /// over the groups. This communicator itself when size() is `size`.
  /// Made the first time it is asked for, which every rank must do at the
  /// same point (a collective); an error when size() is not a multiple of
  /// `size`.
  StatusOr<Communicator *> group(int size);
  /// Counts `bytes` that another engine of this job's ranks (NCCL) sent.
  void noteSent(uint64_t bytes) { sentBytes += bytes; }
  /// Ends every rank of the job with `code`: a rank that fails ends the
  /// job rather than leave the others waiting in a collective.
  [[noreturn]] virtual void abort(int code) = 0;

protected:
  /// The communicator of the ranks that give the same `color`, ordered by
  /// `key` (MPI_Comm_split); every rank calls it.
  virtual StatusOr<std::unique_ptr<Communicator>> split(int color,
                                                       int key) = 0;
  virtual Status reduceSum(float *data, size_t count) = 0;
  /// reduceSum, started; by default run to the end here.
  virtual StatusOr<std::unique_ptr<Transfer>> startReduceSum(float *data,
                                                             size_t count);
  virtual Status gather(const void *data, size_t bytes, void *out) = 0;
  virtual Status exchangeBlocks(const void *data, size_t blockBytes,
                                void *out) = 0;
  /// exchangeBlocks, started; by default run to the end here.
  virtual StatusOr<std::unique_ptr<Transfer>>
  startExchangeBlocks(const void *data, size_t blockBytes, void *out);
  /// Sends to rank `to` and receives from rank `from` at once.
  virtual Status sendAroundRing(const void *data, size_t bytes, int to,
                                int from, void *out) = 0;
  /// sendAroundRing, started; by default run to the end here.
  virtual StatusOr<std::unique_ptr<Transfer>>
  startSendAroundRing(const void *data, size_t bytes, int to, int from,
                      void *out);

private:
  uint64_t sentBytes = 0;
  std::map<int, std::unique_ptr<Communicator>> groups;
};

/// The communicator of this process: MPI's world when mpirun launched it
/// (its environment says so), else one process alone. An error when
/// mpirun launched it but MPI cannot be loaded.
StatusOr<std::unique_ptr<Communicator>> createCommunicator();

} // namespace lcc::runtime

#endif // LCC_RUNTIME_COMM_COMMUNICATOR_H
