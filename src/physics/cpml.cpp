#include "physics/cpml.h"

#include <cmath>

namespace rtm {

CpmlProfile cpml_profile(int n, int lo, int hi, double h, double dt, double v_max,
                         double f_dominant) {
    CpmlProfile p{std::vector<double>(n, 0.0), std::vector<double>(n, 1.0)};
    const double Rc = 1e-5;
    const double alpha0 = M_PI * f_dominant;
    auto set = [&](int i, double depth_cells, int width) {
        const double L = width * h;
        const double s = depth_cells / width;  // 0 at the inner edge, 1 at the outer
        const double d0 = -3.0 * v_max * std::log(Rc) / (2.0 * L);
        const double d = d0 * s * s;
        const double alpha = alpha0 * (1 - s);
        const double b = std::exp(-(d + alpha) * dt);
        p.b[i] = b;
        p.a[i] = (d + alpha) > 0 ? d * (b - 1) / (d + alpha) : 0.0;
    };
    for (int i = 0; i < lo; ++i) set(i, double(lo - i), lo);
    for (int i = n - hi; i < n; ++i) set(i, double(i - (n - 1 - hi)), hi);
    return p;
}

}  // namespace rtm
