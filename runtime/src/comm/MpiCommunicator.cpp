//===- MpiCommunicator.cpp - the ranks of an mpirun job -------------------===//
//
// The few MPI calls lcc makes, resolved from Open MPI's library at run
// time. Open MPI's handles are the addresses of its predefined objects
// (MPI_COMM_WORLD is &ompi_mpi_comm_world), so they are resolved as
// symbols too. Errors return (MPI_ERRORS_RETURN) and become a Status
// naming the call and MPI's message.
//
//===----------------------------------------------------------------------===//

#include "comm/MpiCommunicator.h"
#include "support/RuntimeLibrary.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <type_traits>
#include <vector>

namespace lcc::runtime {
namespace {

constexpr const char *kDefaultLibrary = "libmpi.so.40";
// Open MPI's values (mpi.h).
constexpr int kSuccess = 0;
constexpr int kThreadFunneled = 1;
void *const kInPlace = reinterpret_cast<void *>(1);
void *const kStatusIgnore = nullptr;

using Handle = void *;

struct MpiLibrary {
  std::string path;
  int (*initialized)(int *);
  int (*finalized)(int *);
  int (*initThread)(int *, char ***, int, int *);
  int (*finalize)();
  int (*commRank)(Handle, int *);
  int (*commSize)(Handle, int *);
  int (*commSetErrhandler)(Handle, Handle);
  int (*commSplit)(Handle, int, int, Handle *);
  int (*allreduce)(const void *, void *, int, Handle, Handle, Handle);
  int (*allgather)(const void *, int, Handle, void *, int, Handle, Handle);
  int (*alltoall)(const void *, int, Handle, void *, int, Handle, Handle);
  int (*sendrecv)(const void *, int, Handle, int, int, void *, int, Handle,
                  int, int, Handle, void *);
  int (*iallreduce)(const void *, void *, int, Handle, Handle, Handle,
                    Handle *);
  int (*isend)(const void *, int, Handle, int, int, Handle, Handle *);
  int (*irecv)(void *, int, Handle, int, int, Handle, Handle *);
  int (*waitall)(int, Handle *, void *);
  int (*testall)(int, Handle *, int *, void *);
  int (*abort)(Handle, int);
  int (*errorString)(int, char *, int *);
  Handle world, floatType, byteType, sum, errorsReturn;
};

template <typename... Parts> Status mpiUnavailable(const Parts &...parts) {
  return Status::error(StatusCode::Unavailable, "mpi unavailable: ", parts...);
}

StatusOr<MpiLibrary> loadLibrary() {
  // Global: Open MPI's own plugins, which it loads later, resolve its
  // symbols from it.
  StatusOr<RuntimeLibrary> library = openRuntimeLibrary(
      "LCC_MPI_LIBRARY", kDefaultLibrary, RTLD_NOW | RTLD_GLOBAL,
      "mpi unavailable: ", "launched by mpirun, but ",
      "is Open MPI (libopenmpi3) installed?");
  if (!library.ok())
    return library.getStatus();
  MpiLibrary mpi{};
  mpi.path = library->path;
  SymbolResolver resolve(*library);
  resolve(mpi.initialized, "MPI_Initialized");
  resolve(mpi.finalized, "MPI_Finalized");
  resolve(mpi.initThread, "MPI_Init_thread");
  resolve(mpi.finalize, "MPI_Finalize");
  resolve(mpi.commRank, "MPI_Comm_rank");
  resolve(mpi.commSize, "MPI_Comm_size");
  resolve(mpi.commSetErrhandler, "MPI_Comm_set_errhandler");
  resolve(mpi.commSplit, "MPI_Comm_split");
  resolve(mpi.allreduce, "MPI_Allreduce");
  resolve(mpi.allgather, "MPI_Allgather");
  resolve(mpi.alltoall, "MPI_Alltoall");
  resolve(mpi.sendrecv, "MPI_Sendrecv");
  resolve(mpi.iallreduce, "MPI_Iallreduce");
  resolve(mpi.isend, "MPI_Isend");
  resolve(mpi.irecv, "MPI_Irecv");
  resolve(mpi.waitall, "MPI_Waitall");
  resolve(mpi.testall, "MPI_Testall");
  resolve(mpi.abort, "MPI_Abort");
  resolve(mpi.errorString, "MPI_Error_string");
  resolve(mpi.world, "ompi_mpi_comm_world");
  resolve(mpi.floatType, "ompi_mpi_float");
  resolve(mpi.byteType, "ompi_mpi_byte");
  resolve(mpi.sum, "ompi_mpi_op_sum");
  resolve(mpi.errorsReturn, "ompi_mpi_errors_return");
  if (const char *missing = resolve.firstMissing())
    return mpiUnavailable(mpi.path, " has no ", missing,
                          ": not Open MPI's library, or of another ABI");
  return mpi;
}

class MpiCommunicator final : public Communicator {
public:
  static StatusOr<std::unique_ptr<Communicator>> create() {
    StatusOr<MpiLibrary> loaded = loadLibrary();
    if (!loaded.ok())
      return loaded.getStatus();
    std::unique_ptr<MpiCommunicator> comm(new MpiCommunicator(loaded.take()));
    LCC_RETURN_IF_ERROR(comm->start());
    return std::unique_ptr<Communicator>(std::move(comm));
  }

  ~MpiCommunicator() override {
    int done = 1;
    if (initializedHere && mpi.finalized(&done) == kSuccess && !done)
      mpi.finalize();
  }

  int rank() const override { return rankOfThis; }
  int size() const override { return sizeOfJob; }
  std::string describe() const override { return "MPI (" + mpi.path + ")"; }

  Status reduceSum(float *data, size_t count) override {
    // MPI counts are ints: large reductions go in pieces.
    for (size_t done = 0; done < count;) {
      int piece = int(std::min<size_t>(count - done, INT_MAX));
      LCC_RETURN_IF_ERROR(check(
          "MPI_Allreduce", mpi.allreduce(kInPlace, data + done, piece,
                                         mpi.floatType, mpi.sum, comm)));
      done += size_t(piece);
    }
    return Status();
  }

  Status gather(const void *data, size_t bytes, void *out) override {
    if (bytes > size_t(INT_MAX))
      return Status::error(StatusCode::InvalidArgument, "all-gather of ", bytes,
                           " bytes per rank: at most ", INT_MAX);
    return check("MPI_Allgather",
                 mpi.allgather(data, int(bytes), mpi.byteType, out, int(bytes),
                               mpi.byteType, comm));
  }

  Status exchangeBlocks(const void *data, size_t blockBytes,
                        void *out) override {
    if (blockBytes > size_t(INT_MAX))
      return Status::error(StatusCode::InvalidArgument, "all-to-all of ",
                           blockBytes, " bytes per rank: at most ", INT_MAX);
    return check("MPI_Alltoall",
                 mpi.alltoall(data, int(blockBytes), mpi.byteType, out,
                              int(blockBytes), mpi.byteType, comm));
  }

  Status sendAroundRing(const void *data, size_t bytes, int to, int from,
                        void *out) override {
    const char *sent = static_cast<const char *>(data);
    char *received = static_cast<char *>(out);
    // MPI counts are ints: large blocks go in pieces.
    for (size_t done = 0; done < bytes;) {
      int piece = int(std::min<size_t>(bytes - done, INT_MAX));
      LCC_RETURN_IF_ERROR(
          check("MPI_Sendrecv",
                mpi.sendrecv(sent + done, piece, mpi.byteType, to, kRingTag,
                             received + done, piece, mpi.byteType, from,
                             kRingTag, comm, kStatusIgnore)));
      done += size_t(piece);
    }
    return Status();
  }

  StatusOr<std::unique_ptr<Transfer>> startReduceSum(float *data,
                                                     size_t count) override {
    auto transfer = std::make_unique<MpiTransfer>(*this);
    for (size_t done = 0; done < count;) {
      int piece = int(std::min<size_t>(count - done, INT_MAX));
      Handle request = nullptr;
      LCC_RETURN_IF_ERROR(
          check("MPI_Iallreduce",
                mpi.iallreduce(kInPlace, data + done, piece, mpi.floatType,
                               mpi.sum, comm, &request)));
      transfer->requests.push_back(request);
      done += size_t(piece);
    }
    return std::unique_ptr<Transfer>(std::move(transfer));
  }

  StatusOr<std::unique_ptr<Transfer>>
  startExchangeBlocks(const void *data, size_t blockBytes, void *out) override {
    // One send and one receive per other rank, all posted at once, rather
    // than MPI_Ialltoall: Open MPI moves a nonblocking collective one
    // round at a time, only inside its calls, so between the commands it
    // would crawl; each pair's message completes on its own.
    auto transfer = std::make_unique<MpiTransfer>(*this);
    const char *sent = static_cast<const char *>(data);
    char *received = static_cast<char *>(out);
    for (int peer = 0; peer < sizeOfJob; ++peer)
      if (peer != rankOfThis)
        LCC_RETURN_IF_ERROR(post(Direction::Receive,
                                 received + size_t(peer) * blockBytes,
                                 blockBytes, peer, kAllToAllTag, *transfer));
    for (int step = 1; step < sizeOfJob; ++step) {
      int peer = (rankOfThis + step) % sizeOfJob;
      LCC_RETURN_IF_ERROR(post(
          Direction::Send, const_cast<char *>(sent) + size_t(peer) * blockBytes,
          blockBytes, peer, kAllToAllTag, *transfer));
    }
    std::memcpy(received + size_t(rankOfThis) * blockBytes,
                sent + size_t(rankOfThis) * blockBytes, blockBytes);
    return std::unique_ptr<Transfer>(std::move(transfer));
  }

  StatusOr<std::unique_ptr<Transfer>> startSendAroundRing(const void *data,
                                                          size_t bytes, int to,
                                                          int from,
                                                          void *out) override {
    auto transfer = std::make_unique<MpiTransfer>(*this);
    // The receive first, so that a sender's bytes find their place.
    LCC_RETURN_IF_ERROR(
        post(Direction::Receive, out, bytes, from, kRingTag, *transfer));
    LCC_RETURN_IF_ERROR(post(Direction::Send, const_cast<void *>(data), bytes,
                             to, kRingTag, *transfer));
    return std::unique_ptr<Transfer>(std::move(transfer));
  }

  [[noreturn]] void abort(int code) override {
    mpi.abort(mpi.world, code);
    std::_Exit(code);
  }

private:
  explicit MpiCommunicator(MpiLibrary mpi)
      : mpi(std::move(mpi)), comm(this->mpi.world) {}

  StatusOr<std::unique_ptr<Communicator>> split(int color, int key) override {
    Handle part = nullptr;
    LCC_RETURN_IF_ERROR(
        check("MPI_Comm_split", mpi.commSplit(comm, color, key, &part)));
    // Freed by MPI_Finalize, after every communicator made from it.
    std::unique_ptr<MpiCommunicator> group(new MpiCommunicator(mpi));
    group->comm = part;
    LCC_RETURN_IF_ERROR(group->start());
    return std::unique_ptr<Communicator>(std::move(group));
  }

  Status start() {
    int initialized = 0;
    LCC_RETURN_IF_ERROR(
        check("MPI_Initialized", mpi.initialized(&initialized)));
    if (!initialized) {
      int provided = 0;
      LCC_RETURN_IF_ERROR(
          check("MPI_Init_thread",
                mpi.initThread(nullptr, nullptr, kThreadFunneled, &provided)));
      initializedHere = true;
    }
    LCC_RETURN_IF_ERROR(
        check("MPI_Comm_set_errhandler",
              mpi.commSetErrhandler(comm, mpi.errorsReturn)));
    LCC_RETURN_IF_ERROR(
        check("MPI_Comm_rank", mpi.commRank(comm, &rankOfThis)));
    return check("MPI_Comm_size", mpi.commSize(comm, &sizeOfJob));
  }

  /// Requests posted: a ring shift's or an all-to-all's receives and sends
  /// (MPI_Irecv, MPI_Isend) or an all-reduce's pieces (MPI_Iallreduce).
  class MpiTransfer final : public Transfer {
  public:
    explicit MpiTransfer(MpiCommunicator &comm) : comm(comm) {}
    ~MpiTransfer() override {
      if (!requests.empty())
        (void)finish();
    }
    Status advance() override {
      int done = 0;
      return requests.empty()
                 ? Status()
                 : comm.check("MPI_Testall",
                              comm.mpi.testall(int(requests.size()),
                                               requests.data(), &done,
                                               kStatusIgnore));
    }
    Status finish() override {
      if (requests.empty())
        return Status();
      Status done = comm.check(
          "MPI_Waitall", comm.mpi.waitall(int(requests.size()), requests.data(),
                                          kStatusIgnore));
      requests.clear();
      return done;
    }

    std::vector<Handle> requests;

  private:
    MpiCommunicator &comm;
  };

  /// Message tags: a ring shift's and an all-to-all's messages between two
  /// ranks never match each other's (each kind matches in the order both
  /// ranks post them, the same program order).
  static constexpr int kRingTag = 1, kAllToAllTag = 2;

  enum class Direction { Send, Receive };

  /// `bytes` at `data` sent to, or received from, rank `peer`, posted
  /// (MPI_Isend, MPI_Irecv) and noted in `transfer`; MPI counts are ints,
  /// so large blocks go in pieces, which both ranks post in order.
  Status post(Direction direction, void *data, size_t bytes, int peer, int tag,
              MpiTransfer &transfer) {
    char *bytesAt = static_cast<char *>(data);
    for (size_t done = 0; done < bytes;) {
      int piece = int(std::min<size_t>(bytes - done, INT_MAX));
      Handle request = nullptr;
      LCC_RETURN_IF_ERROR(
          direction == Direction::Send
              ? check("MPI_Isend",
                      mpi.isend(bytesAt + done, piece, mpi.byteType, peer, tag,
                                comm, &request))
              : check("MPI_Irecv",
                      mpi.irecv(bytesAt + done, piece, mpi.byteType, peer, tag,
                                comm, &request)));
      transfer.requests.push_back(request);
      done += size_t(piece);
    }
    return Status();
  }

  Status check(const char *call, int result) const {
    if (result == kSuccess)
      return Status();
    char text[512] = {};
    int length = 0;
    if (mpi.errorString(result, text, &length) != kSuccess)
      return Status::error(StatusCode::Internal, call, " failed (MPI error ",
                           result, ")");
    return Status::error(StatusCode::Internal, call, " failed: ",
                         std::string(text, size_t(std::max(length, 0))));
  }

  MpiLibrary mpi;
  Handle comm; // MPI_COMM_WORLD, or a group split from it
  bool initializedHere = false;
  int rankOfThis = 0, sizeOfJob = 1;
};

} // namespace

bool launchedByMpirun() {
  for (const char *variable : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"})
    if (const char *value = std::getenv(variable); value && *value)
      return true;
  return false;
}

StatusOr<std::unique_ptr<Communicator>> createMpiCommunicator() {
  return MpiCommunicator::create();
}

} // namespace lcc::runtime
