#pragma once
// Operations on wavefields held on a grid's nodes (x fastest, z slowest), with the
// same 8th-order stencils as the propagator. Values outside the grid count as zero,
// so every operator here is a fixed linear map (Born modelling and its adjoint use
// laplacian() both ways and stay exact transposes).
#include <array>
#include <utility>
#include <vector>

#include "core/grid.h"

namespace rtm::imaging {

// Lap f with the 8th-order second-derivative stencil along each axis.
std::vector<double> laplacian(const std::vector<double>& f, const Grid& g);
// The same into out[0 .. g.size()), each node written once on every core (no zeroing).
void laplacian(const double* f, const Grid& g, double* out);

// grad a . grad b with the 8th-order first-derivative stencil.
std::vector<double> grad_dot(const std::vector<double>& a, const std::vector<double>& b, const Grid& g);

// (H p, V q): the pseudo-acoustic operator L = diag(H, V) of docs/anisotropy.md on
// the grid's nodes, with the propagator's stencils but values outside the grid zero
// (so that TTI Born modelling and its adjoint read one fixed linear map):
//   VTI (axis empty):  H = Dxx + Dyy, V = Dzz;
//   TTI (axis: n_x, n_y, n_z on the nodes, a unit vector):
//     H = Lap - div(n (n . grad)),  V = Lap - div((I - n n^T) grad),
//   grad and div the 8th-order first-derivative stencil (H = Lap - d2/dn2, V = d2/dn2).
std::pair<std::vector<double>, std::vector<double>> anisotropic_operator(
    const std::vector<double>& p, const std::vector<double>& q, const Grid& g,
    const std::array<std::vector<double>, 3>& axis);

}  // namespace rtm::imaging
