#pragma once
// Absorbing layers: convolutional PML for the second-order acoustic equation
// (Pasalic & McGarry 2010, SEG Expanded Abstracts). Along each axis i with a
// layer, the stretched derivative d~/dx = (1/s) d/dx, s = 1 + d(x)/(alpha(x) + i w),
// becomes in time
//     p_tt = v^2 sum_i ( d_ii p + d_i psi_i + zeta_i ),
//     psi_i  <- b psi_i  + a d_i p,
//     zeta_i <- b zeta_i + a (d_ii p + d_i psi_i),
// with b = exp(-(d + alpha) dt), a = d (b - 1) / (d + alpha) (a = 0, b = 1 outside).
// Profiles: d = d0 (s/L)^2, alpha = alpha0 (1 - s/L), s the depth into a layer of
// thickness L, d0 = -3 v_max ln(Rc) / (2 L), Rc = 1e-5, alpha0 = pi f_dominant.
#include <vector>

namespace rtm {

struct CpmlProfile {
    std::vector<double> a, b;  // one per computed point along the axis
};

// n computed points along the axis, of which `lo` and `hi` cells are layers at the
// two ends (either may be 0); h the spacing.
CpmlProfile cpml_profile(int n, int lo, int hi, double h, double dt, double v_max,
                         double f_dominant);

}  // namespace rtm
