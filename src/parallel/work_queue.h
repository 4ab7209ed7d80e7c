#pragma once
// Items (shots) handed to ranks as they ask for them: no rank serves the others, each
// takes the next item from shared counters (shared_counters.h) when it finishes one,
// so fast ranks do more and a long item delays nobody else. Items go out in the order
// given (largest first, so that the last ones to finish are short).
//
// An item that fails on one rank is handed once to another rank (a device's memory, a
// node's disk, a bad GPU), and is final when it fails there too or when there is no
// other rank. A rank that finds nothing to take waits while others are still working,
// since one of their items may come back for a retry.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "parallel/shared_counters.h"
#include "parallel/shot_groups.h"

namespace rtm::parallel {

// Over shot groups (shot_groups.h), the leaders take items as ranks do, and each tells
// its group: every member gets the same claims and the same retry answers, so all run
// the same code; "another rank" is then another group. Every member calls next() and
// finish() once per claim (they meet there).
class WorkQueue {
public:
    // Collective. `order`: the items to hand out, first to last, the same on every rank;
    // item ids are < `ids` (e.g. the job's shot numbers).
    WorkQueue(const World& world, std::vector<long> order, long ids);
    WorkQueue(const ShotGroups& groups, std::vector<long> order, long ids);

    struct Claim {
        long item = -1;
        bool retry = false;  // a second try after a failure on another rank
        explicit operator bool() const { return item >= 0; }
    };
    // The next item for this rank; an empty claim when every item is finished (or
    // handed out and none can come back to this rank), or after stop(). wait = false:
    // also an empty claim at once when no item can be taken now (a rank that holds
    // claims takes more without waiting for its own to come back).
    Claim next(bool wait = true);
    // Reports a claim finished. A failure is retried on another rank (returns true) when
    // it was a first try and there is another rank; otherwise it is final (false).
    bool finish(const Claim& claim, bool ok);
    // No rank takes another item (a signal on any rank stops the whole job).
    void stop();
    bool stopped();
    long finished_ok();           // items done, job-wide (on group leaders; 0 on other members)
    // A claim's work has ended well (before finish(): its result may still be refused):
    // returns how many have, this one included, job-wide, each count handed out once (on
    // group leaders; 0 on other members). Reading finished_ok() there instead, two ranks
    // ending together both said "1 of 30".
    long ended();
    long unclaimed();             // items of the order not handed out yet (retries aside; leaders)
    double waiting_seconds() const { return waiting_; }  // this rank's time in next() without work
    // Whether every member of this rank's group had its claim's work succeed (`mine`
    // here); a member that does not come ends the job (World::agree). One rank: mine.
    bool agree(bool mine, const std::string& what) const;
    bool leader() const { return group_.root(); }  // the one that records and writes

private:
    Claim claim_next(bool wait);

    const World& world_;  // the ranks (or group leaders) that take items
    World group_;         // this rank's shot group (one rank without groups)
    std::vector<long> order_;
    long ids_;
    std::unique_ptr<SharedCounters> c_;  // on the ranks that take items
    double waiting_ = 0;
};

}  // namespace rtm::parallel
