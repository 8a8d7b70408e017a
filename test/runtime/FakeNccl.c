/*===- FakeNccl.c - NCCL's API over MPI, on the fake driver's memory -------===*
 *
 * The few NCCL entry points the runtime calls (NcclCommunicator.cpp), for
 * testing the cuda device's collectives without GPUs: the fake CUDA
 * driver's device memory is host memory, so an all-reduce is MPI's (and
 * a group of sends and receives MPI's nonblocking ones), on
 * MPI_COMM_WORLD of the Open MPI library the runtime loaded (global
 * symbols). Each call appends a line to $LCC_FAKE_NCCL_LOG when set, so
 * that a test sees NCCL did the work, not the host staging.
 *
 *===----------------------------------------------------------------------===*/

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  char internal[128];
} ncclUniqueId;

typedef struct {
  int ranks, rank;
} FakeComm;

enum { ncclSuccess = 0, ncclInvalidArgument = 4, ncclInt8 = 0, ncclFloat32 = 7 };
int ncclGroupEnd(void);
enum { ncclSum = 0, ncclAvg = 4 };

static void logLine(const FakeComm *comm, const char *what, size_t count,
                    const char *op) {
  const char *path = getenv("LCC_FAKE_NCCL_LOG");
  if (!path || !*path)
    return;
  FILE *log = fopen(path, "a");
  if (!log)
    return;
  fprintf(log, "rank %d of %d: %s %zu %s\n", comm->rank, comm->ranks, what,
          count, op);
  fclose(log);
}

int ncclGetUniqueId(ncclUniqueId *id) {
  memset(id, 0, sizeof(*id));
  strcpy(id->internal, "fake-nccl");
  return ncclSuccess;
}

int ncclCommInitRank(void **comm, int ranks, ncclUniqueId id, int rank) {
  /* Every rank must hold rank 0's id, as the runtime gathers it. */
  if (strcmp(id.internal, "fake-nccl") != 0 || rank < 0 || rank >= ranks)
    return ncclInvalidArgument;
  FakeComm *made = malloc(sizeof(FakeComm));
  made->ranks = ranks;
  made->rank = rank;
  *comm = made;
  return ncclSuccess;
}

int ncclAllReduce(const void *send, void *receive, size_t count, int type,
                  int op, void *comm, void *stream) {
  (void)stream;
  FakeComm *fake = comm;
  if (type != ncclFloat32 || (op != ncclSum && op != ncclAvg) ||
      send != receive)
    return ncclInvalidArgument;
  typedef int (*Allreduce)(const void *, void *, int, void *, void *, void *);
  Allreduce allreduce = (Allreduce)dlsym(RTLD_DEFAULT, "MPI_Allreduce");
  void *world = dlsym(RTLD_DEFAULT, "ompi_mpi_comm_world");
  void *f32 = dlsym(RTLD_DEFAULT, "ompi_mpi_float");
  void *sum = dlsym(RTLD_DEFAULT, "ompi_mpi_op_sum");
  if (!allreduce || !world || !f32 || !sum)
    return ncclInvalidArgument;
  if (allreduce((void *)1 /* MPI_IN_PLACE */, receive, (int)count, f32, sum,
                world) != 0)
    return ncclInvalidArgument;
  if (op == ncclAvg)
    for (size_t i = 0; i < count; ++i)
      ((float *)receive)[i] /= (float)fake->ranks;
  logLine(fake, "ncclAllReduce", count,
          op == ncclAvg ? "floats avg" : "floats sum");
  return ncclSuccess;
}

int ncclCommDestroy(void *comm) {
  free(comm);
  return ncclSuccess;
}

const char *ncclGetErrorString(int result) {
  return result == ncclSuccess ? "no error" : "invalid argument (fake NCCL)";
}

/* Sends and receives between ncclGroupStart and ncclGroupEnd wait for the
 * group's end, as NCCL's own do, then run as MPI's nonblocking calls. */
enum { kMaxGroupCalls = 64 };
static struct {
  int send; /* else a receive */
  void *data;
  size_t bytes;
  int peer;
  FakeComm *comm;
} groupCalls[kMaxGroupCalls];
static int groupDepth, groupCount;

int ncclGroupStart(void) {
  ++groupDepth;
  return ncclSuccess;
}

static int enqueue(int send, const void *data, size_t count, int type,
                   int peer, void *comm) {
  FakeComm *fake = comm;
  if (type != ncclInt8 || peer < 0 || peer >= fake->ranks ||
      groupCount == kMaxGroupCalls || count > 0x7fffffff)
    return ncclInvalidArgument;
  groupCalls[groupCount].send = send;
  groupCalls[groupCount].data = (void *)data;
  groupCalls[groupCount].bytes = count;
  groupCalls[groupCount].peer = peer;
  groupCalls[groupCount].comm = fake;
  ++groupCount;
  return groupDepth > 0 ? ncclSuccess : ncclGroupEnd();
}

int ncclSend(const void *send, size_t count, int type, int peer, void *comm,
             void *stream) {
  (void)stream;
  return enqueue(1, send, count, type, peer, comm);
}

int ncclRecv(void *receive, size_t count, int type, int peer, void *comm,
             void *stream) {
  (void)stream;
  return enqueue(0, receive, count, type, peer, comm);
}

int ncclGroupEnd(void) {
  if (groupDepth > 0 && --groupDepth > 0)
    return ncclSuccess;
  typedef int (*Transfer)(void *, int, void *, int, int, void *, void **);
  typedef int (*Waitall)(int, void **, void *);
  Transfer isend = (Transfer)dlsym(RTLD_DEFAULT, "MPI_Isend");
  Transfer irecv = (Transfer)dlsym(RTLD_DEFAULT, "MPI_Irecv");
  Waitall waitall = (Waitall)dlsym(RTLD_DEFAULT, "MPI_Waitall");
  void *world = dlsym(RTLD_DEFAULT, "ompi_mpi_comm_world");
  void *byte = dlsym(RTLD_DEFAULT, "ompi_mpi_byte");
  if (!isend || !irecv || !waitall || !world || !byte)
    return ncclInvalidArgument;
  void *requests[kMaxGroupCalls];
  int count = groupCount, failed = 0;
  groupCount = 0;
  for (int i = 0; i < count; ++i) {
    Transfer transfer = groupCalls[i].send ? isend : irecv;
    failed |= transfer(groupCalls[i].data, (int)groupCalls[i].bytes, byte,
                       groupCalls[i].peer, /*tag=*/7, world, &requests[i]);
    logLine(groupCalls[i].comm, groupCalls[i].send ? "ncclSend" : "ncclRecv",
            groupCalls[i].bytes, "bytes");
  }
  if (failed || waitall(count, requests, NULL /* MPI_STATUSES_IGNORE */) != 0)
    return ncclInvalidArgument;
  return ncclSuccess;
}
