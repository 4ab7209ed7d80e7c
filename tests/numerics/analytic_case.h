#pragma once
// The homogeneous-medium case that the CPU and GPU tests both hold against the
// analytic Green's function: 2000 m/s, spacing h in every direction, dt = h / 10000
// (Courant number 0.2), Ricker 10 Hz (f_max 25 Hz: 8 points per wavelength at h = 10 m),
// the receiver 300 m from the source in the middle of a 1200 m model. The record ends
// at 0.4 s, before anything could come back from the layers ((600 + 300) / 2000 = 0.45 s).
#include <cmath>
#include <vector>

#include "analytic.h"
#include "simulate.h"

namespace rtm::test {

inline Run analytic_run(int ndim, double h, Precision prec = Precision::Double) {
    const double half = 600, offset = 300, t_end = 0.4, f0 = 10;
    Run r;
    const int n = int(std::lround(2 * half / h)) + 1;
    r.grid.nx = r.grid.nz = n;
    r.grid.ny = ndim == 3 ? n : 1;
    r.grid.dx = r.grid.dy = r.grid.dz = h;
    r.domain.dt = h / 10000;
    r.domain.pml_cells = 20;
    r.domain.f_dominant = f0;
    r.nt = int(std::lround(t_end / r.domain.dt));
    r.f0 = f0;
    r.velocity = [](double, double, double) { return 2000.0; };
    r.source = {half, ndim == 3 ? half : 0, half};
    r.receivers = {{half + offset, r.source.y, half}};
    r.precision = prec;
    return r;
}

// Relative L2 error of the run's trace against the analytic solution.
inline double analytic_error(const Run& r, const std::vector<double>& trace) {
    const double v = r.velocity(0, 0, 0), offset = r.receivers.front().x - r.source.x;
    const auto f = ricker_fn(r.f0);
    std::vector<double> exact(r.nt);
    for (int i = 0; i < r.nt; ++i)
        exact[i] = r.grid.ndim() == 3 ? green3d(f, offset, v, i * r.domain.dt) : green2d(f, offset, v, i * r.domain.dt);
    return rel_l2(trace.data(), exact.data(), r.nt);
}

}  // namespace rtm::test
