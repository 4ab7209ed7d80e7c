#pragma once
// Reversing a chain of states with few checkpoints (Griewank's binomial checkpointing,
// the schedule of his revolve: Griewank & Walther 2000, ACM TOMS 26, "Algorithm 799").
//
// States x_0 .. x_{l-1} follow one another by a forward step each (x_{i+1} from x_i);
// a backward pass needs them in reverse order, x_{l-1} first. x_0 is at hand at the
// start. With s checkpoints (each holds one state; x_0 takes one) the fewest forward
// steps that do it are
//     t(l, s) = r l - C(s + r, r - 1),  r the least integer with C(s + r, s) >= l,
// which is l - 1 (one sweep) when l <= s + 1 and l (l - 1) / 2 with one checkpoint.
// Migration's states are the source wavefield at its imaging times (one step of the
// chain is k time steps), so the recomputation factor t / (l - 1) is the number of
// forward propagations of the source the backward pass costs instead of one.
#include <cstdint>
#include <vector>

namespace rtm {

struct CheckpointAction {
    enum Kind {
        Advance,  // step the current state forward to x_index
        Store,    // copy the current state (x_index) into checkpoint `slot`
        Restore,  // make the state in checkpoint `slot` (x_index) the current one
        Use,      // the backward pass takes x_index, the current state
    };
    Kind kind;
    int index;
    int slot;  // Store and Restore only
};

// t(l, s) above: the forward steps of an optimal reversal (0 for l <= 1). s >= 1.
std::int64_t checkpoint_forward_steps(std::int64_t states, std::int64_t checkpoints);

// The actions of an optimal reversal of x_0 .. x_{states-1}: the current state is x_0
// at the start; it begins with Store x_0 in slot 0, uses every state once in descending
// order, holds at most `checkpoints` states at once (slots 0 .. checkpoints - 1, used as
// a stack) and advances t(states, checkpoints) steps in all. checkpoints >= 1.
std::vector<CheckpointAction> checkpoint_schedule(int states, int checkpoints);

}  // namespace rtm
