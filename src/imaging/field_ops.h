#pragma once
// Operations on wavefields held on a grid's nodes (x fastest, z slowest), with the
// same 8th-order stencils as the propagator. Values outside the grid count as zero,
// so every operator here is a fixed linear map (Born modelling and its adjoint use
// laplacian() both ways and stay exact transposes).
#include <vector>

#include "core/grid.h"

namespace rtm::imaging {

// Lap f with the 8th-order second-derivative stencil along each axis.
std::vector<double> laplacian(const std::vector<double>& f, const Grid& g);

// grad a . grad b with the 8th-order first-derivative stencil.
std::vector<double> grad_dot(const std::vector<double>& a, const std::vector<double>& b, const Grid& g);

}  // namespace rtm::imaging
