// The World operations under mpirun (world_ranks.cpp): split into groups, gathers,
// exchanges and agreements within a group only, and the agreement that ends a job
// instead of hanging when a member does not come.
#include <string>
#include <thread>

#include "support/catch.hpp"
#include "support/shell.h"
#include "support/test_data.h"

using Catch::Matchers::Contains;

#ifndef RTM_MPIEXEC
TEST_CASE("World operations under mpirun (this build has no MPI)") { rtm::test::skip("rtm was built without MPI"); }
#else

namespace {

rtm::test::Result mpirun(int ranks, const std::string& mode, const std::string& options = "") {
    return rtm::test::run_shell(rtm::test::mpirun_command(ranks) + options + RTM_WORLD_RANKS + " " + mode + " 2>&1");
}

}  // namespace

TEST_CASE("large buffers cross MPI in pieces: gathers of parts of any size, broadcasts and reductions, byte for byte") {
    // 5 ranks: the reduction's tree has inner ranks on two levels and a rank without a
    // partner at its first level.
    const rtm::test::Result r = mpirun(5, "pieces");
    INFO(r.output);
    CHECK(r.status == 0);
    for (int rank = 0; rank < 5; ++rank) CHECK(rtm::test::contains(r.output, "rank " + std::to_string(rank) + ": ok"));
}

TEST_CASE("split worlds gather, exchange, agree and broadcast among their own ranks only") {
    const rtm::test::Result r = mpirun(4, "collectives");
    INFO(r.output);
    CHECK(r.status == 0);
    for (int k = 0; k < 4; ++k) CHECK_THAT(r.output, Contains("rank " + std::to_string(k) + ": ok"));
}

// The CPU threads of a rank are its CPUs over the ranks it shares them with: all of the
// node's ranks when none is bound, itself alone when each is bound to its own core.
TEST_CASE("ranks count the ranks of their node that share their CPUs under mpirun's bindings") {
    const rtm::test::Result none = mpirun(2, "sharers", "--bind-to none ");
    INFO(none.output);
    CHECK(none.status == 0);
    CHECK_THAT(none.output, Contains("rank 0: sharers 2") && Contains("rank 1: sharers 2"));
    if (std::thread::hardware_concurrency() < 2) {  // (two ranks bound to one core share it)
        WARN("one CPU: --bind-to core cannot give two ranks their own cores; that half is not run");
        return;
    }
    const rtm::test::Result core = mpirun(2, "sharers", "--bind-to core ");
    INFO(core.output);
    CHECK(core.status == 0);
    CHECK_THAT(core.output, Contains("rank 0: sharers 1") && Contains("rank 1: sharers 1"));
}

TEST_CASE("an agreement that a rank does not come to ends the job after its wait, naming the rank and the reason") {
    const rtm::test::Result r = mpirun(2, "agree-timeout");
    INFO(r.output);
    CHECK(r.status != 0);
    CHECK_THAT(r.output, Contains("rank 0 of 2: shot 7 failed: a test's reason") && Contains("within 1 s"));
    CHECK_THAT(r.output, !Contains("not ended"));
}

#endif
