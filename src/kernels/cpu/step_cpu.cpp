// CPU time step of the constant-density acoustic equation with C-PML or damping layers.
//
//   w = 2 u - w + vdt2 * L,   L = sum_i [ d_ii u + (d_i psi_i + zeta_i) in C-PML layers ]
//   (damping layers: w = (2 u - (1 - k) w + vdt2 Lap u) / (1 + k))
//
// Bytes and flops per interior point (fp32): reads u, w, vdt2 and writes w, 16 B;
// 3D: 3*4 adds + 3*4 mults for the wings, 3 + 4 for centre and update: about 35 flops.
#include "kernels/cpu/step_cpu.h"

#include <algorithm>
#include <stdexcept>

namespace rtm::kernels {

using stencil::R;

namespace {

// Whether index i along an axis of n points lies within R of a layer (where the
// C-PML terms are non-zero: psi lives in the layer, its derivative reaches R further).
inline bool in_layer_zone(int i, int n, int lo, int hi) {
    return (lo > 0 && i < lo + R) || (hi > 0 && i >= n - hi - R);
}
inline bool in_layer(int i, int n, int lo, int hi) { return i < lo || i >= n - hi; }

template <class T, int NDIM>
struct Stepper {
    const StepArgs<T>& A;
    const Box& B;
    long s[3];
    int n[3];

    explicit Stepper(const StepArgs<T>& args) : A(args), B(args.box) {
        s[0] = B.sx(); s[1] = B.sy(); s[2] = B.sz();
        n[0] = B.nx; n[1] = B.ny; n[2] = B.nz;
    }

    // psi <- b psi + a d u along stride st, for ix in [x0, x1) of one row: u the row's
    // point 0, psi its memory at point x0 (mem_row); the profile index is ix along x
    // (a == nullptr: the row's own coefficients a_row, b_row).
    static void psi_row(T* __restrict psi, const T* __restrict u, long st, T ih, int x0, int x1,
                        const T* __restrict a, const T* __restrict b, T a_row, T b_row) {
        if (a) {
#pragma omp simd
            for (int ix = x0; ix < x1; ++ix)
                psi[ix - x0] = b[ix] * psi[ix - x0] + a[ix] * stencil::d1_diff(u + ix, st) * ih;
        } else {
#pragma omp simd
            for (int ix = x0; ix < x1; ++ix)
                psi[ix - x0] = b_row * psi[ix - x0] + a_row * stencil::d1_diff(u + ix, st) * ih;
        }
    }

    // The memory of axis ax at point (x0, iy, iz); the points x0 + k of the row follow at
    // k while they stay on one side of the memory's gap (x: one layer's cells at a time).
    T* mem_row(T* const* arrays, int ax, int x0, int iy, int iz) const {
        return arrays[ax] + A.mem_at(ax, x0, iy, iz);
    }

    // Pass 1: psi_i <- b psi_i + a d_i u, in the layers of axis i only.
    void advance_psi() {
#pragma omp parallel for collapse(2) schedule(static)
        for (int iz = 0; iz < B.nz; ++iz)
            for (int iy = 0; iy < B.ny; ++iy) {
                const T* u = A.u + B.at(0, iy, iz);
                if (A.psi[0]) {
                    const int hx = B.nx - B.pml_hi[0];
                    if (B.pml_lo[0])
                        psi_row(mem_row(A.psi, 0, 0, iy, iz), u, s[0], A.inv_h[0], 0, B.pml_lo[0], A.a[0], A.b[0], 0, 0);
                    if (B.pml_hi[0])
                        psi_row(mem_row(A.psi, 0, hx, iy, iz), u, s[0], A.inv_h[0], hx, B.nx, A.a[0], A.b[0], 0, 0);
                }
                if (NDIM == 3 && A.psi[1] && in_layer(iy, n[1], B.pml_lo[1], B.pml_hi[1]))
                    psi_row(mem_row(A.psi, 1, 0, iy, iz), u, s[1], A.inv_h[1], 0, B.nx, nullptr, nullptr,
                            A.a[1][iy], A.b[1][iy]);
                if (A.psi[2] && in_layer(iz, n[2], B.pml_lo[2], B.pml_hi[2]))
                    psi_row(mem_row(A.psi, 2, 0, iy, iz), u, s[2], A.inv_h[2], 0, B.nx, nullptr, nullptr,
                            A.a[2][iz], A.b[2][iz]);
            }
    }

    // The plain update for ix in [x0, x1) of one row.
    void interior_row(long row, int x0, int x1) {
        const T* __restrict u = A.u;
        T* __restrict w = A.w;
        const T* __restrict v = A.vdt2;
        const T c0 = T(stencil::c2(0)) * (A.inv_h2[0] + A.inv_h2[1] + A.inv_h2[2]);
        const T hx = A.inv_h2[0], hy = A.inv_h2[1], hz = A.inv_h2[2];
        const long sy = s[1], sz = s[2];
#pragma omp simd
        for (int ix = x0; ix < x1; ++ix) {
            const long p = row + ix;
            T lap = c0 * u[p] + hx * stencil::d2_wings(u + p, 1) + hz * stencil::d2_wings(u + p, sz);
            if (NDIM == 3) lap += hy * stencil::d2_wings(u + p, sy);
            w[p] = T(2) * u[p] - w[p] + v[p] * lap;
        }
    }

    // The layer update for ix in [x0, x1) of one row: with damping, the damped row;
    // with C-PML, the terms of each axis in whose zone the points lie (lx: the segment
    // is in x's zone, ly and lz: the row in y's and z's), the plain wings elsewhere.
    // Which axes apply is fixed per segment: a template flag each, so the vectorised
    // loop carries no branch.
    void layer_row(int iy, int iz, int x0, int x1, bool lx, bool ly, bool lz) {
        if (A.damp) return layer_row_<false, false, false, true>(iy, iz, x0, x1);
        switch ((lx ? 4 : 0) + (ly ? 2 : 0) + (lz ? 1 : 0)) {
            case 0: return layer_row_<false, false, false>(iy, iz, x0, x1);
            case 1: return layer_row_<false, false, true>(iy, iz, x0, x1);
            case 2: return layer_row_<false, true, false>(iy, iz, x0, x1);
            case 3: return layer_row_<false, true, true>(iy, iz, x0, x1);
            case 4: return layer_row_<true, false, false>(iy, iz, x0, x1);
            case 5: return layer_row_<true, false, true>(iy, iz, x0, x1);
            case 6: return layer_row_<true, true, false>(iy, iz, x0, x1);
            default: return layer_row_<true, true, true>(iy, iz, x0, x1);
        }
    }

    template <bool lx, bool ly, bool lz, bool damped = false>
    void layer_row_(int iy, int iz, int x0, int x1) {
        const long row = B.at(0, iy, iz);
        const T* __restrict u = A.u;
        T* __restrict w = A.w;
        const T* __restrict v = A.vdt2;
        const T c0 = T(stencil::c2(0));
        const T ay = ly ? A.a[1][iy] : T(0), by = ly ? A.b[1][iy] : T(1);
        const T az = lz ? A.a[2][iz] : T(0), bz = lz ? A.b[2][iz] : T(1);
        // The memory variables of the axes that apply at x0, point ix at ix - x0 (psi_x
        // and zeta_x: the segment lies on one side of x's memory gap).
        const T* __restrict psx = lx ? mem_row(A.psi, 0, x0, iy, iz) : nullptr;
        const T* __restrict psy = ly ? mem_row(A.psi, 1, x0, iy, iz) : nullptr;
        const T* __restrict psz = lz ? mem_row(A.psi, 2, x0, iy, iz) : nullptr;
        T* __restrict zx = lx ? mem_row(A.zeta, 0, x0, iy, iz) : nullptr;
        T* __restrict zy = ly ? mem_row(A.zeta, 1, x0, iy, iz) : nullptr;
        T* __restrict zz = lz ? mem_row(A.zeta, 2, x0, iy, iz) : nullptr;
        const T* __restrict ax = A.a[0];
        const T* __restrict bx = A.b[0];
        const T hx2 = A.inv_h2[0], hy2 = A.inv_h2[1], hz2 = A.inv_h2[2];
        const T hx = A.inv_h[0], hy = A.inv_h[1], hz = A.inv_h[2];
        const long sy = s[1], sz = s[2];
#pragma omp simd
        for (int ix = x0; ix < x1; ++ix) {
            const long p = row + ix;
            T t = (c0 * u[p] + stencil::d2_wings(u + p, 1)) * hx2;
            if constexpr (lx) {
                t += stencil::d1_diff(psx + (ix - x0), 1) * hx;
                zx[ix - x0] = bx[ix] * zx[ix - x0] + ax[ix] * t;
                t += zx[ix - x0];
            }
            T lap = t;
            if constexpr (NDIM == 3) {
                t = (c0 * u[p] + stencil::d2_wings(u + p, sy)) * hy2;
                if constexpr (ly) {
                    t += stencil::d1_diff(psy + (ix - x0), sy) * hy;
                    zy[ix - x0] = by * zy[ix - x0] + ay * t;
                    t += zy[ix - x0];
                }
                lap += t;
            }
            t = (c0 * u[p] + stencil::d2_wings(u + p, sz)) * hz2;
            if constexpr (lz) {
                t += stencil::d1_diff(psz + (ix - x0), sz) * hz;
                zz[ix - x0] = bz * zz[ix - x0] + az * t;
                t += zz[ix - x0];
            }
            lap += t;
            if constexpr (damped) {
                const T k = A.damp[p];
                w[p] = (T(2) * u[p] - (T(1) - k) * w[p] + v[p] * lap) / (T(1) + k);
            } else {
                w[p] = T(2) * u[p] - w[p] + v[p] * lap;
            }
        }
    }

    void run() {
        if (B.has_pml()) advance_psi();
        // x's zone: [0, xlo) and [xhi, nx) (all of the row when they meet).
        const int xlo = B.pml_lo[0] ? B.pml_lo[0] + R : 0;
        const int xhi = B.pml_hi[0] ? B.nx - B.pml_hi[0] - R : B.nx;
#pragma omp parallel for collapse(2) schedule(static)
        for (int iz = 0; iz < B.nz; ++iz)
            for (int iy = 0; iy < B.ny; ++iy) {
                // Rows in y's or z's zone take the layer update all along (damping: the
                // damped row); the C-PML terms of an axis where its memory exists.
                const bool zy = NDIM == 3 && in_layer_zone(iy, n[1], B.pml_lo[1], B.pml_hi[1]);
                const bool zz = in_layer_zone(iz, n[2], B.pml_lo[2], B.pml_hi[2]);
                const bool lx = A.psi[0] != nullptr, ly = zy && A.psi[1], lz = zz && A.psi[2];
                if (xlo >= xhi) {
                    layer_row(iy, iz, 0, B.nx, lx, ly, lz);
                    continue;
                }
                if (xlo > 0) layer_row(iy, iz, 0, xlo, lx, ly, lz);
                if (zy || zz) layer_row(iy, iz, xlo, xhi, false, ly, lz);
                else interior_row(B.at(0, iy, iz), xlo, xhi);
                if (xhi < B.nx) layer_row(iy, iz, xhi, B.nx, lx, ly, lz);
            }
        if (B.free_surface) free_surface_cpu(B, A.w);
    }
};

}  // namespace

template <class T>
void free_surface_cpu(const Box& box, T* f) {
#pragma omp parallel for schedule(static)
    for (int iy = 0; iy < box.ny; ++iy)
        for (int ix = 0; ix < box.nx; ++ix) {
            f[box.at(ix, iy, 0)] = 0;
            for (int k = 1; k <= R; ++k) f[box.at(ix, iy, -k)] = -f[box.at(ix, iy, k)];
        }
}

#ifdef RTM_AVX2
// Built for AVX2 and FMA (see CMakeLists.txt): say so instead of dying on SIGILL.
static void require_avx2() {
    static const bool ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (!ok) throw std::runtime_error("this rtm was built for CPUs with AVX2 and FMA, which this one lacks; "
                                      "rebuild with cmake -DRTM_AVX2=OFF");
}
#endif

template <class T>
void step_cpu(const StepArgs<T>& args) {
#ifdef RTM_AVX2
    require_avx2();
#endif
    // Batch members one after another: the same function the GPU computes in one launch.
    for (int m = 0; m < args.batch; ++m) {
        const StepArgs<T> one = args.member(m);
        if (one.box.ndim == 3) Stepper<T, 3>(one).run();
        else Stepper<T, 2>(one).run();
    }
}

template void step_cpu<float>(const StepArgs<float>&);
template void step_cpu<double>(const StepArgs<double>&);
template void free_surface_cpu<float>(const Box&, float*);
template void free_surface_cpu<double>(const Box&, double*);

}  // namespace rtm::kernels
