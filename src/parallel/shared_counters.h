#pragma once
// A few 64-bit counters that every rank reads and changes atomically, without a rank
// that serves them: MPI one-sided atomics (MPI_Fetch_and_op) on a window held by rank 0,
// in passive-target mode, so rank 0 computes like any other. (Open MPI carries them out
// without rank 0's help within a node (shared memory) and over RDMA networks through
// UCX.) One rank: plain integers. Only fetch-and-add: a claim is "the one that moved the
// counter from 0"; MPI_Compare_and_swap on 64-bit integers crashes Open MPI 4.x's
// shared-memory transport (open-mpi/ompi issues 7967, 11349).
#include <cstdint>
#include <memory>

#include "parallel/world.h"

namespace rtm::parallel {

class SharedCounters {
public:
    // Collective: every rank makes it with the same count; all start at 0.
    SharedCounters(const World& world, std::size_t count);
    ~SharedCounters();  // collective too
    SharedCounters(const SharedCounters&) = delete;
    SharedCounters& operator=(const SharedCounters&) = delete;

    std::int64_t fetch_add(std::size_t i, std::int64_t v);  // returns the value before
    std::int64_t load(std::size_t i) { return fetch_add(i, 0); }

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace rtm::parallel
