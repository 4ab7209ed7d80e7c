// The physics checks of the CPU path, on the GPU: a homogeneous trace against the
// analytic Green's function (2D and 3D, within leapfrog's predicted error, 0.34%), and
// the C-PML absorbing a pulse.
#include "analytic_case.h"
#include "gpu_simulate.h"
#include "gpu_test.h"

using namespace rtm;
using namespace rtm::test;

namespace {

// The CPU tests' analytic case (analytic_case.h), run on the GPU.
double analytic_error_gpu(int ndim, double h, Precision prec) {
    const Run r = analytic_run(ndim, h, prec);
    return analytic_error(r, simulate_on(r, true).traces);
}

}  // namespace

// The bound of the CPU test (leapfrog's error, analytic_case.h, 25% over) plus the
// rounding of the 400 steps in the run's precision (twin_bound, gpu_test.h: 1.6e-5 in
// fp32, nothing beside 3.4e-3).
double analytic_bound(double h, Precision prec) {
    return 1.25 * leapfrog_error(h) + twin_bound(analytic_run(2, h).nt, prec);
}

TEST_CASE("on the GPU a 2D homogeneous trace matches the analytic Green's function to leapfrog's error (0.34%)", "[gpu]") {
    if (!gpu_or_skip()) return;
    const double e32 = analytic_error_gpu(2, 10, Precision::Single);
    const double e64 = analytic_error_gpu(2, 10, Precision::Double);
    WARN("GPU 2D analytic error (h=10 m): fp32 " << e32 << ", fp64 " << e64 << " (bound "
                                                << analytic_bound(10, Precision::Single) << ")");
    CHECK(e32 <= analytic_bound(10, Precision::Single));
    CHECK(e64 <= analytic_bound(10, Precision::Double));
}

TEST_CASE("on the GPU a 3D homogeneous trace matches the analytic Green's function to leapfrog's error (0.34%)", "[gpu]") {
    if (!gpu_or_skip()) return;
    const double e32 = analytic_error_gpu(3, 10, Precision::Single);
    WARN("GPU 3D analytic error (h=10 m): fp32 " << e32 << " (bound " << analytic_bound(10, Precision::Single) << ")");
    CHECK(e32 <= analytic_bound(10, Precision::Single));
}

TEST_CASE("on the GPU the C-PML leaves under 1e-5 of an outgoing pulse's energy in the window (3D)", "[gpu]") {
    if (!gpu_or_skip()) return;
    // 400 m cube, source in the middle; the Ricker peaks at 1.5/f0 = 0.1 s and has
    // died out by 0.2 s, and the farthest corner is 0.17 s away: after 0.45 s the
    // energy left in the window is what the layers reflected.
    Run r;
    r.grid.nx = r.grid.ny = r.grid.nz = 41;
    r.grid.dx = r.grid.dy = r.grid.dz = 10;
    r.domain.dt = 1e-3;
    r.domain.pml_cells = 20;
    r.domain.f_dominant = 15;
    r.f0 = 15;
    r.source = {200, 200, 200};
    r.precision = Precision::Single;
    Domain d(r.grid, velocity_field(r), r.domain);
    auto p = make_cuda_propagator(d, r.precision);
    const auto w = ricker(r.f0, r.domain.dt, 600);
    p->set_sources({d.point(200, 200, 200, "source")}, {std::vector<double>(w.begin(), w.end())});
    p->set_receivers({}, 600);
    double peak = 0, late = 0;
    for (int n = 0; n < 600; ++n) {
        p->step(n);
        if (n % 20 == 19) {
            const auto u = p->wavefield();
            double e = 0;
            for (double x : u) e += x * x;
            if (n < 250) peak = std::max(peak, e);
            else if (n >= 450) late = std::max(late, e);
        }
    }
    INFO("window energy: peak " << peak << ", largest after 0.45 s " << late);
    WARN("C-PML on the GPU: energy left after the pulse " << late / peak << " of its peak");
    // What is left is what the layers reflected. Their profile's theory (the CPU test
    // test_boundaries.cpp) gives Rc^cos(theta) with Rc = 1e-5 at the wavelet's
    // frequencies; from the cube's centre the faces are met at up to 54.7 degrees (the
    // corners, cos = 1/sqrt(3)): amplitude <= 1e-5^0.577 = 1.3e-3, twice that for the
    // discretisation (as the CPU test allows), energy (2.6e-3)^2 = 7e-6: bound 1e-5.
    CHECK(peak > 0);
    CHECK(late < 1e-5 * peak);
}
