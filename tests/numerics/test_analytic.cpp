// Homogeneous medium against the analytic Green's functions (2D and 3D).
#include <cmath>

#include "analytic_case.h"
#include "support/catch.hpp"

using namespace rtm;
using namespace rtm::test;

namespace {

double analytic_error(int ndim, double h) {
    const Run r = analytic_run(ndim, h);
    return analytic_error(r, simulate(r));
}

}  // namespace

TEST_CASE("a 2D homogeneous trace matches the analytic Green's function to leapfrog's error (0.34%), which falls as dt^2") {
    const double coarse = analytic_error(2, 10);
    const double fine = analytic_error(2, 5);
    const double slope = std::log2(coarse / fine);
    INFO("relative L2 error: h=10 m " << coarse << ", h=5 m " << fine << "; leapfrog's predicted "
                                      << leapfrog_error(10) << ", " << leapfrog_error(5));
    // The prediction (analytic_case.h) bounds the error; halving h and dt quarters it:
    // the slope is 2 up to the next order, (w dt)^2 relative (see the time-order test):
    // 2 +- 0.05.
    CHECK(coarse <= 1.25 * leapfrog_error(10));
    CHECK(fine <= 1.25 * leapfrog_error(5));
    CHECK(std::abs(slope - 2) <= 0.05);
    WARN("2D analytic error: " << coarse << " (h=10 m), " << fine << " (h=5 m); log2 ratio " << slope);
}

TEST_CASE("a 3D homogeneous trace matches the analytic Green's function to leapfrog's error (0.34%) at 8 points per wavelength") {
    const double coarse = analytic_error(3, 20);
    const double fine = analytic_error(3, 10);
    INFO("relative L2 error: h=20 m " << coarse << ", h=10 m " << fine << "; leapfrog's predicted "
                                      << leapfrog_error(10) << " at h=10 m");
    CHECK(fine <= 1.25 * leapfrog_error(10));
    // At h = 20 m (4 points per shortest wavelength) the Laplacian's own dispersion, of
    // the opposite sign to leapfrog's, is no longer negligible at the top of the band:
    // the coarse error is under leapfrog's 4 x larger prediction, and more than 3 times
    // the fine one (the spatial part falls 256-fold, the time part 4-fold).
    CHECK(coarse <= 1.25 * leapfrog_error(20));
    CHECK(fine < coarse / 3);
    WARN("3D analytic error: " << coarse << " (h=20 m), " << fine << " (h=10 m)");
}
