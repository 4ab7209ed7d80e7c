// The time-dispersion transforms and the resampling: what they compute, that they
// undo leapfrog's time error, and that their transposes are exact.
#include <cmath>
#include <complex>
#include <random>
#include <vector>

#include "physics/time_dispersion.h"
#include "physics/wavelet.h"
#include "simulate.h"
#include "support/catch.hpp"

using namespace rtm;
using namespace rtm::test;

namespace {

std::vector<double> random_trace(int n, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<double> g;
    std::vector<double> x(n);
    for (auto& v : x) v = g(rng);
    return x;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
    double s = 0;
    for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
    return s;
}

double norm(const std::vector<double>& a) { return std::sqrt(dot(a, a)); }

// |<A x, y> - <x, A^T y>| / (|A x| |y|): the transpose's error relative to the sizes
// involved (no cancellation in <A x, y> can magnify it).
template <class A, class At>
double transpose_error(int nin, int nout, const A& apply, const At& transpose) {
    const auto x = random_trace(nin, 1), y = random_trace(nout, 2);
    std::vector<double> ax(nout), aty(nin);
    apply(x, ax);
    transpose(y, aty);
    return std::abs(dot(ax, y) - dot(x, aty)) / (norm(ax) * norm(y));
}

// A warp by its definition: y[m] = Re (1/M) sum_j a(w_j) X(g(w_j)) exp(2 pi i j m / M)
// with X summed directly (n^2 work, no gridding).
std::vector<double> warp_by_definition(const std::vector<double>& x, double (*g)(double), double (*a)(double)) {
    const int n = int(x.size());
    const int m = warp_length(n);
    std::vector<std::complex<double>> spec(m);
    for (int j = 0; j < m; ++j) {
        const double w = 2 * M_PI * (j < m / 2 ? j : j - m) / m;
        std::complex<double> s = 0;
        for (int i = 0; i < n; ++i) s += x[i] * std::exp(std::complex<double>(0, -g(w) * i));
        spec[j] = a(w) * s;
    }
    std::vector<double> y(n);
    for (int i = 0; i < n; ++i) {
        std::complex<double> s = 0;
        for (int j = 0; j < m; ++j) s += spec[j] * std::exp(std::complex<double>(0, 2 * M_PI * double(j) * i / m));
        y[i] = s.real() / m;
    }
    return y;
}

double forward_g(double w) { return 2 * std::sin(w / 2); }
double inverse_g(double w) { return std::abs(w) < 2 ? 2 * std::asin(w / 2) : 0.0; }
double one(double) { return 1.0; }

}  // namespace

TEST_CASE("the time-dispersion transforms compute their definition (gridding against the direct sum)") {
    // The gridding's error is the Kaiser-Bessel kernel's aliasing: with W = 12 bins and
    // oversampling >= 2, phi^(t + M) / phi^(t) <= ~1e-10 for |t| <= M / 4 (the kernel
    // transform falls as sinh(sqrt(beta^2 - a^2)) from a = pi W / 4 to 3 pi W / 4, beta =
    // 28.1: e^-19 ~ 5e-9 at the worst sample, ~1e-10 in the norm); double rounding of
    // the FFTs ~1e-15 log2 M. Bound: 1e-8, random traces (all frequencies present).
    for (int n : {301, 512}) {
        const auto x = random_trace(n, 3);
        const TimeDispersion td(n);
        std::vector<double> f(n), i(n);
        td.forward(x.data(), f.data());
        td.inverse(x.data(), i.data());
        const auto f_ref = warp_by_definition(x, forward_g, one);
        const auto i_ref = warp_by_definition(x, inverse_g, inverse_transform_band);
        const double ef = rel_l2(f.data(), f_ref.data(), n), ei = rel_l2(i.data(), i_ref.data(), n);
        WARN("n = " << n << ": forward " << ef << ", inverse " << ei << " from the direct sum");
        CHECK(ef < 1e-8);
        CHECK(ei < 1e-8);
    }
}

TEST_CASE("the warp's length is the least even product of 2, 3 and 5 at least twice the trace") {
    const auto smooth = [](int m) {
        for (const int f : {2, 3, 5})
            while (m % f == 0) m /= f;
        return m == 1;
    };
    for (int n : {1, 2, 3, 301, 512, 3829, 4584, 6092, 6210, 100001}) {
        const int m = warp_length(n);
        INFO("n = " << n << ", M = " << m);
        CHECK(m >= 2 * n);
        CHECK(m % 2 == 0);
        CHECK(smooth(m));
        for (int k = 2 * n; k < m; k += 2) CHECK_FALSE(smooth(k));
    }
    CHECK(warp_length(4584) == 9216);  // a power of two would be 16384
}

TEST_CASE("the inverse time-dispersion transform undoes the forward one in its pass band") {
    // inverse(forward(x))(W) = a(W) X(w'(w(W))) = X(W) for |W| <= 1.5 rad per step (the
    // inverse's pass band): exact for a trace without energy above it. A Ricker of f0 =
    // 0.05 cycles per step has (f/f0)^2 e^-(f/f0)^2 = 1.6e-9 of its peak spectrum at 1.5
    // rad (f/f0 = 4.8), falling as a Gaussian; delayed by 2.5 / f0 it starts at
    // e^-(2.5 pi)^2 ~ 1e-27 (no step at t = 0, which would be broadband). What is left:
    // the gridding's 1e-12 and ~1e-10 from the spectrum above the band. Bound 1e-9.
    // (In double: float samples would carry white rounding noise, 2^-24 of each sample,
    // half of it above the band.)
    const int n = 400;
    std::vector<double> x(n), y(n), z(n);
    for (int i = 0; i < n; ++i) {
        const double a = M_PI * 0.05 * (i - 2.5 / 0.05);
        x[i] = (1 - 2 * a * a) * std::exp(-a * a);
    }
    const TimeDispersion td(n);
    td.forward(x.data(), y.data());
    td.inverse(y.data(), z.data());
    const double e = rel_l2(z.data(), x.data(), n), moved = rel_l2(y.data(), x.data(), n);
    WARN("inverse(forward(x)) vs x: " << e << " (forward alone moves it by " << moved << ")");
    CHECK(e < 1e-9);
    CHECK(moved > 1e-3);  // the test is not of an identity
}

TEST_CASE("the transposes of the transforms and of the resampling are exact") {
    // In double: rounding of a few thousand operations per sample, ~1e-15 relative.
    // Both warps: the forward one has a(w) = 1 up to the Nyquist bin M/2, whose
    // imaginary part the real transforms drop (the inverse one's band ends before it).
    for (int n : {301, 1000})
        for (const bool inverse : {true, false}) {
            const FrequencyWarp w(n, inverse ? inverse_g : forward_g, inverse ? inverse_transform_band : one);
            const double e = transpose_error(
                n, n, [&](const auto& x, auto& y) { w.apply(x.data(), y.data()); },
                [&](const auto& y, auto& x) { w.apply_transpose(y.data(), x.data()); });
            INFO((inverse ? "inverse" : "forward") << " transform, n = " << n << ": " << e);
            CHECK(e < 1e-13);
        }
    // The resampler's output is float: each record sample rounded to 2^-24 relative,
    // which moves <R x, y> by at most 2^-24 |R x| |y| (Cauchy-Schwarz).
    for (auto [nin, dtin, nout, dtout] : {std::tuple{1001, 0.001, 251, 0.004}, {1001, 0.001, 1001, 0.001},
                                          {3001, 0.0005, 751, 0.002}, {401, 0.004, 1601, 0.001}}) {
        const Resampler r(nin, dtin, nout, dtout);
        const double e = transpose_error(
            nin, nout,
            [&](const auto& x, auto& y) {
                std::vector<float> f(nout);
                r.apply(x.data(), f.data());
                y.assign(f.begin(), f.end());
            },
            [&](const auto& y, auto& x) { r.apply_transpose(y.data(), x.data()); });
        INFO("resampling " << dtin << " s -> " << dtout << " s: " << e);
        CHECK(e < 6e-8);
    }
}

TEST_CASE("with the transforms leapfrog gives the time-exact solution of an oscillator (any medium)") {
    // u'' = -W0^2 u + s(t): the wave equation's time stepping for one eigenmode of any
    // spatial operator (L = -W0^2). Leapfrog at W0 dt = 0.3 rings at 2 asin(0.15) / dt,
    // 0.38% fast: after the 190 periods of the trace its phase is off by 4.5 rad. The
    // exact response to a Ricker is u(t) = int_0^t sin(W0 (t - tau)) / W0 s(tau) dtau
    // (Simpson, 2000 panels over the wavelet: ~1e-12). What the transforms leave: the
    // Ricker's samples are float (2^-24 relative, random: ~6e-9 in the response), the
    // gridding's ~1e-12, the Ricker's spectrum above the inverse transform's band (f / f0
    // = 5 at 1.5 rad per step: 25 e^-25 = 3e-10 of its peak), and the trace's end, cut
    // while the oscillator still rings: its Airy transition reaches back ~(n/8)^(1/3) = 8
    // steps, down to ~1e-6 at time_dispersion_margin = 80 steps, where the comparison
    // stops. Bound 1e-6.
    const double W0 = 2 * M_PI * 10, dt = 0.3 / W0, f0 = 10;
    const int n = 4000, m = n - time_dispersion_margin(n);
    auto source = [&](const std::vector<double>& s) {
        std::vector<double> u(n);
        double prev = 0, cur = 0;
        for (int i = 0; i < n; ++i) {
            u[i] = cur;
            const double next = 2 * cur - prev + dt * dt * (-W0 * W0 * cur + s[i]);
            prev = cur;
            cur = next;
        }
        return u;
    };
    const auto r = ricker(f0, dt, n);
    std::vector<double> s(r.begin(), r.end()), s_fd(n), u_fixed(n), exact(n);
    const TimeDispersion td(n);
    td.forward(s.data(), s_fd.data());
    const auto u_plain = source(s);
    td.inverse(source(s_fd).data(), u_fixed.data());
    const double t_w = 3 / f0;  // the Ricker's support
    for (int i = 0; i < n; ++i) {
        const double t = i * dt, b = std::min(t, t_w);
        const int p = 2000;
        double sum = 0;
        for (int k = 0; k <= p; ++k) {
            const double tau = b * k / p, wgt = (k == 0 || k == p) ? 1 : (k % 2 ? 4 : 2);
            const double a = M_PI * f0 * (tau - 1.5 / f0);
            sum += wgt * std::sin(W0 * (t - tau)) / W0 * (1 - 2 * a * a) * std::exp(-a * a);
        }
        exact[i] = sum * b / (3.0 * p);
    }
    const double plain = rel_l2(u_plain.data(), exact.data(), m), fixed = rel_l2(u_fixed.data(), exact.data(), m);
    WARN("oscillator at W0 dt = 0.3: leapfrog " << plain << ", with the transforms " << fixed);
    CHECK(plain > 0.5);
    CHECK(fixed < 1e-6);
}

TEST_CASE("leapfrog's predicted error is w / w' - 1 in velocity") {
    // (w dt)^2 / 24 to leading order: 2 pi 40 Hz x 2 ms = 0.503 rad: 1.05%, 0.42 cycles
    // per second of travel (f - f' = f (w dt)^2 / 24).
    const LeapfrogError e = leapfrog_error(40, 0.002);
    CHECK(e.velocity == Approx(0.0106).epsilon(0.01));
    CHECK(e.cycles_per_second == Approx(40 * 0.0105).epsilon(0.01));
}
