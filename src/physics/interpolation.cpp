#include "physics/interpolation.h"

#include <cmath>

namespace rtm {

double kaiser(double x, double beta) {
    if (std::abs(x) > 1) return 0;
    return std::cyl_bessel_i(0.0, beta * std::sqrt(1 - x * x)) / std::cyl_bessel_i(0.0, beta);
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
