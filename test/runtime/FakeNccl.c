/*===- FakeNccl.c - NCCL's API over MPI, on the fake driver's memory -------===*
 *
 * The few NCCL entry points the runtime calls (NcclCommunicator.cpp), for
 * testing the cuda device's collectives without GPUs: the fake CUDA
 * driver's device memory is host memory, so an all-reduce is MPI's, on
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

enum { ncclSuccess = 0, ncclInvalidArgument = 4, ncclFloat32 = 7 };
enum { ncclSum = 0, ncclAvg = 4 };

static void logLine(const FakeComm *comm, const char *what, size_t count,
                    const char *op) {
  const char *path = getenv("LCC_FAKE_NCCL_LOG");
  if (!path || !*path)
    return;
  FILE *log = fopen(path, "a");
  if (!log)
    return;
  fprintf(log, "rank %d of %d: %s %zu floats %s\n", comm->rank, comm->ranks,
          what, count, op);
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
  logLine(fake, "ncclAllReduce", count, op == ncclAvg ? "avg" : "sum");
  return ncclSuccess;
}

int ncclCommDestroy(void *comm) {
  free(comm);
  return ncclSuccess;
}

const char *ncclGetErrorString(int result) {
  return result == ncclSuccess ? "no error" : "invalid argument (fake NCCL)";
}
