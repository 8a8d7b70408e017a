//===- MpiCommunicator.h - the ranks of an mpirun job -----------*- C++ -*-===//
//
// Open MPI (Debian's libopenmpi3), loaded with dlopen when mpirun launched
// the process: nothing links against it, so lcc runs where it is absent.
// LCC_MPI_LIBRARY names another library of Open MPI's ABI.
//
//===----------------------------------------------------------------------===//

#ifndef LCC_RUNTIME_COMM_MPICOMMUNICATOR_H
#define LCC_RUNTIME_COMM_MPICOMMUNICATOR_H

#include "comm/Communicator.h"

namespace lcc::runtime {

/// Whether mpirun launched this process (Open MPI's or PMIx's environment).
bool launchedByMpirun();

/// MPI's world communicator, MPI initialised (and finalised when the
/// communicator goes); an error naming the library and why when it cannot
/// be loaded or initialised.
StatusOr<std::unique_ptr<Communicator>> createMpiCommunicator();

} // namespace lcc::runtime

#endif // LCC_RUNTIME_COMM_MPICOMMUNICATOR_H
