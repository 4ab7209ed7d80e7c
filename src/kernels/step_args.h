#pragma once
// What one time step needs, as plain data so the same struct goes to the CPU loop
// and, by value, to a CUDA kernel. Built by the propagation layer.
//
// The box: nx * ny * nz computed points (model window plus absorbing layers; ny = 1
// in 2D). Every array below that is "padded" holds a halo of R = 4 cells around the
// computed points in x and z (and y in 3D); the halo stays zero (Dirichlet, behind
// the absorbing layers) except above a free surface, where it mirrors the field.
// Rows are padded to a multiple of 32 values (128 bytes in fp32): every row starts on a
// 128-byte line, so the GPU's tiles, 32 values wide and aligned with the lines (their
// columns start kTileShift left of the computed points: step_cuda.cu), read and write
// whole lines, and row and plane strides are multiples of 16 bytes, as the GPU's bulk
// tensor copies need. Measured on an H200 (full update, t32x16, 504 x 512 x 512): 94.5%
// of the copy ceiling with lines and tiles aligned, 81-85% with either alone (rows of 8
// values: docs/performance.md). It costs at most 31 values a row. The extra columns
// right of the halo are never read as neighbours.
// The index functions compile for host and device (RTM_HD).
#include <algorithm>
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
    RTM_HD long sy() const { return (nx + 2 * stencil::R + 31) / 32 * 32; }
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

// Computed planes [z0, z1) of box b as a box of their own (a z-slab, a part of a step):
// its z layers are the planes of b's it holds, its free surface b's if it holds plane 0.
inline Box planes_of(const Box& b, int z0, int z1) {
    Box p = b;
    p.nz = z1 - z0;
    p.pml_lo[2] = std::max(0, std::min(b.pml_lo[2], z1) - z0);
    p.pml_hi[2] = std::max(0, z1 - std::max(z0, b.nz - b.pml_hi[2]));
    p.free_surface = b.free_surface && z0 == 0;
    return p;
}

// Where the C-PML memory variables of an axis (psi_i and zeta_i, one layout for both)
// are kept. The step reads them only near axis i's layers: it advances psi_i on the
// layer cells, and its zone points (layer + R cells) read psi_i up to R cells further
// and zeta_i in place. So along axis i an array keeps the padded cells [-R, cut) and
// [cut + gap, n + R) (x: to the row's end, Box::sy()): the low layer and 2R cells past
// it, the high layer and 2R cells before it (cells a layer never writes stay zero, as
// in a whole array). The other axes are kept whole, so the neighbours along x, y and z
// lie at the strides of the wavefields (1, Box::sy(), Box::sz()); only the index along
// axis i moves, and with gap 0 the layout is the wavefields' own. On a 512^3 box with
// 20-cell layers this keeps 64 of 520 cells along the axis: the six arrays take 0.74
// values per point instead of 6.
struct CpmlMemory {
    int cut[3] = {0, 0, 0};
    int gap[3] = {0, 0, 0};
    int row[3] = {0, 0, 0};           // values per row (x) and per plane (xy) of each axis's arrays
    long plane[3] = {0, 0, 0};        // (kernel parameters: the GPU reads them, computes nothing)
    std::size_t size[3] = {0, 0, 0};  // values per batch member (0: no layers on the axis)
    int z0 = 0;  // computed planes of the whole box above this one (a view: step_planes)

    std::size_t values() const { return size[0] + size[1] + size[2]; }
};

// The layout of box b's memory variables (every axis with layers); keep_all: every
// cell in place, the wavefields' layout (the reference the tests hold the compact one to).
inline CpmlMemory cpml_memory(const Box& b, bool keep_all = false) {
    CpmlMemory m;
    const int n[3] = {b.nx, b.ny, b.nz};
    // Padded extents along x (a row), y and z.
    const long extent[3] = {b.sy(), b.ny + 2L * b.halo_y(), b.nz + 2L * stencil::R};
    for (int ax = 0; ax < 3; ++ax) {
        const int lo = b.pml_lo[ax], hi = b.pml_hi[ax];
        if (!lo && !hi) continue;
        const int lo_end = lo ? lo + 2 * stencil::R : -stencil::R;
        const int hi_start = hi ? n[ax] - hi - 2 * stencil::R : n[ax] + stencil::R;
        const bool gap = lo_end < hi_start && !keep_all;
        m.cut[ax] = gap ? lo_end : n[ax] + stencil::R;
        m.gap[ax] = gap ? hi_start - lo_end : 0;
        m.row[ax] = int(extent[0] - (ax == 0 ? m.gap[0] : 0));
        m.plane[ax] = long(m.row[ax]) * (extent[1] - (ax == 1 ? m.gap[1] : 0));
        m.size[ax] = std::size_t(m.plane[ax]) * std::size_t(extent[2] - (ax == 2 ? m.gap[2] : 0));
    }
    return m;
}

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
    // and the memory variables, kept near the layers only (mem, CpmlMemory).
    const T* a[3] = {nullptr, nullptr, nullptr};
    const T* b[3] = {nullptr, nullptr, nullptr};
    T* psi[3] = {nullptr, nullptr, nullptr};
    T* zeta[3] = {nullptr, nullptr, nullptr};
    CpmlMemory mem;
    // Damping (when damp != nullptr, psi are null): m u_tt + eta u_t - Lap u = s with
    // central differences, w = (2u - (1 - k) w + vdt2 Lap u) / (1 + k),
    // k = eta v^2 dt / 2 per padded point (0 in the model window). Its update matrices
    // are symmetric, so the exact adjoint is this same step run backward in time.
    const T* damp = nullptr;

    // Several shots at once on the same box and model (forward modelling of a 2D survey
    // fills a GPU only so): `batch` members whose u and w lie one after another at a
    // stride of box.padded_size() values, psi and zeta at mem.size[ax]; vdt2, damp, a and
    // b are shared.
    int batch = 1;

    // Index in psi[ax] and zeta[ax] of computed point (ix, iy, iz), which must lie in
    // axis ax's zone or within R of it (where the step reads them).
    RTM_HD long mem_at(int ax, int ix, int iy, int iz) const {
        int c[3] = {ix, iy, iz + mem.z0};
        if (c[ax] >= mem.cut[ax]) c[ax] -= mem.gap[ax];
        // (In-plane offsets in 32 bits, as a plane's points are, and the strides read
        // from mem: the GPU's layer kernels compute this at every zone point, and each
        // register more costs them resident blocks.)
        return (long(c[2]) + stencil::R) * mem.plane[ax] + ((c[1] + box.halo_y()) * mem.row[ax] + c[0] + stencil::R);
    }

    // Member m alone (batch 1): u and w moved by m padded boxes, psi and zeta by m of
    // their own sizes.
    RTM_HD StepArgs member(int m) const {
        StepArgs one = *this;
        const long off = long(box.padded_size()) * m;
        one.batch = 1;
        one.u += off;
        one.w += off;
        for (int ax = 0; ax < 3; ++ax) {
            if (one.psi[ax]) one.psi[ax] += long(mem.size[ax]) * m;
            if (one.zeta[ax]) one.zeta[ax] += long(mem.size[ax]) * m;
        }
        return one;
    }
};

}  // namespace rtm::kernels
