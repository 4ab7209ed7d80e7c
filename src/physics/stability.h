#pragma once
// Checks a propagation setup before running: CFL stability and numerical dispersion.
#include <string>

namespace rtm {

// Largest stable time step of leapfrog with the 8th-order Laplacian:
// v_max^2 dt^2 * S * sum_i 1/h_i^2 <= 4, S = max |symbol| of the 1D stencil, so
// dt_max = 2 / (v_max sqrt(S sum_i 1/h_i^2)); with dx = dy = dz = h this is
// v dt / h <= 0.4529 (3D), 0.5547 (2D). dy <= 0 means 2D.
double max_stable_dt(double v_max, double dx, double dy, double dz);

// Grid points per shortest wavelength, v_min / (f_max * h_max).
double points_per_wavelength(double v_min, double f_max, double h_max);

// Below this many points per shortest wavelength, the 8th-order operator's phase
// error grows past about 1% per wavelength travelled: we warn.
constexpr double kMinPointsPerWavelength = 4.0;

}  // namespace rtm
