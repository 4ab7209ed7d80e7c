// The ranks a rank's CPUs are shared with, from the node's affinity masks
// (core/threads.h): what the default CPU thread count is divided by.
#include <string>
#include <vector>

#include "core/threads.h"
#include "support/catch.hpp"

namespace {

// A mask of the CPUs [first, last), as affinity_mask's bytes.
std::string cpus(int first, int last) {
    std::string m(16, '\0');
    for (int c = first; c < last; ++c) m[std::size_t(c / 8)] = char(m[std::size_t(c / 8)] | (1 << (c % 8)));
    return m;
}

}  // namespace

TEST_CASE("the ranks sharing a rank's CPUs are those whose masks overlap its own") {
    // --bind-to socket, two sockets of 16 CPUs and 4 ranks: two a socket (it was 4: 4 threads
    // a rank, half the node idle).
    const std::vector<std::string> socket = {cpus(0, 16), cpus(0, 16), cpus(16, 32), cpus(16, 32)};
    for (std::size_t r = 0; r < socket.size(); ++r) CHECK(rtm::ranks_sharing_cpus(socket, r) == 2);
    // --bind-to core, or Slurm's --cpus-per-task 8: each rank alone on its CPUs.
    const std::vector<std::string> own = {cpus(0, 8), cpus(8, 16), cpus(16, 24), cpus(24, 32)};
    for (std::size_t r = 0; r < own.size(); ++r) CHECK(rtm::ranks_sharing_cpus(own, r) == 1);
    // No binding: every rank on every CPU.
    const std::vector<std::string> none(3, cpus(0, 32));
    CHECK(rtm::ranks_sharing_cpus(none, 1) == 3);
    // Overlapping in part: a rank shares with each rank it overlaps.
    const std::vector<std::string> chain = {cpus(0, 16), cpus(8, 24), cpus(20, 32)};
    CHECK(rtm::ranks_sharing_cpus(chain, 0) == 2);
    CHECK(rtm::ranks_sharing_cpus(chain, 1) == 3);
    // A rank whose mask could not be read shares with all.
    const std::vector<std::string> unknown = {cpus(0, 8), "", cpus(16, 24)};
    CHECK(rtm::ranks_sharing_cpus(unknown, 0) == 2);
    CHECK(rtm::ranks_sharing_cpus(unknown, 1) == 3);
}
