#include "parallel/work_queue.h"

#include <algorithm>
#include <chrono>
#include <thread>

namespace rtm::parallel {

namespace {

// The counters: the next position in the order, claims under way, retries queued, items
// done, the stop flag, claims whose work has ended (progress); then the retry queue
// (item * ranks + the rank that failed it + 1, 0 while it is being written) and each
// retry's claim count (the rank that moves it from 0 has it).
enum : std::size_t { kNext, kBusy, kRetries, kDone, kStop, kEnded, kFixed };

}  // namespace

WorkQueue::WorkQueue(const World& world, std::vector<long> order, long ids)
    : world_(world), order_(std::move(order)), ids_(ids),
      c_(std::make_unique<SharedCounters>(world, kFixed + 2 * std::size_t(ids))) {}

WorkQueue::WorkQueue(const ShotGroups& groups, std::vector<long> order, long ids)
    : world_(groups.leaders()), group_(groups.group()), order_(std::move(order)), ids_(ids) {
    // Collective over the leaders only (the other members' `leaders` is not theirs to use).
    if (group_.root()) c_ = std::make_unique<SharedCounters>(world_, kFixed + 2 * std::size_t(ids));
}

WorkQueue::Claim WorkQueue::next(bool wait) {
    Claim c;
    if (group_.root()) c = claim_next(wait);
    long v[2] = {c.item, long(c.retry)};
    group_.broadcast(v, sizeof v);
    return Claim{v[0], v[1] != 0};
}

bool WorkQueue::agree(bool mine, const std::string& what) const {
    return group_.agree(mine, kGroupAgreeSeconds, what);
}

WorkQueue::Claim WorkQueue::claim_next(bool wait) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto claimed = [&](long item, bool retry) {
        waiting_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return Claim{item, retry};
    };
    const std::size_t retry_at = kFixed, claim_at = kFixed + std::size_t(ids_);
    const long ranks = world_.size();
    bool exhausted = false;
    while (!stopped()) {
        // Read before the retries: finish() queues a retry before it stops counting as
        // busy, so if nobody was busy here, every retry is already in the queue below.
        const std::int64_t busy = c_->load(kBusy);
        // Retries first: another rank's failure, once.
        const std::int64_t queued = c_->load(kRetries);
        bool retry_waits = false;  // one is being queued: it may be for this rank
        for (std::int64_t e = 0; e < queued; ++e) {
            const std::int64_t v = c_->load(retry_at + std::size_t(e));
            if (v == 0) retry_waits = true;
            else if ((v - 1) % ranks != world_.rank() && c_->fetch_add(claim_at + std::size_t(e), 1) == 0) {
                c_->fetch_add(kBusy, 1);
                return claimed(long((v - 1) / ranks), true);
            }
        }
        if (!exhausted) {
            // Counted busy before taking, so that a rank that sees nobody busy knows that no
            // rank is between taking an item and counting itself.
            c_->fetch_add(kBusy, 1);
            const std::int64_t i = c_->fetch_add(kNext, 1);
            if (i < std::int64_t(order_.size())) return claimed(order_[std::size_t(i)], false);
            c_->fetch_add(kBusy, -1);
            exhausted = true;
            continue;  // `busy` was read before this: read it again now that the order is spent
        }
        // Nothing to take: done once no rank holds an item (none can come back).
        if (!wait || (busy == 0 && !retry_waits)) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    claimed(-1, false);
    return {};
}

bool WorkQueue::finish(const Claim& claim, bool ok) {
    bool retried = false;
    if (!group_.root()) {  // the leader's answer
        group_.broadcast(&retried, sizeof retried);
        return retried;
    }
    if (ok) c_->fetch_add(kDone, 1);
    else if (!claim.retry && world_.size() > 1) {
        // Queued before this claim stops counting as busy: no rank ends in between.
        const std::int64_t e = c_->fetch_add(kRetries, 1);
        c_->fetch_add(kFixed + std::size_t(e), claim.item * world_.size() + world_.rank() + 1);
        retried = true;
    }
    c_->fetch_add(kBusy, -1);
    group_.broadcast(&retried, sizeof retried);
    return retried;
}

// A member's stop reaches its group through the leader, which stops as well on the
// same signal (mpirun passes signals to every rank).
void WorkQueue::stop() {
    if (c_) c_->fetch_add(kStop, 1);
}
bool WorkQueue::stopped() { return c_ && c_->load(kStop) != 0; }
long WorkQueue::finished_ok() { return c_ ? long(c_->load(kDone)) : 0; }
long WorkQueue::ended() { return c_ ? long(c_->fetch_add(kEnded, 1)) + 1 : 0; }
long WorkQueue::unclaimed() {
    // (kNext also counts the takes that found the order spent.)
    return c_ ? std::max(0L, long(order_.size()) - long(c_->load(kNext))) : 0;
}

}  // namespace rtm::parallel
