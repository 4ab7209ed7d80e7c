#pragma once
// The job's ranks in shot groups (parallel.ranks-per-shot = G): ranks r with equal r / G
// propagate one shot together, each a z-slab of its grid (slab_layout.h). The first
// rank of each group leads it: the leaders share the shots out among themselves
// (work_queue.h) and tell their members which shot is next, so that every member runs
// the same shot code; the leader alone writes the shot's products.
#include "parallel/world.h"

namespace rtm::parallel {

class ShotGroups {
public:
    // The job's layout: one rank per shot until configure() is called.
    static const ShotGroups& get();
    // Collective over the job's ranks: groups of `per_shot` consecutive ranks. Throws,
    // naming parallel.ranks-per-shot, when per_shot is below 1 or does not divide the ranks.
    static void configure(int per_shot);

    int per_shot() const { return per_shot_; }
    int count() const { return World::get().size() / per_shot_; }
    const World& group() const { return group_; }      // this rank's group
    // Among the leaders: the leaders (on other ranks: the other members, unused).
    const World& leaders() const { return leaders_; }
    bool leader() const { return group_.root(); }

private:
    int per_shot_ = 1;
    World group_, leaders_;
};

// How long the members of a group wait for one another when they agree on a shot's
// outcome (World::agree): members meet at the same points of one shot, a few steps'
// compute apart, unless one left the shot by an error while the others wait in an
// exchange; then the job ends after this wait rather than hanging.
constexpr double kGroupAgreeSeconds = 300;

}  // namespace rtm::parallel
