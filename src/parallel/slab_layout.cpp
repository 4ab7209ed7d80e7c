#include "parallel/slab_layout.h"

#include <algorithm>
#include <string>

#include "core/error.h"

namespace rtm::parallel {

namespace {
constexpr int R = 4;  // the stencil's half-width (physics/stencil.h), kept here to leave kernels out
}

std::vector<Slab> slab_layout(int nz, int pml_lo, int pml_hi, bool free_surface, int ranks) {
    if (ranks <= 1) return {Slab{0, nz}};
    // Faces may lie in [first, last]: R below the top layer (and far enough down for the
    // top slab's thickness), R above the bottom one; consecutive faces R apart.
    const int first = std::max(pml_lo + R, free_surface ? R + 1 : R);
    const int last = nz - pml_hi - R;
    if (last - first < (ranks - 2) * R) {
        const int window_nz = nz - pml_lo - pml_hi;
        // nz >= first + (ranks - 1) R + pml_hi planes in all, of which pml_lo + pml_hi are layers.
        const int need = first + (ranks - 1) * R - pml_lo;
        const int most = last >= first ? (last - first) / R + 2 : 1;
        fail("option parallel.ranks-per-shot",
             "is " + std::to_string(ranks) + ", but a grid of " + std::to_string(window_nz) +
                 " depth samples (plus " + std::to_string(pml_lo) + " + " + std::to_string(pml_hi) +
                 " absorbing planes) cannot be cut into that many z-slabs: each must be at least " + std::to_string(R) +
                 " planes thick, with its faces at least " + std::to_string(R) + " planes from the absorbing layers",
             "Use parallel.ranks-per-shot <= " + std::to_string(most) +
                 " for this grid, or a model of at least " + std::to_string(need) + " depth samples");
    }
    // Cumulative work below each plane; face k goes where k / ranks of the work lies above.
    std::vector<double> work(std::size_t(nz) + 1, 0.0);
    for (int z = 0; z < nz; ++z) {
        const bool layer = (pml_lo > 0 && z < pml_lo + R) || (pml_hi > 0 && z >= nz - pml_hi - R);
        work[std::size_t(z) + 1] = work[std::size_t(z)] + (layer ? kLayerPlaneWeight : 1.0);
    }
    std::vector<Slab> slabs;
    int prev = 0;
    for (int k = 1; k < ranks; ++k) {
        const double target = work.back() * k / ranks;
        int f = int(std::lower_bound(work.begin(), work.end(), target) - work.begin());
        if (f > 0 && target - work[std::size_t(f) - 1] < work[std::size_t(f)] - target) --f;  // the nearer plane
        // Within the faces' range, leaving room for the faces still to come.
        f = std::clamp(f, first + (k - 1) * R, last - (ranks - 1 - k) * R);
        if (k > 1) f = std::max(f, prev + R);
        slabs.push_back(Slab{prev, f});
        prev = f;
    }
    slabs.push_back(Slab{prev, nz});
    return slabs;
}

}  // namespace rtm::parallel
