#pragma once
// What one time step needs, as plain data so the same struct goes to the CPU loop
// and, by value, to a CUDA kernel. Built by the propagation layer.
//
// The box: nx * ny * nz computed points (model window plus absorbing layers; ny = 1
// in 2D). Every array below that is "padded" holds a halo of R = 4 cells around the
// computed points in x and z (and y in 3D); the halo stays zero (Dirichlet, behind
// the absorbing layers) except above a free surface, where it mirrors the field.
// Rows are padded to a multiple of 8 values (32 bytes in fp32): every row starts on a
// DRAM sector, and row and plane strides are multiples of 16 bytes, as the GPU's bulk
// tensor copies need. The extra columns right of the halo are never read as neighbours.
// The index functions compile for host and device (RTM_HD).
#include <cstddef>

#include "physics/stencil.h"

namespace rtm::kernels {

struct Box {
    int ndim = 2;
    int nx = 0, ny = 1, nz = 0;      // computed points
    int pml_lo[3] = {0, 0, 0};       // layer cells at the low end of x, y, z
    int pml_hi[3] = {0, 0, 0};       // layer cells at the high end of x, y, z
    bool free_surface = false;       // p = 0 at iz = 0 (then pml_lo[2] = 0)

    RTM_HD int halo_y() const { return ndim == 3 ? stencil::R : 0; }
    RTM_HD long sx() const { return 1; }
    RTM_HD long sy() const { return (nx + 2 * stencil::R + 7) / 8 * 8; }
    RTM_HD long sz() const { return sy() * (ny + 2 * halo_y()); }
    RTM_HD std::size_t padded_size() const { return std::size_t(sz()) * (nz + 2 * stencil::R); }
    // Index of computed point (ix, iy, iz) in a padded array; halo points have
    // coordinates -R..-1 and n..n+R-1.
    RTM_HD long at(int ix, int iy, int iz) const {
        return (long(iz) + stencil::R) * sz() + (long(iy) + halo_y()) * sy() + ix + stencil::R;
    }
    std::size_t points() const { return std::size_t(nx) * ny * nz; }
    bool has_pml() const {
        for (int i = 0; i < 3; ++i)
            if (pml_lo[i] || pml_hi[i]) return true;
        return false;
    }
};

template <class T>
struct StepArgs {
    Box box;
    T inv_h2[3];          // 1/dx^2, 1/dy^2, 1/dz^2 (inv_h2[1] = 0 in 2D)
    T inv_h[3];           // 1/dx, 1/dy, 1/dz

    const T* u = nullptr; // u[n], padded
    T* w = nullptr;       // in: u[n-1], out: u[n+1], padded
    const T* vdt2 = nullptr;  // (v dt)^2, padded (halo unused)

    // Absorbing layers, one of two kinds (neither when !box.has_pml()):
    // C-PML: per-axis profiles over the computed points (a = 0, b = 1 in the interior)
    // and the memory variables, padded.
    const T* a[3] = {nullptr, nullptr, nullptr};
    const T* b[3] = {nullptr, nullptr, nullptr};
    T* psi[3] = {nullptr, nullptr, nullptr};
    T* zeta[3] = {nullptr, nullptr, nullptr};
    // Damping (when damp != nullptr, psi are null): m u_tt + eta u_t - Lap u = s with
    // central differences, w = (2u - (1 - k) w + vdt2 Lap u) / (1 + k),
    // k = eta v^2 dt / 2 per padded point (0 in the model window). Its update matrices
    // are symmetric, so the exact adjoint is this same step run backward in time.
    const T* damp = nullptr;

    // Several shots at once on the same box and model (forward modelling of a 2D survey
    // fills a GPU only so): `batch` members whose u, w, psi and zeta lie one after another
    // at a stride of box.padded_size() values; vdt2, damp, a and b are shared.
    int batch = 1;

    // Member m alone (batch 1): u, w, psi and zeta moved by m padded boxes.
    RTM_HD StepArgs member(int m) const {
        StepArgs one = *this;
        const long off = long(box.padded_size()) * m;
        one.batch = 1;
        one.u += off;
        one.w += off;
        for (int ax = 0; ax < 3; ++ax) {
            if (one.psi[ax]) one.psi[ax] += off;
            if (one.zeta[ax]) one.zeta[ax] += off;
        }
        return one;
    }
};

}  // namespace rtm::kernels
