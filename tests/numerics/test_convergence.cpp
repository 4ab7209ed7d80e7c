// Measured convergence orders: the 8th-order Laplacian in space, leapfrog in time.
#include <cmath>
#include <vector>

#include "kernels/cpu/step_cpu.h"
#include "simulate.h"
#include "support/catch.hpp"

using namespace rtm;
using namespace rtm::test;

namespace {

// Max error of the kernel's Laplacian of u = sin(kx x) sin(ky y) cos(kz z) against
// the exact -(kx^2 + ky^2 + kz^2) u, at grid spacing h. One step of step_cpu with
// u[n-1] = u[n] and vdt2 = 1 returns w = u + Lap u.
double laplacian_error(int ndim, double h) {
    kernels::Box box;
    box.ndim = ndim;
    const double L = 2.0;  // physical size
    box.nx = box.nz = int(std::lround(L / h)) + 1;
    box.ny = ndim == 3 ? box.nx : 1;
    const double kx = 1.3, ky = 0.7, kz = 1.1;
    std::vector<double> u(box.padded_size()), w(box.padded_size()), v(box.padded_size(), 1.0);
    const int R = stencil::R;
    const int ylo = ndim == 3 ? -R : 0, yhi = ndim == 3 ? box.ny + R : 1;
    auto f = [&](int ix, int iy, int iz) {
        return std::sin(kx * ix * h) * (ndim == 3 ? std::sin(ky * iy * h + 0.3) : 1.0) *
               std::cos(kz * iz * h);
    };
    for (int iz = -R; iz < box.nz + R; ++iz)
        for (int iy = ylo; iy < yhi; ++iy)
            for (int ix = -R; ix < box.nx + R; ++ix) u[box.at(ix, iy, iz)] = w[box.at(ix, iy, iz)] = f(ix, iy, iz);
    kernels::StepArgs<double> a;
    a.box = box;
    for (int i = 0; i < 3; ++i) {
        a.inv_h2[i] = (i == 1 && ndim == 2) ? 0 : 1 / (h * h);
        a.inv_h[i] = (i == 1 && ndim == 2) ? 0 : 1 / h;
    }
    a.u = u.data();
    a.w = w.data();
    a.vdt2 = v.data();
    kernels::step_cpu(a);
    const double k2 = kx * kx + kz * kz + (ndim == 3 ? ky * ky : 0);
    double err = 0;
    for (int iz = 0; iz < box.nz; ++iz)
        for (int iy = 0; iy < box.ny; ++iy)
            for (int ix = 0; ix < box.nx; ++ix) {
                const long p = box.at(ix, iy, iz);
                err = std::max(err, std::abs((w[p] - u[p]) - (-k2 * u[p])));
            }
    return err;
}

double slope(double e1, double e2, double ratio) { return std::log(e1 / e2) / std::log(ratio); }

}  // namespace

TEST_CASE("the spatial operator converges with order 8 (log-log slope within 8 +- 0.1)") {
    // The 8th-order second derivative's symbol is k^2 (1 - (kh)^8 / 3150 (1 - c (kh)^2 ...)):
    // the next term lowers the measured slope by log2 of its change between the two
    // spacings. For the largest wavenumber here (kx = 1.3: kh = 0.52, 0.26, 0.13) the
    // symbol gives 0.940, 0.985, 0.996 of the leading term: slopes 7.933 and 7.983.
    // Errors fall from ~3e-6 to ~5e-11; double rounding of the Laplacian is
    // 2^-53 * 6.5 / h^2 = 7e-14 at h = 0.1: it cannot bend the slope. Bound: 8 +- 0.1.
    for (int ndim : {2, 3}) {
        const double e1 = laplacian_error(ndim, 0.4), e2 = laplacian_error(ndim, 0.2),
                     e3 = laplacian_error(ndim, 0.1);
        const double s1 = slope(e1, e2, 2), s2 = slope(e2, e3, 2);
        WARN(ndim << "D spatial order: " << s1 << ", " << s2 << " (errors " << e1 << ", " << e2 << ", " << e3 << ")");
        CHECK(std::abs(s1 - 8) <= 0.1);
        CHECK(std::abs(s2 - 8) <= 0.1);
    }
}

TEST_CASE("time stepping converges with order 2 (log-log slope within 2 +- 0.05)") {
    // Same grid, dt halved twice, against a run with dt0/64: the spatial error is common
    // to all runs and cancels, leaving leapfrog's error C dt^2 (1 + O((w dt)^2)).
    // The slopes' departures from 2, both upward:
    //   - the reference's own error: e_i = C (dt_i^2 - dt_ref^2), so the slopes are
    //     log2((1 - 1/4096) / (1/4 - 1/4096)) = 2.0011 and
    //     log2((1/4 - 1/4096) / (1/16 - 1/4096)) = 2.0042;
    //   - the next term of leapfrog's phase error, (w dt)^2 / 24 + 3 (w dt)^4 / 640 (per
    //     unit time, relative), 0.11 (w dt)^2 of the first: 0.011 at dt0 and f_max = 25 Hz
    //     (w dt0 = 0.31), which adds at most log2(1.011) = 0.016 to the first slope;
    //   - a phase error p moves the trace by p f' - p^2 f'' / 2: its relative L2 departs
    //     from linear in p by about the error itself (<= 1% here), log2(1.01) = 0.014.
    // Together <= 0.035: bound 0.05 on either side.
    Run r;
    r.grid.nx = r.grid.nz = 121;
    r.grid.dx = r.grid.dz = 10;
    r.f0 = 10;
    r.domain.pml_cells = 20;
    r.source = {600, 0, 600};
    r.receivers = {{850, 0, 700}};
    const double t_end = 0.3, dt0 = 0.002;
    auto run_dt = [&](double dt) {
        Run q = r;
        q.domain.dt = dt;
        q.nt = int(std::lround(t_end / dt)) + 1;
        auto tr = simulate(q);
        // Sample at the coarse times so runs compare point by point.
        const int stride = int(std::lround(dt0 / dt));
        std::vector<double> out;
        for (int n = 0; n < q.nt; n += stride) out.push_back(tr[n]);
        return out;
    };
    const auto ref = run_dt(dt0 / 64);
    double e[3];
    for (int i = 0; i < 3; ++i) {
        const auto tr = run_dt(dt0 / (1 << i));
        e[i] = rel_l2(tr.data(), ref.data(), ref.size());
    }
    const double s1 = slope(e[0], e[1], 2), s2 = slope(e[1], e[2], 2);
    WARN("time order: " << s1 << ", " << s2 << " (errors " << e[0] << ", " << e[1] << ", " << e[2] << ")");
    CHECK(std::abs(s1 - 2) <= 0.05);
    CHECK(std::abs(s2 - 2) <= 0.05);
}
