//===- NcclCommunicator.cpp - a job's collectives on CUDA memory ----------===//
//
// The few NCCL calls lcc makes, resolved at run time. NCCL's values
// (nccl.h): ncclSuccess 0, ncclInt8 0, ncclFloat32 7, ncclSum 0, ncclAvg 4
// (NCCL 2.10 and later); ncclUniqueId is 128 bytes passed by value. Sends
// and receives (NCCL 2.7 and later) that must progress together are
// grouped.
//
//===----------------------------------------------------------------------===//

#include "comm/NcclCommunicator.h"
#include "support/RuntimeLibrary.h"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <type_traits>
#include <vector>

namespace lcc::runtime {
namespace {

constexpr const char *kDefaultNcclLibrary = "libnccl.so.2";
constexpr int kNcclSuccess = 0;
constexpr int kNcclInt8 = 0;
constexpr int kNcclFloat32 = 7;
constexpr int kNcclSum = 0;
constexpr int kNcclAvg = 4;

struct NcclUniqueId {
  char bytes[128];
};

template <typename... Parts> Status ncclUnavailable(const Parts &...parts) {
  return Status::error(StatusCode::Unavailable, "nccl unavailable: ", parts...);
}

} // namespace

struct NcclCommunicator::Library {
  std::string path;
  int (*getUniqueId)(NcclUniqueId *);
  int (*commInitRank)(void **, int, NcclUniqueId, int);
  int (*allReduce)(const void *, void *, size_t, int, int, void *, void *);
  int (*send)(const void *, size_t, int, int, void *, void *);
  int (*recv)(void *, size_t, int, int, void *, void *);
  int (*groupStart)();
  int (*groupEnd)();
  int (*commDestroy)(void *);
  const char *(*errorString)(int);

  Status check(const char *call, int result) const {
    if (result == kNcclSuccess)
      return Status();
    const char *text = errorString ? errorString(result) : nullptr;
    return Status::error(StatusCode::Internal, call, " failed: ",
                         text ? text : "NCCL error " + std::to_string(result));
  }
};

namespace {

StatusOr<std::unique_ptr<NcclCommunicator::Library>> loadNcclLibrary() {
  StatusOr<RuntimeLibrary> library = openRuntimeLibrary(
      "LCC_NCCL_LIBRARY", kDefaultNcclLibrary, RTLD_NOW | RTLD_LOCAL,
      "nccl unavailable: ", "the ranks of this job reduce CUDA memory, but ",
      "is NCCL (libnccl2) installed?");
  if (!library.ok())
    return library.getStatus();
  auto nccl = std::make_unique<NcclCommunicator::Library>();
  nccl->path = library->path;
  SymbolResolver resolve(*library);
  resolve(nccl->getUniqueId, "ncclGetUniqueId");
  resolve(nccl->commInitRank, "ncclCommInitRank");
  resolve(nccl->allReduce, "ncclAllReduce");
  resolve(nccl->send, "ncclSend");
  resolve(nccl->recv, "ncclRecv");
  resolve(nccl->groupStart, "ncclGroupStart");
  resolve(nccl->groupEnd, "ncclGroupEnd");
  resolve(nccl->commDestroy, "ncclCommDestroy");
  resolve(nccl->errorString, "ncclGetErrorString");
  if (const char *missing = resolve.firstMissing())
    return ncclUnavailable(nccl->path, " has no ", missing,
                           ": not NCCL's library");
  return nccl;
}

} // namespace

StatusOr<std::unique_ptr<NcclCommunicator>>
NcclCommunicator::create(Communicator &job) {
  StatusOr<std::unique_ptr<Library>> loaded = loadNcclLibrary();
  if (!loaded.ok())
    return loaded.getStatus();
  std::unique_ptr<Library> nccl = loaded.take();
  NcclUniqueId mine{};
  if (job.rank() == 0)
    LCC_RETURN_IF_ERROR(
        nccl->check("ncclGetUniqueId", nccl->getUniqueId(&mine)));
  std::vector<NcclUniqueId> every(static_cast<size_t>(job.size()));
  LCC_RETURN_IF_ERROR(job.allGather(&mine, sizeof(mine), every.data()));
  void *comm = nullptr;
  LCC_RETURN_IF_ERROR(nccl->check(
      "ncclCommInitRank",
      nccl->commInitRank(&comm, job.size(), every.front(), job.rank())));
  return std::unique_ptr<NcclCommunicator>(
      new NcclCommunicator(std::move(nccl), comm));
}

NcclCommunicator::NcclCommunicator(std::unique_ptr<Library> library, void *comm)
    : library(std::move(library)), comm(comm) {}

NcclCommunicator::~NcclCommunicator() { library->commDestroy(comm); }

Status NcclCommunicator::allReduce(uint64_t data, size_t count, bool mean,
                                   void *stream) {
  void *address = reinterpret_cast<void *>(static_cast<uintptr_t>(data));
  return library->check(
      "ncclAllReduce",
      library->allReduce(address, address, count, kNcclFloat32,
                         mean ? kNcclAvg : kNcclSum, comm, stream));
}

namespace {

void *addressOf(uint64_t device) {
  return reinterpret_cast<void *>(static_cast<uintptr_t>(device));
}

} // namespace

Status NcclCommunicator::allToAll(uint64_t source, size_t blockBytes,
                                  int ranks, uint64_t target, void *stream) {
  LCC_RETURN_IF_ERROR(library->check("ncclGroupStart", library->groupStart()));
  Status enqueued;
  for (int peer = 0; peer < ranks && enqueued.ok(); ++peer) {
    uint64_t offset = uint64_t(peer) * blockBytes;
    enqueued = library->check("ncclSend",
                              library->send(addressOf(source + offset),
                                            blockBytes, kNcclInt8, peer, comm,
                                            stream));
    if (enqueued.ok())
      enqueued = library->check("ncclRecv",
                                library->recv(addressOf(target + offset),
                                              blockBytes, kNcclInt8, peer,
                                              comm, stream));
  }
  // The group ends even after an error, so NCCL is not left inside it.
  Status ended = library->check("ncclGroupEnd", library->groupEnd());
  return enqueued.ok() ? ended : enqueued;
}

Status NcclCommunicator::sendAroundRing(uint64_t source, size_t bytes, int to,
                                        int from, uint64_t target,
                                        void *stream) {
  LCC_RETURN_IF_ERROR(library->check("ncclGroupStart", library->groupStart()));
  Status enqueued = library->check(
      "ncclSend",
      library->send(addressOf(source), bytes, kNcclInt8, to, comm, stream));
  if (enqueued.ok())
    enqueued = library->check("ncclRecv",
                              library->recv(addressOf(target), bytes,
                                            kNcclInt8, from, comm, stream));
  Status ended = library->check("ncclGroupEnd", library->groupEnd());
  return enqueued.ok() ? ended : enqueued;
}

} // namespace lcc::runtime
