// VTI/TTI Born modelling and its adjoint on a window (tti_window_cuda.h): one thread per
// window node, blocks of 128 along x, grid (x blocks, ny, nz).
#include "kernels/cuda/tti_window_cuda.h"

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/window_stencils.cuh"

namespace rtm::kernels::cuda {

namespace {

// This thread's window node: its coordinates c, window index i and padded index p.
struct Node {
    int c[3];
    long i, p;
};
__device__ __forceinline__ bool node_of(const Box& B, Index3 o, int nx, int ny, Node& n) {
    n.c[0] = blockIdx.x * blockDim.x + threadIdx.x;
    n.c[1] = blockIdx.y;
    n.c[2] = blockIdx.z;
    if (n.c[0] >= nx) return false;
    n.i = (long(n.c[2]) * ny + n.c[1]) * nx + n.c[0];
    n.p = B.at(o.x + n.c[0], o.y + n.c[1], o.z + n.c[2]);
    return true;
}

dim3 window_grid(int nx, int ny, int nz) { return dim3((nx + 127) / 128, unsigned(ny), unsigned(nz)); }

// Pass 1 (TTI): fp[a] = n_a (n . grad p), fq[a] = (grad q)_a - n_a (n . grad q), as the twin.
template <class T>
__global__ void window_flux_kernel(Box B, Index3 o, int nx, int ny, int nz, double hx, double hy, double hz,
                                   const T* __restrict__ p, const T* __restrict__ q, const T* __restrict__ a0,
                                   const T* __restrict__ a1, const T* __restrict__ a2, double* __restrict__ flux) {
    Node n;
    if (!node_of(B, o, nx, ny, n)) return;
    const long ws = long(nx) * ny * nz, st[3] = {1, B.sy(), B.sz()};
    const int hi[3] = {nx, ny, nz};
    const double h[3] = {hx, hy, hz};
    double gp[3] = {0, 0, 0}, gq[3] = {0, 0, 0};
    for (int a = 0; a < 3; ++a)
        if (a != 1 || ny > 1) {
            gp[a] = window_d1(p + n.p, st[a], n.c[a], 0, hi[a], h[a]);
            gq[a] = window_d1(q + n.p, st[a], n.c[a], 0, hi[a], h[a]);
        }
    // 2D has no y axis array; its y gradient is zero, so n_y does not matter there.
    const double ax[3] = {double(a0[n.p]), ny > 1 ? double(a1[n.p]) : 0.0, double(a2[n.p])};
    const double np = ax[0] * gp[0] + ax[1] * gp[1] + ax[2] * gp[2];
    const double nq = ax[0] * gq[0] + ax[1] * gq[1] + ax[2] * gq[2];
    for (int a = 0; a < 3; ++a) {
        flux[a * ws + n.i] = ax[a] * np;
        flux[(3 + a) * ws + n.i] = gq[a] - ax[a] * nq;
    }
}

// Pass 2: the compact second derivatives minus the fluxes' divergences (TTI), or the
// second derivatives across (H) and along (V) the vertical axis (VTI: flux null).
template <class T>
__global__ void window_operator_kernel(Box B, Index3 o, int nx, int ny, int nz, double hx, double hy, double hz,
                                       const T* __restrict__ p, const T* __restrict__ q,
                                       const double* __restrict__ flux, double* __restrict__ hp,
                                       double* __restrict__ vq) {
    Node n;
    if (!node_of(B, o, nx, ny, n)) return;
    const long ws = long(nx) * ny * nz, st[3] = {1, B.sy(), B.sz()}, wst[3] = {1, nx, long(nx) * ny};
    const int hi[3] = {nx, ny, nz};
    const double h[3] = {hx, hy, hz};
    double sp = 0, sq = 0;
    for (int a = 0; a < 3; ++a) {
        if (a == 1 && ny == 1) continue;
        if (flux) {
            sp += window_d2(p + n.p, st[a], n.c[a], 0, hi[a], h[a]) -
                  window_d1(flux + a * ws + n.i, wst[a], n.c[a], 0, hi[a], h[a]);
            sq += window_d2(q + n.p, st[a], n.c[a], 0, hi[a], h[a]) -
                  window_d1(flux + (3 + a) * ws + n.i, wst[a], n.c[a], 0, hi[a], h[a]);
        } else if (a == 2) {
            sq += window_d2(q + n.p, st[a], n.c[a], 0, hi[a], h[a]);
        } else {
            sp += window_d2(p + n.p, st[a], n.c[a], 0, hi[a], h[a]);
        }
    }
    hp[n.i] = sp;
    vq[n.i] = sq;
}

template <class T>
__global__ void born_source_kernel(Box B, Index3 o, int nx, int ny, int nz, const double* __restrict__ dm_v2,
                                   const double* __restrict__ hp, const double* __restrict__ vq,
                                   const double* __restrict__ w, T* __restrict__ p, T* __restrict__ q) {
    Node n;
    if (!node_of(B, o, nx, ny, n)) return;
    const long ws = long(nx) * ny * nz;
    const double g[2] = {-dm_v2[n.i] * hp[n.i], -dm_v2[n.i] * vq[n.i]};
    const double wpp = w[n.i], wpq = w[ws + n.i], wqq = w[2 * ws + n.i];
    const double coef[2][2] = {{wpp, wpq}, {wpq, wqq}};
    T* f[2] = {p, q};
    for (int k = 0; k < 2; ++k) {
        double sum = 0;
        for (int j = 0; j < 2; ++j)
            if (g[j] != 0) sum += coef[k][j] * g[j];
        if (sum != 0) f[k][n.p] += T(sum);
    }
}

template <class T>
__global__ void born_adjoint_kernel(Box B, Index3 o, int nx, int ny, double weight, const double* __restrict__ v2,
                                    const double* __restrict__ hp, const double* __restrict__ vq,
                                    const T* __restrict__ p, const T* __restrict__ q, const T* __restrict__ ps,
                                    const T* __restrict__ qs, double* __restrict__ image,
                                    double* __restrict__ illum) {
    Node n;
    if (!node_of(B, o, nx, ny, n)) return;
    image[n.i] -= weight * (v2[n.i] * (hp[n.i] * double(p[n.p]) + vq[n.i] * double(q[n.p])));
    const double s = 0.5 * (double(ps[n.p]) + double(qs[n.p]));
    illum[n.i] += weight * s * s;
}

}  // namespace

template <class T>
void anisotropic_operator_cuda(const Box& box, Index3 origin, int nx, int ny, int nz, const double h[3], const T* p,
                               const T* q, const T* const axis[3], double* hp, double* vq, double* flux,
                               cudaStream_t stream) {
    const dim3 grid = window_grid(nx, ny, nz);
    const bool tilted = axis[0] != nullptr;
    if (tilted) {
        window_flux_kernel<T><<<grid, 128, 0, stream>>>(box, origin, nx, ny, nz, h[0], h[1], h[2], p, q, axis[0],
                                                        axis[1], axis[2], flux);
        RTM_CUDA_CHECK_LAUNCH("window_flux_kernel");
    }
    window_operator_kernel<T><<<grid, 128, 0, stream>>>(box, origin, nx, ny, nz, h[0], h[1], h[2], p, q,
                                                        tilted ? flux : nullptr, hp, vq);
    RTM_CUDA_CHECK_LAUNCH("window_operator_kernel");
}

template <class T>
void born_source_tti_cuda(const Box& box, Index3 origin, int nx, int ny, int nz, const double* dm_v2,
                          const double* hp, const double* vq, const double* w, T* p, T* q, cudaStream_t stream) {
    born_source_kernel<T><<<window_grid(nx, ny, nz), 128, 0, stream>>>(box, origin, nx, ny, nz, dm_v2, hp, vq, w, p, q);
    RTM_CUDA_CHECK_LAUNCH("born_source_kernel");
}

template <class T>
void born_adjoint_tti_cuda(const Box& box, Index3 origin, int nx, int ny, int nz, double weight, const double* v2,
                           const double* hp, const double* vq, const T* p, const T* q, const T* ps, const T* qs,
                           double* image, double* illum, cudaStream_t stream) {
    born_adjoint_kernel<T><<<window_grid(nx, ny, nz), 128, 0, stream>>>(box, origin, nx, ny, weight, v2, hp, vq, p, q,
                                                                       ps, qs, image, illum);
    RTM_CUDA_CHECK_LAUNCH("born_adjoint_kernel");
}

#define RTM_TTI_WINDOW(T)                                                                                            \
    template void anisotropic_operator_cuda<T>(const Box&, Index3, int, int, int, const double*, const T*, const T*, \
                                               const T* const*, double*, double*, double*, cudaStream_t);            \
    template void born_source_tti_cuda<T>(const Box&, Index3, int, int, int, const double*, const double*,            \
                                          const double*, const double*, T*, T*, cudaStream_t);                       \
    template void born_adjoint_tti_cuda<T>(const Box&, Index3, int, int, int, double, const double*, const double*,  \
                                           const double*, const T*, const T*, const T*, const T*, double*, double*,  \
                                           cudaStream_t);
RTM_TTI_WINDOW(float)
RTM_TTI_WINDOW(double)

}  // namespace rtm::kernels::cuda
