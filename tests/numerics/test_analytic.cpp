// Homogeneous medium against the analytic Green's functions (2D and 3D).
#include <cmath>

#include "analytic.h"
#include "simulate.h"
#include "support/catch.hpp"

using namespace rtm;
using namespace rtm::test;

namespace {

// Relative L2 error of the trace at `offset` from the source against the analytic
// solution, in a homogeneous 2000 m/s medium with dx = dz (= dy) = h and dt = h/10000
// (Courant number 0.2), Ricker 10 Hz (f_max 25 Hz: 8 points per wavelength at h = 10).
double analytic_error(int ndim, double h, double offset, double t_end) {
    const double v = 2000, f0 = 10, half = 600;
    Run r;
    const int n = int(std::lround(2 * half / h)) + 1;
    r.grid.nx = n;
    r.grid.nz = n;
    r.grid.ny = ndim == 3 ? n : 1;
    r.grid.dx = r.grid.dy = r.grid.dz = h;
    r.domain.dt = h / 10000;
    r.domain.pml_cells = 20;
    r.domain.f_dominant = f0;
    r.nt = int(std::lround(t_end / r.domain.dt));
    r.f0 = f0;
    r.velocity = [v](double, double, double) { return v; };
    r.source = {half, ndim == 3 ? half : 0, half};
    r.receivers = {{half + offset, r.source.y, half}};
    const auto trace = simulate(r);
    std::vector<double> exact(r.nt);
    const auto f = ricker_fn(f0);
    for (int i = 0; i < r.nt; ++i)
        exact[i] = ndim == 3 ? green3d(f, offset, v, i * r.domain.dt)
                             : green2d(f, offset, v, i * r.domain.dt);
    return rel_l2(trace.data(), exact.data(), r.nt);
}

}  // namespace

TEST_CASE("a 2D homogeneous trace matches the analytic Green's function within 1% and converges") {
    // Boundary reflections arrive after (600 + 300) / 2000 = 0.45 s... the window
    // ends at 0.4 s, before the first can return from the layers.
    const double coarse = analytic_error(2, 10, 300, 0.4);
    const double fine = analytic_error(2, 5, 300, 0.4);
    INFO("relative L2 error: h=10 m " << coarse << ", h=5 m " << fine);
    CHECK(coarse < 0.01);
    // Leapfrog's second-order time error dominates: halving h and dt divides it by ~4.
    CHECK(fine < coarse / 3);
    WARN("2D analytic error: " << coarse << " (h=10 m), " << fine << " (h=5 m)");
}

TEST_CASE("a 3D homogeneous trace matches the analytic Green's function within 1% and converges") {
    const double coarse = analytic_error(3, 20, 300, 0.4);
    const double fine = analytic_error(3, 10, 300, 0.4);
    INFO("relative L2 error: h=20 m " << coarse << ", h=10 m " << fine);
    CHECK(fine < 0.01);
    CHECK(fine < coarse / 3);
    WARN("3D analytic error: " << coarse << " (h=20 m), " << fine << " (h=10 m)");
}
