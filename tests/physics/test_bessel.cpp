// The Kaiser windows of the resamplers, the source and receiver stencils and the
// time-dispersion transforms take I0 from rtm's own series (physics/interpolation.h),
// not from std::cyl_bessel_i (about 0.5 us a call). It must be the same function.
#include <cmath>

#include "physics/interpolation.h"
#include "support/catch.hpp"

TEST_CASE("I0 by its power series equals std::cyl_bessel_i to 1e-13 from 0 to 40", "[bessel]") {
    // Bound: the series takes k <= ~80 terms at x = 40, each term and partial sum
    // rounded once (all positive: no cancellation), so 2 k ulps = 160 x 1.1e-16 =
    // 1.8e-14 relative; std::cyl_bessel_i's own error is of the same order. 1e-13
    // leaves a factor ~5 for both.
    double worst = 0;
    for (int i = 0; i <= 4000; ++i) {
        const double x = i * 0.01;
        const double ref = std::cyl_bessel_i(0.0, x);
        worst = std::max(worst, std::abs(rtm::bessel_i0(x) - ref) / ref);
    }
    INFO("largest relative difference " << worst);
    CHECK(worst < 1e-13);
    CHECK(rtm::bessel_i0(0) == 1);
}
