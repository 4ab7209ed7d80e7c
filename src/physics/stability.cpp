#include "physics/stability.h"

#include <algorithm>
#include <cmath>

#include "physics/stencil.h"

namespace rtm {

double stencil::second_derivative_symbol_max() {
    // Sampled rather than assumed at pi, so a change of coefficients stays correct.
    double best = 0;
    const int n = 4096;
    for (int i = 0; i <= n; ++i) {
        const double th = M_PI * i / n;
        double s = c2(0);
        for (int k = 1; k <= R; ++k) s += 2 * c2(k) * std::cos(k * th);
        best = std::max(best, std::abs(s));
    }
    return best;
}

double max_stable_dt(double v_max, double dx, double dy, double dz) {
    double inv_h2 = 1 / (dx * dx) + 1 / (dz * dz);
    if (dy > 0) inv_h2 += 1 / (dy * dy);
    return 2.0 / (v_max * std::sqrt(stencil::second_derivative_symbol_max() * inv_h2));
}

double points_per_wavelength(double v_min, double f_max, double h_max) {
    return v_min / (f_max * h_max);
}

}  // namespace rtm
