//===- lcc-ranks-check.cpp - the runtime's communicator, rank by rank -----===//
//
// Run alone (one process) or by mpirun: each rank sums rank-dependent
// vectors over the job (one of more than INT_MAX / 4 floats' worth in
// pieces is not needed: a few million) and gathers every rank's number,
// checks what it got and prints "rank R of P over DESCRIPTION: ok".
// `--fail-on-rank=K`: rank K fails instead, which must end the whole job
// with its error line, not leave the others waiting.
//
//===----------------------------------------------------------------------===//

#include "lcc/runtime.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

int fail(LccCommunicator comm, int rank, const std::string &why) {
  std::fprintf(stderr, "lcc-ranks-check: error: rank %d: %s\n", rank,
               why.c_str());
  std::fflush(stderr);
  if (comm)
    lccCommunicatorAbort(comm, 1);
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  int failingRank = -1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--fail-on-rank=", 15) == 0) {
      failingRank = std::atoi(argv[i] + 15);
    } else {
      std::fprintf(stderr, "lcc-ranks-check: error: unknown argument '%s'\n",
                   argv[i]);
      return 2;
    }
  }
  LccCommunicator comm = nullptr;
  if (LccStatus status = lccCommunicatorCreate(&comm)) {
    std::fprintf(stderr, "lcc-ranks-check: error: %s\n",
                 lccStatusGetMessage(status));
    lccStatusDestroy(status);
    return 1;
  }
  int rank = lccCommunicatorGetRank(comm), size = lccCommunicatorGetSize(comm);
  if (rank == failingRank)
    return fail(comm, rank, "failing as asked");

  // Element i of rank r is (r + 1) * (i % 1000 + 1): the sum over ranks is
  // size (size + 1) / 2 times (i % 1000 + 1), exact in floats.
  std::vector<float> values(3 * 1000 * 1000);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = float((rank + 1) * int(i % 1000 + 1));
  if (LccStatus status =
          lccCommunicatorAllReduceSum(comm, values.data(), values.size()))
    return fail(comm, rank, lccStatusGetMessage(status));
  float ranks = float(size * (size + 1) / 2);
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i] != ranks * float(i % 1000 + 1))
      return fail(comm, rank,
                  "sum " + std::to_string(i) + " is " +
                      std::to_string(values[i]) + ", expected " +
                      std::to_string(ranks * float(i % 1000 + 1)));

  int mine = 100 + rank;
  std::vector<int> everyone(size_t(size), -1);
  if (LccStatus status =
          lccCommunicatorAllGather(comm, &mine, sizeof mine, everyone.data()))
    return fail(comm, rank, lccStatusGetMessage(status));
  for (int r = 0; r < size; ++r)
    if (everyone[size_t(r)] != 100 + r)
      return fail(comm, rank,
                  "gathered " + std::to_string(everyone[size_t(r)]) +
                      " from rank " + std::to_string(r));

  std::printf("rank %d of %d over %s: ok\n", rank, size,
              lccCommunicatorDescribe(comm));
  std::fflush(stdout);
  lccCommunicatorDestroy(comm);
  return 0;
}
