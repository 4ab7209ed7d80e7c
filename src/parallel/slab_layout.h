#pragma once
// One shot's grid over the ranks of a shot group: the computed z-planes [0, nz) of the
// padded propagation box (model window plus absorbing layers) cut into G slabs of
// consecutive planes, rank g of the group owning slab g (the top slab first).
//
// Rules, each for exactness or to keep the exchange to one wavefield:
//  - every face between slabs lies at least R = 4 planes (the stencil's reach) below the
//    top z layer and above the bottom one: the C-PML memory variables (psi, zeta) and
//    the layers' row updates then never reach across a face, so the only values a slab
//    needs from its neighbours are the R planes of the current wavefield beside each
//    face, and each plane is updated by the same arithmetic as in one box;
//  - every slab is at least R planes thick (a slab's ghost planes come from one
//    neighbour), the top one R + 1 under a free surface (the mirror reads planes 1..R);
//  - slabs are balanced by work: a plane within R of a z layer (its rows run the
//    layer update: psi and zeta read and written besides u, w and (v dt)^2, about twice
//    the memory traffic of the interior update, which is bandwidth-bound) weighs
//    kLayerPlaneWeight, any other plane 1 (their x and y layer parts are alike).
#include <vector>

namespace rtm::parallel {

constexpr double kLayerPlaneWeight = 2.0;

struct Slab {
    int z0 = 0, z1 = 0;  // computed planes [z0, z1) of the whole box
    int planes() const { return z1 - z0; }
};

// The slabs of a box of nz computed planes with pml_lo / pml_hi layer planes at the top
// and bottom (pml_lo = 0 under a free surface) over `ranks` ranks. Throws, naming
// parallel.ranks-per-shot, the smallest window depth that works and the largest count
// of ranks for this grid, when the rules above cannot be met.
std::vector<Slab> slab_layout(int nz, int pml_lo, int pml_hi, bool free_surface, int ranks);

}  // namespace rtm::parallel
