// The checkpointing schedule (pipeline/checkpoint_schedule.h), run on integers: every
// state reaches the backward pass when it needs it, the forward steps are Griewank's
// count, which is the minimum, and no more checkpoints are held than allowed.
#include <algorithm>
#include <vector>

#include "pipeline/checkpoint_schedule.h"
#include "support/catch.hpp"

using namespace rtm;

namespace {

struct Replay {
    bool ok = true;           // every action legal
    std::vector<int> used;    // states the backward pass took, in order
    std::int64_t forward = 0; // steps advanced
    int most_held = 0;        // checkpoints held at once, at most
};

// Plays the schedule on state numbers: Advance only forward from the current state,
// Store of the current state into a free slot below the limit, Restore of a held slot
// (which must hold the state it names), Use of the current state; a slot is freed when
// the schedule stores into it again or restores a slot below it (the stack discipline).
Replay replay(const std::vector<CheckpointAction>& actions, int checkpoints) {
    Replay r;
    int current = 0;
    std::vector<int> slot(checkpoints, -1);
    for (const auto& a : actions) {
        switch (a.kind) {
            case CheckpointAction::Advance:
                if (a.index <= current) r.ok = false;
                r.forward += a.index - current;
                current = a.index;
                break;
            case CheckpointAction::Store:
                if (a.slot < 0 || a.slot >= checkpoints || a.index != current) r.ok = false;
                else slot[a.slot] = current;
                break;
            case CheckpointAction::Restore:
                if (a.slot < 0 || a.slot >= checkpoints || slot[a.slot] != a.index) r.ok = false;
                else {
                    current = a.index;
                    for (int k = a.slot + 1; k < checkpoints; ++k) slot[k] = -1;
                }
                break;
            case CheckpointAction::Use:
                if (a.index != current) r.ok = false;
                r.used.push_back(current);
                break;
        }
        r.most_held = std::max(r.most_held, int(std::count_if(slot.begin(), slot.end(), [](int s) { return s >= 0; })));
    }
    return r;
}

}  // namespace

TEST_CASE("checkpoint schedule: every state used once in descending order, Griewank's step count, at most the checkpoints allowed") {
    for (int l : {1, 2, 3, 5, 10, 17, 64, 100, 333, 1000})
        for (int s : {1, 2, 3, 4, 7, 20, 1000}) {
            const auto actions = checkpoint_schedule(l, s);
            const Replay r = replay(actions, s);
            INFO(l << " states, " << s << " checkpoints: " << r.forward << " forward steps, formula "
                   << checkpoint_forward_steps(l, s) << ", at most " << r.most_held << " held");
            CHECK(r.ok);
            std::vector<int> want(l);
            for (int i = 0; i < l; ++i) want[i] = l - 1 - i;
            CHECK(r.used == want);
            CHECK(r.forward == checkpoint_forward_steps(l, s));
            CHECK(r.most_held <= s);
        }
}

TEST_CASE("checkpoint step count: one sweep with enough checkpoints, l(l-1)/2 with one, and the minimum over all splits") {
    CHECK(checkpoint_forward_steps(1, 1) == 0);
    CHECK(checkpoint_forward_steps(50, 49) == 49);   // l <= s + 1: store every state on one sweep
    CHECK(checkpoint_forward_steps(50, 1) == 50 * 49 / 2);
    // Binomial case: l = C(s + r, s) states with s checkpoints take r l - C(s + r, r - 1)
    // steps: s = 3, r = 3: l = 20, 60 - 15 = 45.
    CHECK(checkpoint_forward_steps(20, 3) == 45);
    // The minimum over every schedule of the recursive form (advance m, checkpoint,
    // reverse the top with one checkpoint fewer, come back for the bottom), by dynamic
    // programming: T(l, s) = min_m m + T(l - m, s - 1) + T(m, s), T(1, s) = 0,
    // T(l, 1) = l (l - 1) / 2. The formula must equal it everywhere.
    const int L = 120, S = 6;
    std::vector<std::vector<std::int64_t>> T(L + 1, std::vector<std::int64_t>(S + 1, 0));
    for (int l = 1; l <= L; ++l) {
        T[l][1] = std::int64_t(l) * (l - 1) / 2;
        for (int s = 2; s <= S; ++s) {
            std::int64_t best = l == 1 ? 0 : INT64_MAX;
            for (int m = 1; m < l; ++m) best = std::min(best, m + T[l - m][s - 1] + T[m][s]);
            T[l][s] = best;
        }
    }
    bool all = true;
    for (int l = 1; l <= L; ++l)
        for (int s = 1; s <= S; ++s)
            if (checkpoint_forward_steps(l, s) != T[l][s]) {
                all = false;
                FAIL_CHECK(l << " states, " << s << " checkpoints: formula " << checkpoint_forward_steps(l, s)
                              << ", minimum " << T[l][s]);
            }
    CHECK(all);
}
