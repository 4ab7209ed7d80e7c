#pragma once
// Small velocity models the command-line tests write for rtm to read.
#include "core/grid.h"

namespace rtm::test {

// A 2D model of nx x nz nodes at spacing h (m), every node v (m/s).
inline Volume constant_model(int nx, int nz, double h, float v) {
    Volume m(Grid{});
    m.grid.nx = nx;
    m.grid.nz = nz;
    m.grid.dx = m.grid.dz = h;
    m.data.assign(m.grid.size(), v);
    return m;
}

}  // namespace rtm::test
