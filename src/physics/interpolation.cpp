#include "physics/interpolation.h"

#include <cmath>

namespace rtm {

// I0(x) = sum_k ((x/2)^k / k!)^2: every term is positive (no cancellation), so each
// term and partial sum rounds once, ~2 k ulps for the k terms it takes (about 60 at
// x = 30, the widest window here): 1e-14 relative. libstdc++'s std::cyl_bessel_i, code
// for any order, took about 0.5 us a call; a shot's record resampler (2000 outputs x
// 48 taps, two calls each) took 100 ms per shot, more than a 2D shot's propagation.
double bessel_i0(double x) {
    const double q = 0.25 * x * x;
    double term = 1, sum = 1;
    for (int k = 1; k < 1000; ++k) {
        term *= q / (double(k) * k);
        const double next = sum + term;
        if (next == sum) break;
        sum = next;
    }
    return sum;
}

double kaiser(double x, double beta) {
    if (std::abs(x) > 1) return 0;
    // Callers fill tables with one beta: its I0 is kept (per thread).
    thread_local double last_beta = -1, i0_beta = 1;
    if (beta != last_beta) {
        i0_beta = bessel_i0(beta);
        last_beta = beta;
    }
    return bessel_i0(beta * std::sqrt(1 - x * x)) / i0_beta;
}

SincWeights sinc_weights(double x) {
    constexpr int R = stencil::R;
    SincWeights s;
    const double fl = std::floor(x);
    s.first = int(fl) - R + 1;
    const bool on_node = std::abs(x - std::round(x)) < 1e-9;
    for (int k = 0; k < 2 * R; ++k) {
        const double d = (s.first + k) - x;
        if (on_node) s.w[k] = std::abs(d) < 0.5 ? 1.0 : 0.0;
        else s.w[k] = sinc(d) * kaiser(d / R, kHicksBeta);
    }
    return s;
}

}  // namespace rtm
