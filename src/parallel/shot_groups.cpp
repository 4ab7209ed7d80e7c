#include "parallel/shot_groups.h"

#include <string>

#include "core/error.h"
#include "core/log.h"

namespace rtm::parallel {

namespace {
ShotGroups& the_groups() {
    static ShotGroups g;
    return g;
}
}  // namespace

const ShotGroups& ShotGroups::get() {
    ShotGroups& g = the_groups();
    // Unconfigured: every rank leads a group of one (the world is known once MPI started).
    if (g.per_shot_ == 1) g.leaders_ = World::get();
    return g;
}

void ShotGroups::configure(int per_shot) {
    const World& world = World::get();
    const std::string g = std::to_string(per_shot);
    if (per_shot < 1)
        fail("option parallel.ranks-per-shot", "is " + g + ": a shot needs at least one rank",
             "Use 1: each rank (one per GPU) migrates or models its own shots");
    if (world.size() % per_shot != 0)
        fail("option parallel.ranks-per-shot", "is " + g + ", which does not divide the job's " +
                                                   counted(world.size(), "rank") + " into groups",
             "Run a multiple of " + g + " ranks (mpirun -np), or choose a divisor of " + std::to_string(world.size()));
    ShotGroups& s = the_groups();
    s.per_shot_ = per_shot;
    if (per_shot == 1) {
        s.group_ = World();
        s.leaders_ = world;
        return;
    }
    s.group_ = world.split(world.rank() / per_shot);
    s.leaders_ = world.split(s.group_.root() ? 0 : 1);
}

}  // namespace rtm::parallel
