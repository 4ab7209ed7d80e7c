// CPU time step of the constant-density acoustic equation with C-PML.
//
//   w = 2 u - w + vdt2 * L,   L = sum_i [ d_ii u + (d_i psi_i + zeta_i) in layers ]
//
// Bytes and flops per interior point (fp32): reads u, w, vdt2 and writes w, 16 B;
// 3D: 3*4 adds + 3*4 mults for the wings, 3 + 4 for centre and update: about 35 flops.
#include "kernels/cpu/step_cpu.h"

#include <algorithm>

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

    // Pass 1: psi_i <- b psi_i + a d_i u, in the layers of axis i only.
    void advance_psi() {
        for (int ax = 0; ax < 3; ++ax) {
            if (ax == 1 && NDIM == 2) continue;
            if (!B.pml_lo[ax] && !B.pml_hi[ax]) continue;
            const T* a = A.a[ax];
            const T* b = A.b[ax];
            T* psi = A.psi[ax];
            const long st = s[ax];
            const T ih = A.inv_h[ax];
#pragma omp parallel for collapse(2) schedule(static)
            for (int iz = 0; iz < B.nz; ++iz)
                for (int iy = 0; iy < B.ny; ++iy) {
                    const int c[3] = {0, iy, iz};
                    if (ax != 0 && !in_layer(c[ax], n[ax], B.pml_lo[ax], B.pml_hi[ax])) continue;
                    for (int ix = 0; ix < B.nx; ++ix) {
                        if (ax == 0 && !in_layer(ix, n[0], B.pml_lo[0], B.pml_hi[0])) continue;
                        const int k = ax == 0 ? ix : c[ax];
                        const long p = B.at(ix, iy, iz);
                        psi[p] = b[k] * psi[p] + a[k] * stencil::d1_diff(A.u + p, st) * ih;
                    }
                }
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

    // The C-PML update of one point.
    void layer_point(int ix, int iy, int iz) {
        const long p = B.at(ix, iy, iz);
        const int c[3] = {ix, iy, iz};
        T lap = 0;
        for (int ax = 0; ax < 3; ++ax) {
            if (ax == 1 && NDIM == 2) continue;
            const T d2 = (T(stencil::c2(0)) * A.u[p] + stencil::d2_wings(A.u + p, s[ax])) * A.inv_h2[ax];
            if (A.psi[ax] && in_layer_zone(c[ax], n[ax], B.pml_lo[ax], B.pml_hi[ax])) {
                const T t = d2 + stencil::d1_diff(A.psi[ax] + p, s[ax]) * A.inv_h[ax];
                T& z = A.zeta[ax][p];
                z = A.b[ax][c[ax]] * z + A.a[ax][c[ax]] * t;
                lap += t + z;
            } else {
                lap += d2;
            }
        }
        A.w[p] = T(2) * A.u[p] - A.w[p] + A.vdt2[p] * lap;
    }

    void run() {
        if (B.has_pml()) advance_psi();
        const int xlo = B.pml_lo[0] ? B.pml_lo[0] + R : 0;
        const int xhi = B.pml_hi[0] ? B.nx - B.pml_hi[0] - R : B.nx;
#pragma omp parallel for collapse(2) schedule(static)
        for (int iz = 0; iz < B.nz; ++iz)
            for (int iy = 0; iy < B.ny; ++iy) {
                const bool row_in_layers =
                    in_layer_zone(iz, n[2], B.pml_lo[2], B.pml_hi[2]) ||
                    (NDIM == 3 && in_layer_zone(iy, n[1], B.pml_lo[1], B.pml_hi[1]));
                if (row_in_layers || xlo >= xhi) {
                    for (int ix = 0; ix < B.nx; ++ix) layer_point(ix, iy, iz);
                    continue;
                }
                for (int ix = 0; ix < xlo; ++ix) layer_point(ix, iy, iz);
                interior_row(B.at(0, iy, iz), xlo, xhi);
                for (int ix = xhi; ix < B.nx; ++ix) layer_point(ix, iy, iz);
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

template <class T>
void step_cpu(const StepArgs<T>& args) {
    if (args.box.ndim == 3) Stepper<T, 3>(args).run();
    else Stepper<T, 2>(args).run();
}

template void step_cpu<float>(const StepArgs<float>&);
template void step_cpu<double>(const StepArgs<double>&);
template void free_surface_cpu<float>(const Box&, float*);
template void free_surface_cpu<double>(const Box&, double*);

}  // namespace rtm::kernels
