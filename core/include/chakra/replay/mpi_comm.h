// The replay's communication layer over MPI (Open MPI, MPICH): collectives as MPI's
// non-blocking collectives on one communicator per group (MPI_Comm_split), messages as
// MPI_Isend/MPI_Irecv, the control channel and the end barrier on communicators of their own.
// Built only where MPI is (CHAKRA_MPI), into chakra-replay.
#pragma once

#include <memory>

#include "chakra/replay/replay.h"

namespace chakra::replay {

// Initialises MPI (MPI_Finalize when the layer is destroyed). chakra::Error when it cannot.
std::unique_ptr<CommLayer> make_mpi_layer();

}  // namespace chakra::replay
