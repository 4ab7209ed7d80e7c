// The World operations under mpirun (world_ranks.cpp): split into groups, gathers,
// exchanges and agreements within a group only, and the agreement that ends a job
// instead of hanging when a member does not come.
#include <string>

#include "support/catch.hpp"
#include "support/shell.h"
#include "support/test_data.h"

using Catch::Matchers::Contains;

#ifndef RTM_MPIEXEC
TEST_CASE("World operations under mpirun (this build has no MPI)") { rtm::test::skip("rtm was built without MPI"); }
#else

namespace {

rtm::test::Result mpirun(int ranks, const std::string& mode) {
    return rtm::test::run_shell(rtm::test::mpirun_command(ranks) + RTM_WORLD_RANKS + " " + mode + " 2>&1");
}

}  // namespace

TEST_CASE("large buffers cross MPI in pieces: gathers of parts of any size, broadcasts and reductions, byte for byte") {
    const rtm::test::Result r = mpirun(3, "pieces");
    INFO(r.output);
    CHECK(r.status == 0);
    for (const char* line : {"rank 0: ok", "rank 1: ok", "rank 2: ok"}) CHECK(rtm::test::contains(r.output, line));
}

TEST_CASE("split worlds gather, exchange, agree and broadcast among their own ranks only") {
    const rtm::test::Result r = mpirun(4, "collectives");
    INFO(r.output);
    CHECK(r.status == 0);
    for (int k = 0; k < 4; ++k) CHECK_THAT(r.output, Contains("rank " + std::to_string(k) + ": ok"));
}

TEST_CASE("an agreement that a rank does not come to ends the job after its wait, naming the rank and the reason") {
    const rtm::test::Result r = mpirun(2, "agree-timeout");
    INFO(r.output);
    CHECK(r.status != 0);
    CHECK_THAT(r.output, Contains("rank 0 of 2: shot 7 failed: a test's reason") && Contains("within 1 s"));
    CHECK_THAT(r.output, !Contains("not ended"));
}

#endif
