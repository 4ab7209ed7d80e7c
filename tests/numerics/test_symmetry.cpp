// Reciprocity and off-grid positions.
#include <cmath>

#include "simulate.h"
#include "support/catch.hpp"

using namespace rtm;
using namespace rtm::test;

TEST_CASE("source and receiver are reciprocal to rounding in a heterogeneous medium, off the grid") {
    // With sources injected as weight * (v dt)^2 and receivers sampled with the same
    // weights, the scheme is M (u[n+1] - 2u[n] + u[n-1]) = L u[n] + s with M = 1/(v dt)^2
    // diagonal and L symmetric: its Green's matrix is symmetric. Before any wave
    // reaches the absorbing layers (which are not symmetric), swapping source and
    // receiver must give the same trace to rounding: two double-precision runs of N
    // steps, each update rounding ~30 operations independently, differ like a random
    // walk, sqrt(30 N) 2^-53 / sqrt(3); three times that for a bound,
    // sqrt(90 N) 2^-53 = 1.6e-14 at N = 220.
    for (int ndim : {2, 3}) {
        Run r;
        r.grid.nx = r.grid.nz = 81;
        r.grid.ny = ndim == 3 ? 81 : 1;
        r.grid.dx = r.grid.dy = r.grid.dz = 10;
        r.domain.dt = 0.001;
        r.domain.pml_cells = 10;
        r.nt = 220;
        r.velocity = [](double x, double y, double z) {
            return 1800 + 0.8 * z + 300 * std::sin(x / 90) + (y > 400 ? 150 : 0) + (z > 430 ? 700 : 0);
        };
        const double yc = ndim == 3 ? 403.3 : 0, yd = ndim == 3 ? 387.1 : 0;
        const Position A{351.7, yc, 362.4}, B{453.2, yd, 421.9};
        r.source = A;
        r.receivers = {B};
        const auto ab = simulate(r);
        r.source = B;
        r.receivers = {A};
        const auto ba = simulate(r);
        const double err = rel_l2(ab.data(), ba.data(), ab.size());
        WARN(ndim << "D reciprocity: relative L2 " << err);
        CHECK(err <= std::sqrt(90.0 * r.nt) * std::ldexp(1.0, -53));
    }
}

TEST_CASE("an off-grid source matches the on-grid source of a shifted grid to interpolation accuracy (3e-3)") {
    // Grid A has nodes at z = 0, 10, 20 ... m, grid B at z = 4, 14, 24 ... m, in the
    // same smooth medium v(z) = 1700 + 0.8 z. The source at z = 604 m is off grid A and
    // on grid B; the receivers lie off both grids. (In a homogeneous medium the two
    // runs would agree exactly by translation symmetry; the gradient breaks it.) The
    // traces differ by Hicks' interpolation error, 1.3e-3 per interpolated point for
    // wavenumbers up to pi/2 per cell (f_max here is under pi/4), and by sampling
    // the medium at other depths (O(h^8)): below 3e-3 for the two interpolations.
    Run a;
    a.grid.nx = a.grid.nz = 121;
    a.grid.dx = a.grid.dz = 10;
    a.domain.dt = 0.001;
    a.domain.pml_cells = 20;
    a.nt = 450;
    a.velocity = [](double, double, double z) { return 1700 + 0.8 * z; };
    a.source = {603.3, 0, 604};
    a.receivers = {{901.7, 0, 807.5}, {402.2, 0, 496.1}};
    Run b = a;
    b.grid.z0 = 4;
    const auto ta = simulate(a), tb = simulate(b);
    const double err = rel_l2(ta.data(), tb.data(), ta.size());
    WARN("off-grid against on-grid: relative L2 " << err);
    CHECK(err < 3e-3);
}

TEST_CASE("source and receiver are reciprocal to rounding next to a free surface (folded stencils)") {
    // Both points within 4 cells of the surface: part of their stencils fold
    // antisymmetrically onto the nodes below it. The mirror keeps the Laplacian
    // symmetric and folding keeps injection the transpose of sampling, so the traces
    // must agree to rounding before anything returns from the layers (the bound of the
    // reciprocity test above, sqrt(90 N) 2^-53).
    Run r;
    r.grid.nx = 81;
    r.grid.nz = 61;
    r.grid.dx = r.grid.dz = 10;
    r.domain.dt = 0.001;
    r.domain.pml_cells = 10;
    r.domain.free_surface = true;
    r.nt = 220;
    r.velocity = [](double x, double, double z) { return 1700 + 1.5 * z + 200 * std::sin(x / 70); };
    const Position A{351.7, 0, 13.4}, B{452.9, 0, 27.2};
    r.source = A;
    r.receivers = {B};
    const auto ab = simulate(r);
    r.source = B;
    r.receivers = {A};
    const auto ba = simulate(r);
    const double err = rel_l2(ab.data(), ba.data(), ab.size());
    WARN("reciprocity under a free surface: relative L2 " << err);
    CHECK(err <= std::sqrt(90.0 * r.nt) * std::ldexp(1.0, -53));
}
