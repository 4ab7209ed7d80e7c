#pragma once
// Stopping a propagation that blew up (NaN or infinity in its wavefield: bad data, a
// bad model, an unstable step) with an error naming the shot and the step, instead of
// stacking or writing garbage.
#include <string>

#include "core/error.h"
#include "propagation/propagator.h"

namespace rtm {

// Steps between checks. Propagator::finite() costs about one step where it is cheapest
// (a GPU reduction reads the field once, as a step reads it once and more) and a few
// steps on the host default (it copies the field to a new double array, then scans it).
// Every 64th step keeps that under ~5% of the stepping time in the worst case and ~1-2%
// usually, while a blow-up, which stays non-finite once it is (NaN and infinity spread
// to every node they reach and never return to numbers), is still caught within 64
// steps of appearing, and surely by the check after the last step.
constexpr int kFiniteCheckEvery = 64;

// Whether to check after step n (0-based) of nt.
inline bool finite_check_due(int n, int nt) { return (n + 1) % kFiniteCheckEvery == 0 || n + 1 == nt; }

// Throws rtm::Error naming `who` (the shot or the batch's shots), the pass and the step
// when p's current wavefield is not finite.
inline void require_finite(const Propagator& p, const std::string& who, const char* pass, int n, int nt) {
    if (p.finite()) return;
    fail(who, std::string("the ") + pass + " wavefield is not finite (NaN or infinity) after time step " +
                  std::to_string(n + 1) + " of " + std::to_string(nt),
         "The propagation blew up: look for huge or broken samples in the shot's data, the velocity model, "
         "and an explicit propagation.dt above the stable one (0 picks a stable step)");
}

}  // namespace rtm
