#pragma once
// Stopping a propagation that blew up (NaN or infinity in its wavefield: bad data, a
// bad model, an unstable step) with an error naming the shot and the step, instead of
// stacking or writing garbage.
#include <string>

#include "core/error.h"
#include "propagation/propagator.h"

namespace rtm {

// Steps between checks. The host default of Propagator::finite() copies the field into
// a new double array and scans it: measured on the 2-core development machine at 0.6 to
// 1.1 times one CPU step (fp32 windows of 400 x 300 and 1000 x 600 in 2D, 100^3 in 3D;
// 2026-11-22); a GPU reduction reads the field once, less than a step reads. One check
// every 64 steps thus costs 1-2% of the stepping time, not the 60-110% of checking every
// step. A blow-up stays non-finite once it is (NaN and infinity spread to every node the
// stencil reaches and never turn back into numbers), so it is caught within 64 steps of
// appearing, and surely by the check after the last step.
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
