#include "kernels/cuda/field_ops_cuda.h"

#include <algorithm>
#include <cstdint>

#include "core/bfloat16.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/sm_count.h"
#include "kernels/cuda/window_stencils.cuh"

namespace rtm::kernels::cuda {

namespace {

// Non-finite: every exponent bit set (infinity or NaN); a bit test, whatever the math flags.
__device__ __forceinline__ bool nonfinite(float x) { return (__float_as_uint(x) & 0x7f800000u) == 0x7f800000u; }
__device__ __forceinline__ bool nonfinite(double x) {
    return (__double_as_longlong(x) & 0x7ff0000000000000LL) == 0x7ff0000000000000LL;
}

// Rows (iy, iz, member) spread over the blocks, x over the threads; any thread that
// finds a non-finite computed point writes 1 (every writer writes the same value).
template <class T>
__global__ void nonfinite_kernel(Box B, const T* __restrict__ f, long rows, int* flag) {
    bool bad = false;
    for (long r = blockIdx.x; r < rows; r += gridDim.x) {
        const int iy = int(r % B.ny);
        const long zm = r / B.ny;
        const int iz = int(zm % B.nz);
        const T* row = f + long(B.padded_size()) * (zm / B.nz) + B.at(0, iy, iz);
        for (int ix = threadIdx.x; ix < B.nx; ix += blockDim.x) bad |= nonfinite(row[ix]);
    }
    if (bad) *flag = 1;
}

// The window node of a window kernel's thread (window_members' grid: x along a row, y the
// members' rows, z the planes): its window coordinates and member, i its index in one
// member's window, im in the members' windows one after another, p its padded index in
// the member's box; `in` when ix lies in the window.
struct WindowNode {
    int ix, iy, iz, m;
    long i, im, p;
    bool in;
};
__device__ __forceinline__ WindowNode window_node(const Box& B, Index3 o, int nx, int ny) {
    WindowNode n;
    n.ix = blockIdx.x * blockDim.x + threadIdx.x;
    n.m = blockIdx.y / ny;
    n.iy = blockIdx.y % ny;
    n.iz = blockIdx.z;
    n.in = n.ix < nx;
    n.i = (long(n.iz) * ny + n.iy) * nx + n.ix;
    n.im = n.i + n.m * long(nx) * ny * gridDim.z;
    n.p = B.at(o.x + n.ix, o.y + n.iy, o.z + n.iz) + n.m * long(B.padded_size());
    return n;
}

template <class T>
__global__ void add_window_kernel(Box B, Index3 o, int nx, int ny, int nz, const T* __restrict__ coef,
                                  const T* __restrict__ f, T* u) {
    const WindowNode n = window_node(B, o, nx, ny);
    if (!n.in) return;
    u[n.p] += T(double(coef[n.i]) * double(f[n.im]));
}

template <class T>
__global__ void gather_kernel(const T* __restrict__ f, const long* __restrict__ idx, std::size_t n, float* dst) {
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += std::size_t(gridDim.x) * blockDim.x)
        dst[i] = float(f[idx[i]]);
}

template <class T>
__global__ void scatter_kernel(const float* __restrict__ src, const long* __restrict__ idx, std::size_t n, T* f) {
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += std::size_t(gridDim.x) * blockDim.x)
        f[idx[i]] = T(src[i]);
}

template <class T>
__global__ void pack_window_kernel(Box B, Index3 o, int nx, int ny, const T* __restrict__ u, void* dst, bool bf16) {
    const WindowNode n = window_node(B, o, nx, ny);
    if (!n.in) return;
    const T v = u[n.p];
    if (bf16) static_cast<std::uint16_t*>(dst)[n.im] = to_bf16(float(v));
    else static_cast<T*>(dst)[n.im] = v;
}

template <class T>
__global__ void unpack_window_kernel(Box B, Index3 o, int nx, int ny, const void* src, bool bf16, T* u) {
    const WindowNode n = window_node(B, o, nx, ny);
    if (!n.in) return;
    u[n.p] = bf16 ? T(from_bf16(static_cast<const std::uint16_t*>(src)[n.im])) : static_cast<const T*>(src)[n.im];
}

template <class T>
__global__ void correlate_window_kernel(Box B, Index3 o, int nx, int ny, const T* __restrict__ us,
                                        const T* __restrict__ u, double w, double* __restrict__ image,
                                        double* __restrict__ illum) {
    const WindowNode n = window_node(B, o, nx, ny);
    if (!n.in) return;
    const double s = double(us[n.p]), ws = __dmul_rn(w, s);
    image[n.im] = __dadd_rn(image[n.im], __dmul_rn(ws, double(u[n.p])));
    illum[n.im] = __dadd_rn(illum[n.im], __dmul_rn(ws, s));
}

template <class T>
__global__ void born_source_window_kernel(Box B, Index3 o, int nx, int ny, int nz, double hx, double hy, double hz,
                                          const double* __restrict__ dm_v2, const T* __restrict__ u0,
                                          const T* __restrict__ coef, T* u) {
    const WindowNode n = window_node(B, o, nx, ny);
    if (!n.in) return;
    const long st[3] = {1, B.sy(), B.sz()};
    const int c[3] = {n.ix, n.iy, n.iz}, lo[3] = {0, 0, 0}, hi[3] = {nx, ny, nz};
    const double h[3] = {hx, hy, hz};
    const T g = T(-dm_v2[n.im] * window_laplacian(u0 + n.p, st, c, lo, hi, h, ny > 1));
    u[n.p] += T(double(coef[n.i]) * double(g));
}

template <class T>
__global__ void image_window_kernel(Box B, WindowImaging wi, const T* __restrict__ us, const T* __restrict__ usp,
                                    const T* __restrict__ u, const T* __restrict__ up, const double* __restrict__ v2,
                                    double* __restrict__ image, double* __restrict__ illum) {
    const WindowNode n = window_node(B, wi.origin, wi.nx, wi.ny);
    if (!n.in) return;
    const int ix = n.ix, iy = n.iy, iz = n.iz;
    const long i = n.i, im = n.im, p = n.p;  // v2's node (shared), the member's image node, u's
    const long st[3] = {1, B.sy(), B.sz()};
    // Nodes read along each axis: the window's, and along z the planes it continues into.
    const int c[3] = {ix, iy, iz}, lo[3] = {0, 0, -wi.z_before}, hi[3] = {wi.nx, wi.ny, wi.nz + wi.z_after};
    const double s = double(us[p]);
    double term = 0;
    if (wi.born) {
        term = -(v2[i] * window_laplacian(us + p, st, c, lo, hi, wi.h, wi.ny > 1) * double(u[p]));
    } else {
        double gg = 0;
        for (int ax = 0; ax < 3; ++ax)
            if (ax != 1 || wi.ny > 1)
                gg += window_d1(us + p, st[ax], c[ax], lo[ax], hi[ax], wi.h[ax]) *
                      window_d1(u + p, st[ax], c[ax], lo[ax], hi[ax], wi.h[ax]);
        const double srate = (s - double(usp[p])) / wi.dt, lrate = (double(u[p]) - double(up[p])) / wi.dt;
        term = srate * lrate / v2[i] - gg;
    }
    image[im] += wi.w * term;
    illum[im] += wi.w * s * s;
}

}  // namespace

template <class T>
void nonfinite_cuda(const Box& box, const T* f, int batch, int* flag, cudaStream_t stream) {
    const long rows = long(box.ny) * box.nz * batch;
    if (rows <= 0) return;
    const unsigned blocks = unsigned(std::min<long>(rows, long(sm_count()) * 16));
    nonfinite_kernel<T><<<blocks, 128, 0, stream>>>(box, f, rows, flag);
    RTM_CUDA_CHECK_LAUNCH("nonfinite_kernel");
}

// Launches launch(m0, members, grid) for groups of batch members whose window rows
// (ny per member, the grid's y dimension) fit its 65535 blocks: the window kernels read
// the member from blockIdx.y / ny.
template <class L>
void window_members(int nx, int ny, int nz, int batch, L launch) {
    if (nx <= 0 || ny <= 0 || nz <= 0) return;
    const int per = std::max(1, 65535 / ny);
    for (int m0 = 0; m0 < batch; m0 += per) {
        const int members = std::min(per, batch - m0);
        launch(m0, dim3((nx + 127) / 128, unsigned(ny * members), unsigned(nz)));
    }
}

template <class T>
void add_window_cuda(const Box& box, Index3 origin, int nx, int ny, int nz, const T* coef, const T* f, T* u,
                     cudaStream_t stream, int batch) {
    const long ws = long(nx) * ny * nz, ps = long(box.padded_size());
    window_members(nx, ny, nz, batch, [&](int m0, dim3 grid) {
        add_window_kernel<T><<<grid, 128, 0, stream>>>(box, origin, nx, ny, nz, coef, f + m0 * ws, u + m0 * ps);
        RTM_CUDA_CHECK_LAUNCH("add_window_kernel");
    });
}

// Blocks of 256 threads for the grid-stride loops over n points: at most 16 per SM.
static unsigned point_blocks(std::size_t n) {
    return unsigned(std::min<std::size_t>((n + 255) / 256, std::size_t(sm_count()) * 16));
}

template <class T>
void gather_cuda(const T* f, const long* index, std::size_t n, float* dst, cudaStream_t stream) {
    if (!n) return;
    gather_kernel<T><<<point_blocks(n), 256, 0, stream>>>(f, index, n, dst);
    RTM_CUDA_CHECK_LAUNCH("gather_kernel");
}

template <class T>
void scatter_cuda(const float* src, const long* index, std::size_t n, T* f, cudaStream_t stream) {
    if (!n) return;
    scatter_kernel<T><<<point_blocks(n), 256, 0, stream>>>(src, index, n, f);
    RTM_CUDA_CHECK_LAUNCH("scatter_kernel");
}

template <class T>
void pack_window_cuda(const Box& box, Index3 origin, int nx, int ny, int nz, const T* u, void* dst, bool bf16,
                      cudaStream_t stream, int batch) {
    const long ws = long(nx) * ny * nz, ps = long(box.padded_size());
    const std::size_t bytes = bf16 ? 2 : sizeof(T);
    window_members(nx, ny, nz, batch, [&](int m0, dim3 grid) {
        pack_window_kernel<T><<<grid, 128, 0, stream>>>(box, origin, nx, ny, u + m0 * ps,
                                                        static_cast<std::uint8_t*>(dst) + m0 * ws * bytes, bf16);
        RTM_CUDA_CHECK_LAUNCH("pack_window_kernel");
    });
}

template <class T>
void unpack_window_cuda(const Box& box, Index3 origin, int nx, int ny, int nz, const void* src, bool bf16, T* u,
                        cudaStream_t stream, int batch) {
    const long ws = long(nx) * ny * nz, ps = long(box.padded_size());
    const std::size_t bytes = bf16 ? 2 : sizeof(T);
    window_members(nx, ny, nz, batch, [&](int m0, dim3 grid) {
        unpack_window_kernel<T><<<grid, 128, 0, stream>>>(
            box, origin, nx, ny, static_cast<const std::uint8_t*>(src) + m0 * ws * bytes, bf16, u + m0 * ps);
        RTM_CUDA_CHECK_LAUNCH("unpack_window_kernel");
    });
}

template <class T>
void correlate_window_cuda(const Box& box, Index3 origin, int nx, int ny, int nz, const T* us, const T* u,
                           double w, double* image, double* illum, cudaStream_t stream, int batch) {
    const long ws = long(nx) * ny * nz, ps = long(box.padded_size());
    window_members(nx, ny, nz, batch, [&](int m0, dim3 grid) {
        correlate_window_kernel<T><<<grid, 128, 0, stream>>>(box, origin, nx, ny, us + m0 * ps, u + m0 * ps, w,
                                                             image + m0 * ws, illum + m0 * ws);
        RTM_CUDA_CHECK_LAUNCH("correlate_window_kernel");
    });
}

template <class T>
void born_source_window_cuda(const Box& box, Index3 origin, int nx, int ny, int nz, const double h[3],
                             const double* dm_v2, const T* u0, const T* coef, T* u, cudaStream_t stream, int batch) {
    const long ws = long(nx) * ny * nz, ps = long(box.padded_size());
    window_members(nx, ny, nz, batch, [&](int m0, dim3 grid) {
        born_source_window_kernel<T><<<grid, 128, 0, stream>>>(box, origin, nx, ny, nz, h[0], h[1], h[2],
                                                               dm_v2 + m0 * ws, u0 + m0 * ps, coef, u + m0 * ps);
        RTM_CUDA_CHECK_LAUNCH("born_source_window_kernel");
    });
}

template <class T>
void image_window_cuda(const Box& box, const WindowImaging& wi, const T* us, const T* usp, const T* u, const T* up,
                       const double* v2, double* image, double* illum, cudaStream_t stream, int batch) {
    const long ws = long(wi.nx) * wi.ny * wi.nz, ps = long(box.padded_size());
    window_members(wi.nx, wi.ny, wi.nz, batch, [&](int m0, dim3 grid) {
        image_window_kernel<T><<<grid, 128, 0, stream>>>(box, wi, us + m0 * ps, usp + m0 * ps, u + m0 * ps,
                                                         up + m0 * ps, v2, image + m0 * ws, illum + m0 * ws);
        RTM_CUDA_CHECK_LAUNCH("image_window_kernel");
    });
}

#define RTM_INSTANTIATE(T)                                                                                   \
    template void nonfinite_cuda<T>(const Box&, const T*, int, int*, cudaStream_t);                          \
    template void add_window_cuda<T>(const Box&, Index3, int, int, int, const T*, const T*, T*, cudaStream_t, int); \
    template void gather_cuda<T>(const T*, const long*, std::size_t, float*, cudaStream_t);                   \
    template void scatter_cuda<T>(const float*, const long*, std::size_t, T*, cudaStream_t);                  \
    template void pack_window_cuda<T>(const Box&, Index3, int, int, int, const T*, void*, bool, cudaStream_t, int); \
    template void unpack_window_cuda<T>(const Box&, Index3, int, int, int, const void*, bool, T*, cudaStream_t, int); \
    template void correlate_window_cuda<T>(const Box&, Index3, int, int, int, const T*, const T*, double,       \
                                           double*, double*, cudaStream_t, int);                               \
    template void born_source_window_cuda<T>(const Box&, Index3, int, int, int, const double[3], const double*, \
                                             const T*, const T*, T*, cudaStream_t, int);                     \
    template void image_window_cuda<T>(const Box&, const WindowImaging&, const T*, const T*, const T*, const T*, \
                                       const double*, double*, double*, cudaStream_t, int);
RTM_INSTANTIATE(float)
RTM_INSTANTIATE(double)

}  // namespace rtm::kernels::cuda
