#pragma once
// The MPI communicator a World stands for (inside the parallel layer only, built with MPI).
#ifdef RTM_HAVE_MPI
#include <mpi.h>

#include "parallel/world.h"

namespace rtm::parallel {

struct Native {
    static MPI_Comm comm(const World& w);
};

}  // namespace rtm::parallel
#endif
