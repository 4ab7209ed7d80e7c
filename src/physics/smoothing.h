#pragma once
// Smoothing velocity models into migration velocities.
#include "core/grid.h"

namespace rtm {

// Gaussian smoothing of slowness (1/v) along every axis of the grid, sigma in metres.
// Smoothing slowness rather than velocity keeps vertical traveltimes, which is what a
// migration velocity must get right.
Volume smooth_slowness(const Volume& v, double sigma);

}  // namespace rtm
