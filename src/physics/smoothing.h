#pragma once
// Smoothing models into migration models.
#include "core/grid.h"

namespace rtm {

// Gaussian smoothing of slowness (1/v) along every axis of the grid, sigma in metres.
// Smoothing slowness rather than velocity keeps vertical traveltimes, which is what a
// migration velocity must get right.
Volume smooth_slowness(const Volume& v, double sigma);

// Gaussian smoothing of the values themselves (epsilon, delta), the same kernel.
Volume smooth_values(const Volume& v, double sigma);

// Gaussian smoothing of a symmetry axis given by its tilt from vertical and azimuth
// volumes (radians; `phi` null: 0, the axis tilts towards x), in place, the same kernel.
// The axis tensor n n^T is smoothed component by component and its principal direction
// taken, with n_z >= 0. The angles themselves would not do: tilts of +89 and -89
// degrees are axes 2 degrees apart (-89 is 91, n and -n being one axis), whose angles
// average to the vertical; azimuths of 359 and 1 degree average to 180. Out: tilt in [0, pi/2] towards azimuth phi in
// (-pi, pi] with `phi`; without it, a signed tilt in [-pi/2, pi/2] towards x.
void smooth_axis(Volume& theta, Volume* phi, double sigma);

}  // namespace rtm
