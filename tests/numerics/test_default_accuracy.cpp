// `rtm model`'s default configuration against the exact 2D Green's function: with the
// time-dispersion transforms (the default) the traces are within 1% out to 850 m; without
// them the error is what leapfrog's dispersion relation predicts.
#include <cmath>
#include <complex>
#include <functional>
#include <vector>

#include "analytic.h"
#include "migration_fixture.h"
#include "physics/stencil.h"
#include "simulate.h"
#include "support/catch.hpp"

using namespace rtm;
using namespace rtm::test;

namespace {

// The README's sampling: 2000 m/s, h = 10 m, Ricker 16 Hz (f_max = 2.5 f0 = 40 Hz: 5
// points per shortest wavelength), 2 ms records of 1 s. Automatic dt: 80% of the CFL
// limit 0.5547 h / v = 2.77 ms is 2.22 ms, so the step is the record interval, 2 ms.
constexpr double kV = 2000, kH = 10, kF0 = 16, kDt = 0.002, kLength = 1.0;
const double kOffsets[] = {100, 350, 600, 850};

// Source 300 m from the left edge, in the middle of a 600 m deep model; receivers on
// nodes at the source's depth (on-grid points are injected and sampled exactly: no
// interpolation error). The C-PML reflects -97 dB (README): 1.4e-5 of the wave.
std::vector<ShotGather> model_default(bool correction) {
    const Model m = make_model(221, 1, 61, kH, [](double, double, double) { return kV; });
    RegularAcquisition acq;
    acq.sources = {300, 0, 1, 0, 0, 1, 300};
    acq.receivers = {300 + kOffsets[0], kOffsets[1] - kOffsets[0], 4, 0, 0, 1, 300};
    acq.dt = kDt;
    acq.nt = int(std::lround(kLength / kDt)) + 1;
    PropagationOptions p;  // defaults: C-PML, fp32, automatic dt, the correction on
    p.time_dispersion_correction = correction;
    return model_shots(m, regular_geometry(acq, m.grid()), ricker_wavelet(kF0), p);
}

// Wavenumber of the 8th-order Laplacian along a grid axis at angular frequency w:
// s(k h) = (w h / v)^2 with s(th) = -c0 - 2 sum c_k cos(k th), the stencil's symbol;
// 0 (no propagating wave) above its maximum s(pi) (81 Hz here).
double stencil_wavenumber(double w) {
    auto s = [](double th) {
        double x = -stencil::c2(0);
        for (int k = 1; k <= stencil::R; ++k) x -= 2 * stencil::c2(k) * std::cos(k * th);
        return x;
    };
    const double target = (w * kH / kV) * (w * kH / kV);
    if (target >= s(M_PI)) return 0;
    double lo = 0, hi = M_PI;
    for (int i = 0; i < 60; ++i) ((s(0.5 * (lo + hi)) < target) ? lo : hi) = 0.5 * (lo + hi);
    return 0.5 * (lo + hi) / kH;
}

// The trace at distance r from a source with these samples (interval kDt) in a medium
// whose wavenumber at angular frequency w is k(w): U(w) = G(k r) S(w), with
// G = -(Y0(k r) + i J0(k r)) / 4 the outgoing solution of (Lap + k^2) G = -delta for
// exp(i w t) (= (-i/4) H0^(2)(k r)), by a DFT zero-padded to 8 times the record (the 2D
// tail of a zero-mean wavelet falls as t^-3: nothing wraps).
struct Fourier {
    int n, L;
    std::vector<std::complex<double>> twiddle, S;  // exp(2 pi i q / L); the source's DFT
    explicit Fourier(const std::vector<double>& s) : n(int(s.size())), L(8 * n), twiddle(L), S(L / 2) {
        for (int q = 0; q < L; ++q) twiddle[q] = std::exp(std::complex<double>(0, 2 * M_PI * q / L));
        for (int j = 1; j < L / 2; ++j)
            for (int i = 0; i < n; ++i) S[j] += s[i] * std::conj(twiddle[(long(j) * i) % L]);
    }
    std::vector<double> trace(double r, const std::function<double(double)>& k) const {
        std::vector<std::complex<double>> u(L / 2);
        for (int j = 1; j < L / 2; ++j) {
            const double kr = k(2 * M_PI * j / (L * kDt)) * r;
            if (kr > 0) u[j] = -std::complex<double>(std::cyl_neumann(0.0, kr), std::cyl_bessel_j(0.0, kr)) / 4.0 * S[j];
        }
        std::vector<double> out(n);
        for (int i = 0; i < n; ++i) {
            double x = 0;
            for (int j = 1; j < L / 2; ++j) x += 2 * (u[j] * twiddle[(long(j) * i) % L]).real();
            out[i] = x / L;
        }
        return out;
    }
};

}  // namespace

// (No ';' in a test's name: CTest would cut it there and run no test, reported as passed.)
TEST_CASE("default modelling is within 1% of the exact Green's function out to 850 m and without the "
          "time-dispersion correction errs as leapfrog predicts") {
    const auto on = model_default(true).front(), off = model_default(false).front();
    const int n = on.nt;
    const auto f = ricker_fn(kF0);
    std::vector<double> s(n);
    for (int i = 0; i < n; ++i) s[i] = f(i * kDt);
    // The samples the source injects: the 0.1 ms Ricker through the resampling filter,
    // whose pass band droops (Kaiser-windowed sinc, 8 samples each side): its error on
    // this wavelet, computed here, moves every trace by about as much.
    const Wavelet w = ricker_wavelet(kF0);
    const auto injected = resample(w.samples.data(), int(w.samples.size()), w.dt, n, kDt);
    const std::vector<double> inj(injected.begin(), injected.end());
    const double e_resample = rel_l2(inj.data(), s.data(), n);
    // Predictions from the dispersion relations (the Hankel function at the wavenumber
    // the scheme has at each frequency): exact, k = w / v; the stencil alone, along the
    // axis the receivers lie on (what the correction leaves); the stencil at leapfrog's
    // w' = (2/dt) sin(w dt / 2) (no correction).
    const Fourier fourier(s);
    const auto exact_k = [](double w) { return w / kV; };
    const auto space_k = [](double w) { return stencil_wavenumber(w); };
    const auto leapfrog_k = [](double w) { return stencil_wavenumber(2 / kDt * std::sin(w * kDt / 2)); };
    for (int r = 0; r < 4; ++r) {
        const double x = kOffsets[r];
        std::vector<double> exact(n), got_on(on.trace(r), on.trace(r) + n), got_off(off.trace(r), off.trace(r) + n);
        for (int i = 0; i < n; ++i) exact[i] = green2d(f, x, kV, i * kDt);
        const auto by_fourier = fourier.trace(x, exact_k), pred_on = fourier.trace(x, space_k),
                   pred_off = fourier.trace(x, leapfrog_k);
        const double e_on = rel_l2(got_on.data(), exact.data(), n), e_off = rel_l2(got_off.data(), exact.data(), n);
        const double p_on = rel_l2(pred_on.data(), exact.data(), n), p_off = rel_l2(pred_off.data(), exact.data(), n);
        const double d_on = rel_l2(got_on.data(), pred_on.data(), n), d_off = rel_l2(got_off.data(), pred_off.data(), n);
        const double check = rel_l2(by_fourier.data(), exact.data(), n);
        WARN(x << " m: error " << 100 * e_on << "% with the correction (spatial dispersion predicts " << 100 * p_on
               << "%), " << 100 * e_off << "% without (leapfrog predicts " << 100 * p_off
               << "%); measured vs predicted traces " << d_on << " / " << d_off << "; resampling " << e_resample
               << "; Fourier vs time-domain Green's function " << check);
        // The Fourier route reproduces green2d: Simpson's 4000 panels and the DFT's
        // padding, ~1e-6.
        CHECK(check < 1e-5);
        // What the predictions leave out, each a bound on the traces' relative L2:
        //   the resampling filter's droop on the source, e_resample (1.4e-4);
        //   the stencil's anisotropy: the 2D far-field amplitude follows the curvature of
        //   its slowness surface, which differs from the circle by the order of the
        //   dispersion itself, p_on;
        //   C-PML reflections, -97 dB = 1.4e-5 of the wave per wall, and fp32 rounding over
        //   ~540 steps (~540 x 6e-8 = 3e-5 coherent): 1e-4 together;
        //   the transforms (1e-10) and on-node source and receivers (exact).
        const double leftover = e_resample + p_on + 1e-4;
        CHECK(d_on < leftover);
        CHECK(d_off < leftover);
        // The requirement: within 1%. By the above, e_on <= p_on + leftover: 2 p_on +
        // 2.4e-4 = 0.37% at 850 m, where spatial dispersion (8th order at 5 points per
        // wavelength, 17 wavelengths of 40 Hz travelled) is largest.
        CHECK(e_on < 0.01);
        // Without the correction, d_off < leftover says the error is leapfrog's; at 850 m
        // it is 12.3% (the README's sampling, the step at 2 ms), 70 times the spatial part:
        // the test measures what the correction removes.
        if (x == 850) CHECK(e_off > 0.1);
    }
}
