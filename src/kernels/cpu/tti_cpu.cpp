// CPU time step of the pseudo-acoustic VTI/TTI system (see tti_cpu.h and
// docs/anisotropy.md for the equations, bytes and flops).
#include "kernels/cpu/tti_cpu.h"

#include "kernels/cpu/step_cpu.h"

namespace rtm::kernels {

using stencil::R;

namespace {

// The update of one point from H p and V q.
template <class T>
inline void update(const TtiStepArgs<T>& A, long i, T hp, T vq) {
    const T k = A.damp ? A.damp[i] : T(0);
    A.wp[i] = (T(2) * A.p[i] - (T(1) - k) * A.wp[i] + (A.cpp[i] * hp + A.cpq[i] * vq)) / (T(1) + k);
    A.wq[i] = (T(2) * A.q[i] - (T(1) - k) * A.wq[i] + (A.cpq[i] * hp + A.cqq[i] * vq)) / (T(1) + k);
}

template <class T, int NDIM>
void vti(const TtiStepArgs<T>& A) {
    const Box& B = A.box;
    const long sy = B.sy(), sz = B.sz();
    const T c0 = T(stencil::c2(0));
#pragma omp parallel for collapse(2) schedule(static)
    for (int iz = 0; iz < B.nz; ++iz)
        for (int iy = 0; iy < B.ny; ++iy) {
            const long row = B.at(0, iy, iz);
#pragma omp simd
            for (int ix = 0; ix < B.nx; ++ix) {
                const long i = row + ix;
                T hp = (c0 * A.p[i] + stencil::d2_wings(A.p + i, 1)) * A.inv_h2[0];
                if constexpr (NDIM == 3) hp += (c0 * A.p[i] + stencil::d2_wings(A.p + i, sy)) * A.inv_h2[1];
                const T vq = (c0 * A.q[i] + stencil::d2_wings(A.q + i, sz)) * A.inv_h2[2];
                update(A, i, hp, vq);
            }
        }
}

// Under a free surface pass 1's z fluxes are even about plane 0 (docs/anisotropy.md, "A
// free surface": p and q are odd about it, the medium taken mirrored above it): planes
// 1..R are copied into the halo above, where pass 2 reads them.
template <class T>
void mirror_z_fluxes(const TtiStepArgs<T>& A) {
    const Box& B = A.box;
#pragma omp parallel for schedule(static)
    for (int iy = 0; iy < B.ny; ++iy)
        for (int ix = 0; ix < B.nx; ++ix)
            for (int k = 1; k <= R; ++k)
                for (int c : {2, 5}) A.flux[c][B.at(ix, iy, -k)] = A.flux[c][B.at(ix, iy, k)];
}

template <class T, int NDIM>
void tti(const TtiStepArgs<T>& A, const std::function<void()>& between) {
    const Box& B = A.box;
    const long st[3] = {1, B.sy(), B.sz()};
    constexpr int axes[3] = {0, NDIM == 3 ? 1 : 2, 2};  // the first NDIM are the grid's axes
    // Pass 1: the projected gradients n (n . grad p) and (I - n n^T) grad q.
#pragma omp parallel for collapse(2) schedule(static)
    for (int iz = 0; iz < B.nz; ++iz)
        for (int iy = 0; iy < B.ny; ++iy) {
            const long row = B.at(0, iy, iz);
#pragma omp simd
            for (int ix = 0; ix < B.nx; ++ix) {
                const long i = row + ix;
                T gp[3] = {0, 0, 0}, gq[3] = {0, 0, 0};
                T sp = 0, sq = 0;
                for (int k = 0; k < NDIM; ++k) {
                    const int ax = axes[k];
                    gp[ax] = stencil::d1_diff(A.p + i, st[ax]) * A.inv_h[ax];
                    gq[ax] = stencil::d1_diff(A.q + i, st[ax]) * A.inv_h[ax];
                    sp += A.axis[ax][i] * gp[ax];
                    sq += A.axis[ax][i] * gq[ax];
                }
                for (int k = 0; k < NDIM; ++k) {
                    const int ax = axes[k];
                    A.flux[ax][i] = A.axis[ax][i] * sp;
                    A.flux[3 + ax][i] = gq[ax] - A.axis[ax][i] * sq;
                }
            }
        }
    if (B.free_surface) mirror_z_fluxes(A);
    if (between) between();
    // Pass 2: the compact Laplacians minus the divergences of pass 1's fluxes, and the update.
#pragma omp parallel for collapse(2) schedule(static)
    for (int iz = 0; iz < B.nz; ++iz)
        for (int iy = 0; iy < B.ny; ++iy) {
            const long row = B.at(0, iy, iz);
#pragma omp simd
            for (int ix = 0; ix < B.nx; ++ix) {
                const long i = row + ix;
                T hp = T(stencil::c2(0)) * (A.inv_h2[0] + A.inv_h2[1] + A.inv_h2[2]) * A.p[i];
                T vq = T(stencil::c2(0)) * (A.inv_h2[0] + A.inv_h2[1] + A.inv_h2[2]) * A.q[i];
                for (int k = 0; k < NDIM; ++k) {
                    const int ax = axes[k];
                    hp += stencil::d2_wings(A.p + i, st[ax]) * A.inv_h2[ax];
                    vq += stencil::d2_wings(A.q + i, st[ax]) * A.inv_h2[ax];
                }
                for (int k = 0; k < NDIM; ++k) {
                    const int ax = axes[k];
                    hp -= stencil::d1_diff(A.flux[ax] + i, st[ax]) * A.inv_h[ax];
                    vq -= stencil::d1_diff(A.flux[3 + ax] + i, st[ax]) * A.inv_h[ax];
                }
                update(A, i, hp, vq);
            }
        }
}

}  // namespace

template <class T>
void tti_step_cpu(const TtiStepArgs<T>& args, const std::function<void(int)>& between) {
    const long stride = long(args.box.padded_size());
    for (int m = 0; m < args.batch; ++m) {
        TtiStepArgs<T> one = args;
        one.batch = 1;
        one.p += m * stride;
        one.q += m * stride;
        one.wp += m * stride;
        one.wq += m * stride;
        const bool three = one.box.ndim == 3;
        const std::function<void()> here = between ? std::function<void()>([&] { between(m); }) : nullptr;
        if (one.axis[0]) three ? tti<T, 3>(one, here) : tti<T, 2>(one, here);
        else three ? vti<T, 3>(one) : vti<T, 2>(one);
        if (one.box.free_surface) {
            free_surface_cpu(one.box, one.wp);
            free_surface_cpu(one.box, one.wq);
        }
    }
}

template void tti_step_cpu<float>(const TtiStepArgs<float>&, const std::function<void(int)>&);
template void tti_step_cpu<double>(const TtiStepArgs<double>&, const std::function<void(int)>&);

}  // namespace rtm::kernels
