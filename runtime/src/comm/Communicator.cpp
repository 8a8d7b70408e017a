//===- Communicator.cpp - the processes of one job ------------------------===//

#include "comm/Communicator.h"
#include "comm/MpiCommunicator.h"

#include <cstdlib>
#include <cstring>

namespace lcc::runtime {

Communicator::~Communicator() = default;

Transfer::~Transfer() = default;

namespace {

/// A transfer that had finished when it was started.
class FinishedTransfer final : public Transfer {
public:
  Status finish() override { return Status(); }
};

} // namespace

StatusOr<std::unique_ptr<Transfer>> Communicator::startReduceSum(float *data,
                                                                 size_t count) {
  LCC_RETURN_IF_ERROR(reduceSum(data, count));
  return std::unique_ptr<Transfer>(new FinishedTransfer());
}

StatusOr<std::unique_ptr<Transfer>>
Communicator::startExchangeBlocks(const void *data, size_t blockBytes,
                                  void *out) {
  LCC_RETURN_IF_ERROR(exchangeBlocks(data, blockBytes, out));
  return std::unique_ptr<Transfer>(new FinishedTransfer());
}

StatusOr<std::unique_ptr<Transfer>>
Communicator::startSendAroundRing(const void *data, size_t bytes, int to,
                                  int from, void *out) {
  LCC_RETURN_IF_ERROR(sendAroundRing(data, bytes, to, from, out));
  return std::unique_ptr<Transfer>(new FinishedTransfer());
}

StatusOr<Communicator *> Communicator::group(int groupSize) {
  if (groupSize == size())
    return this;
  if (groupSize < 1 || size() % groupSize != 0)
    return Status::error(StatusCode::InvalidArgument, "a job of ", size(),
                         size() == 1 ? " rank" : " ranks",
                         " is not made of groups of ", groupSize);
  std::unique_ptr<Communicator> &made = groups[groupSize];
  if (!made) {
    StatusOr<std::unique_ptr<Communicator>> split =
        this->split(rank() / groupSize, rank() % groupSize);
    if (!split.ok())
      return split.getStatus();
    made = split.take();
  }
  return made.get();
}

namespace {

/// A job of one rank: each collective is what it gives one process.
class OneProcess final : public Communicator {
public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string describe() const override { return "one process"; }
  Status reduceSum(float *, size_t) override { return Status(); }
  Status gather(const void *data, size_t bytes, void *out) override {
    if (bytes)
      std::memmove(out, data, bytes);
    return Status();
  }
  Status exchangeBlocks(const void *data, size_t blockBytes,
                        void *out) override {
    return gather(data, blockBytes, out);
  }
  Status sendAroundRing(const void *data, size_t bytes, int, int,
                        void *out) override {
    return gather(data, bytes, out);
  }
  StatusOr<std::unique_ptr<Communicator>> split(int, int) override {
    return Status::error(StatusCode::Internal,
                         "one process has no groups but itself");
  }
  [[noreturn]] void abort(int code) override { std::_Exit(code); }
};

} // namespace

StatusOr<std::unique_ptr<Communicator>> createCommunicator() {
  if (launchedByMpirun())
    return createMpiCommunicator();
  return std::unique_ptr<Communicator>(new OneProcess());
}

} // namespace lcc::runtime
