#pragma once
// Smoothing models into migration models.
#include "core/grid.h"

namespace rtm {

// Gaussian smoothing of slowness (1/v) along every axis of the grid, sigma in metres.
// Smoothing slowness rather than velocity keeps vertical traveltimes, which is what a
// migration velocity must get right.
Volume smooth_slowness(const Volume& v, double sigma);

// Gaussian smoothing of the values themselves (anisotropy parameters), the same kernel.
Volume smooth_values(const Volume& v, double sigma);

}  // namespace rtm
