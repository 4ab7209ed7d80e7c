// The work queue on one rank: its order handed out once, first to last, and the count
// of items not yet handed out, which a rank reads before taking a batch ahead
// (pipeline/migration_job.cpp). Over several ranks: the job tests under mpirun.
#include "parallel/work_queue.h"
#include "parallel/world.h"
#include "support/catch.hpp"

using rtm::parallel::WorkQueue;
using rtm::parallel::World;

TEST_CASE("a work queue hands out its order once, first to last, counting the items not yet handed out") {
    WorkQueue q(World::get(), {2, 0, 1}, 3);
    CHECK(q.unclaimed() == 3);
    for (long expected : {2L, 0L, 1L}) {
        const WorkQueue::Claim c = q.next(false);
        REQUIRE(c);
        CHECK(c.item == expected);
        CHECK_FALSE(c.retry);
        CHECK(q.finish(c, true) == false);
    }
    CHECK(q.unclaimed() == 0);
    CHECK_FALSE(q.next(false));
    CHECK_FALSE(q.next());      // every item finished: no wait
    CHECK(q.unclaimed() == 0);  // (the takes that found the order spent are not items)
    CHECK(q.finished_ok() == 3);
}
