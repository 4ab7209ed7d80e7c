#pragma once
// Sources and receivers off the grid: Kaiser-windowed sinc interpolation
// (Hicks 2002, Geophysics 67(1)). A point at fractional grid coordinate x is spread
// over the 2R = 8 nodes floor(x)-3 .. floor(x)+4 with weights sinc(i - x) W(i - x);
// the 3D weights are products of the per-axis ones. On a node the weights reduce to a
// single 1, so on-grid points are injected and sampled exactly.
#include <cmath>

#include "physics/stencil.h"

namespace rtm {

inline double sinc(double x) {
    if (std::abs(x) < 1e-12) return 1.0;
    const double px = M_PI * x;
    return std::sin(px) / px;
}

// The modified Bessel function I0 (x >= 0), by its power series.
double bessel_i0(double x);

// Kaiser window on [-1, 1]: I0(beta sqrt(1 - x^2)) / I0(beta), zero outside.
double kaiser(double x, double beta);

// Hicks (2002, table 2) shape parameter for radius 4, optimal for wavenumbers up to
// pi/2 per cell (4 points per wavelength): spectral error 1.3e-3.
constexpr double kHicksBeta = 6.31;

struct SincWeights {
    int first;                        // first node index
    double w[2 * stencil::R];         // weights of nodes first .. first + 2R - 1
};

// Weights for the fractional grid coordinate x (in cells).
SincWeights sinc_weights(double x);

}  // namespace rtm
