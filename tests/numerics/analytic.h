#pragma once
// Analytic Green's functions of (1/v^2) u_tt - Lap u = f(t) delta(x), at distance r.
#include <cmath>
#include <functional>

namespace rtm::test {

// 3D: u = f(t - r/v) / (4 pi r).
inline double green3d(const std::function<double(double)>& f, double r, double v, double t) {
    return f(t - r / v) / (4 * M_PI * r);
}

// 2D: u = (1/2pi) int_{r/v}^{t} f(t - tau) / sqrt(tau^2 - (r/v)^2) dtau. With
// tau = t0 cosh(s) the singular kernel becomes ds:
// u = (1/2pi) int_0^{acosh(t/t0)} f(t - t0 cosh s) ds, a smooth integral.
inline double green2d(const std::function<double(double)>& f, double r, double v, double t) {
    const double t0 = r / v;
    if (t <= t0) return 0;
    const double smax = std::acosh(t / t0);
    const int n = 4000;
    double sum = 0;
    for (int i = 0; i <= n; ++i) {  // Simpson's rule
        const double s = smax * i / n;
        const double wgt = (i == 0 || i == n) ? 1 : (i % 2 ? 4 : 2);
        sum += wgt * f(t - t0 * std::cosh(s));
    }
    return sum * smax / (3.0 * n) / (2 * M_PI);
}

inline std::function<double(double)> ricker_fn(double f0) {
    return [f0](double t) {
        const double a = M_PI * f0 * (t - 1.5 / f0);
        return (1 - 2 * a * a) * std::exp(-a * a);
    };
}

}  // namespace rtm::test
