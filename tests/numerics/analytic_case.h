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

// Leapfrog's error on the analytic case at spacing h (dt = h / 10000): the scheme's
// phase runs ahead by (w dt)^2 / 24 per radian, so after the travel time t_r a component
// of frequency w is shifted by w t_r (w dt)^2 / 24 radians and the trace errs by that
// fraction of itself. Over the Ricker's power spectrum w^4 exp(-2 w^2 / w0^2) the rms of
// w^3 is sqrt(E[w^6]) = w0^3 sqrt((5/2)(7/2)(9/2) / 8) = 2.22 w0^3, so the relative L2
// error is t_r dt^2 w0^3 2.22 / 24 (0.34% at h = 10 m). In 3D the trace is the wavelet
// itself and this is the error; in 2D the Green's function's tail, a smoother signal,
// errs a little less. The 8th-order Laplacian adds (k h)^8 / 6300 relative phase: 2e-8
// at f0 and h = 10 m, nothing beside it. Tests allow 25% over it (the rms is over a
// spectrum that is the Ricker's only approximately).
inline double leapfrog_error(double h) {
    const double t_r = 300.0 / 2000, dt = h / 10000, w0 = 2 * M_PI * 10;
    return t_r * dt * dt * std::pow(w0, 3) * std::sqrt(2.5 * 3.5 * 4.5 / 8) / 24;
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
