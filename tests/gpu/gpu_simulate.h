#pragma once
// The small model the GPU tests compare backends on (simulate_on of simulate.h runs it).
#include "propagation/backend.h"
#include "simulate.h"

namespace rtm::test {

// The small heterogeneous model the GPU tests compare backends on: 61 x 47 x 53 nodes
// at 10 m (2D: ny = 1), v from about 1800 to 2530 m/s, dt at Courant number 0.3, 10
// layer cells, a Ricker 15 Hz from `source` (pass it off the grid); no receivers.
inline Run small_model_run(int ndim, Precision prec, Boundary boundary, int nt, Position source) {
    Run r;
    r.grid.nx = 61;
    r.grid.ny = ndim == 3 ? 47 : 1;
    r.grid.nz = 53;
    r.grid.dx = r.grid.dy = r.grid.dz = 10;
    r.velocity = [](double x, double y, double z) { return 1800 + 2.0 * z + 0.5 * x + 100 * std::sin(0.01 * (x + y)); };
    r.domain.boundary = boundary;
    r.domain.dt = 0.3 * 10 / 2600;  // v_max about 2530 m/s
    r.domain.pml_cells = 10;
    r.nt = nt;
    r.f0 = 15;
    r.source = source;
    if (ndim == 2) r.source.y = 0;
    r.precision = prec;
    return r;
}

}  // namespace rtm::test
