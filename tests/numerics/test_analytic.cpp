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

TEST_CASE("a 2D homogeneous trace matches the analytic Green's function within 1% and converges") {
    const double coarse = analytic_error(2, 10);
    const double fine = analytic_error(2, 5);
    INFO("relative L2 error: h=10 m " << coarse << ", h=5 m " << fine);
    CHECK(coarse < 0.01);
    // Leapfrog's second-order time error dominates: halving h and dt divides it by ~4.
    CHECK(fine < coarse / 3);
    WARN("2D analytic error: " << coarse << " (h=10 m), " << fine << " (h=5 m)");
}

TEST_CASE("a 3D homogeneous trace matches the analytic Green's function within 1% and converges") {
    const double coarse = analytic_error(3, 20);
    const double fine = analytic_error(3, 10);
    INFO("relative L2 error: h=20 m " << coarse << ", h=10 m " << fine);
    CHECK(fine < 0.01);
    CHECK(fine < coarse / 3);
    WARN("3D analytic error: " << coarse << " (h=20 m), " << fine << " (h=10 m)");
}
