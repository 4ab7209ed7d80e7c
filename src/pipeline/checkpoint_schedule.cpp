#include "pipeline/checkpoint_schedule.h"

#include <string>

#include "core/error.h"

namespace rtm {

std::int64_t checkpoint_forward_steps(std::int64_t l, std::int64_t s) {
    if (l <= 1) return 0;
    // r and beta = C(s + r, r), from C(s, 0) = 1 by C(s + r, r) = C(s + r - 1, r - 1) (s + r) / r.
    std::int64_t r = 0, beta = 1;
    while (beta < l) {
        ++r;
        beta = beta * (s + r) / r;
    }
    return r * l - beta * r / (s + 1);  // C(s + r, r - 1) = C(s + r, r) r / (s + 1)
}

namespace {

// Reverses x_a .. x_{a+l-1}: x_a is current and held in slot `slot`; slots above it
// are free, s - 1 of them usable.
//   one checkpoint: advance from x_a to each state in turn, from the top;
//   more: advance m states, checkpoint x_{a+m}, reverse the upper part with one
//   checkpoint fewer, then come back to x_a for the lower part. Any m that reaches
//   t(l, s) is optimal (t is the minimum of m + t(l - m, s - 1) + t(m, s), the
//   theorem behind the formula); the first such m from below.
void reverse(int a, int l, int s, int slot, std::vector<CheckpointAction>& out) {
    using A = CheckpointAction;
    if (l == 1) {
        out.push_back({A::Use, a, -1});
        return;
    }
    if (s == 1) {
        for (int i = l - 1; i >= 0; --i) {
            if (i < l - 1) out.push_back({A::Restore, a, slot});
            if (i > 0) out.push_back({A::Advance, a + i, -1});
            out.push_back({A::Use, a + i, -1});
        }
        return;
    }
    const std::int64_t best = checkpoint_forward_steps(l, s);
    int m = 1;
    while (m < l && m + checkpoint_forward_steps(l - m, s - 1) + checkpoint_forward_steps(m, s) != best) ++m;
    if (m == l) fail("checkpoint_schedule", "no split of " + std::to_string(l) + " states reaches the optimum");
    out.push_back({A::Advance, a + m, -1});
    out.push_back({A::Store, a + m, slot + 1});
    reverse(a + m, l - m, s - 1, slot + 1, out);
    out.push_back({A::Restore, a, slot});
    reverse(a, m, s, slot, out);
}

}  // namespace

std::vector<CheckpointAction> checkpoint_schedule(int states, int checkpoints) {
    if (checkpoints < 1)
        fail("checkpoint_schedule", "needs at least one checkpoint (for the first state), got " + std::to_string(checkpoints));
    std::vector<CheckpointAction> out;
    if (states < 1) return out;
    out.push_back({CheckpointAction::Store, 0, 0});
    reverse(0, states, checkpoints, 0, out);
    return out;
}

}  // namespace rtm
