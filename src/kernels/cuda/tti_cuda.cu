// CUDA VTI/TTI step: the two-pass baseline and the SWiC single-pass kernel (tti_cuda.h
// gives the equations, bytes and flops; kernels/cpu/tti_cpu.cpp is the twin).
#include "kernels/cuda/tti_cuda.h"

#include <algorithm>
#include <limits>
#include <map>
#include <mutex>
#include <string>

#include "core/error.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/step_cuda.h"
#include "physics/stencil.h"

namespace rtm::kernels::cuda {

namespace {

using stencil::R;

template <class T>
__device__ __forceinline__ T ld(const T* p) {
    return __ldg(p);
}

// u[n+1] from u[n], u[n-1], the damping k and W L u (the twin's formula), dividing only
// where damped: x / 1 is x exactly, so the undamped interior skips the division's
// instructions with the same bits.
template <class T>
__device__ __forceinline__ T advance(T u, T prev, T k, T wl) {
    const T num = T(2) * u - (T(1) - k) * prev + wl;
    return k == T(0) ? num : num / (T(1) + k);
}

// The update of one point from H p and V q (the twin's `update`).
template <class T>
__device__ __forceinline__ void update(const TtiStepArgs<T>& A, T* wp, T* wq, long i, T pi, T qi, T hp, T vq) {
    const T k = A.damp ? ld(A.damp + i) : T(0);
    const T cpp = ld(A.cpp + i), cpq = ld(A.cpq + i), cqq = ld(A.cqq + i);
    wp[i] = advance(pi, wp[i], k, cpp * hp + cpq * vq);
    wq[i] = advance(qi, wq[i], k, cpq * hp + cqq * vq);
}

// One thread per computed point: blocks of 32 x 4 over (x, z), grid.z over y.
constexpr int kPx = 32, kPz = 4;

__device__ __forceinline__ bool point_of(const Box& B, int& ix, int& iy, int& iz) {
    ix = blockIdx.x * kPx + threadIdx.x;
    iz = blockIdx.y * kPz + threadIdx.y;
    iy = blockIdx.z;
    return ix < B.nx && iz < B.nz;
}

template <class T, int NDIM>
__global__ void vti_kernel(TtiStepArgs<T> A, const T* p, const T* q, T* wp, T* wq) {
    const Box& B = A.box;
    int ix, iy, iz;
    if (!point_of(B, ix, iy, iz)) return;
    const long i = B.at(ix, iy, iz);
    const T c0 = T(stencil::c2(0));
    const T pi = ld(p + i), qi = ld(q + i);
    T hp = (c0 * pi + stencil::d2_wings(p + i, 1)) * A.inv_h2[0];
    if constexpr (NDIM == 3) hp += (c0 * pi + stencil::d2_wings(p + i, B.sy())) * A.inv_h2[1];
    const T vq = (c0 * qi + stencil::d2_wings(q + i, B.sz())) * A.inv_h2[2];
    update(A, wp, wq, i, pi, qi, hp, vq);
}

// Two-pass, pass 1: f[0..2] = n (n . grad p), f[3..5] = (I - n n^T) grad q.
template <class T, int NDIM>
__global__ void tti_pass1_kernel(TtiStepArgs<T> A, const T* p, const T* q) {
    const Box& B = A.box;
    int ix, iy, iz;
    if (!point_of(B, ix, iy, iz)) return;
    const long i = B.at(ix, iy, iz);
    const long st[3] = {1, B.sy(), B.sz()};
    constexpr int axes[3] = {0, NDIM == 3 ? 1 : 2, 2};
    T gq[3] = {0, 0, 0}, n[3] = {0, 0, 0};
    T sp = 0, sq = 0;
#pragma unroll
    for (int k = 0; k < NDIM; ++k) {
        const int ax = axes[k];
        n[ax] = ld(A.axis[ax] + i);
        const T gp = stencil::d1_diff(p + i, st[ax]) * A.inv_h[ax];
        gq[ax] = stencil::d1_diff(q + i, st[ax]) * A.inv_h[ax];
        sp += n[ax] * gp;
        sq += n[ax] * gq[ax];
    }
#pragma unroll
    for (int k = 0; k < NDIM; ++k) {
        const int ax = axes[k];
        A.flux[ax][i] = n[ax] * sp;
        A.flux[3 + ax][i] = gq[ax] - n[ax] * sq;
    }
}

// Two-pass, pass 2: the compact Laplacians minus the divergences of the fluxes, and the update.
template <class T, int NDIM>
__global__ void tti_pass2_kernel(TtiStepArgs<T> A, const T* p, const T* q, T* wp, T* wq) {
    const Box& B = A.box;
    int ix, iy, iz;
    if (!point_of(B, ix, iy, iz)) return;
    const long i = B.at(ix, iy, iz);
    const long st[3] = {1, B.sy(), B.sz()};
    constexpr int axes[3] = {0, NDIM == 3 ? 1 : 2, 2};
    const T pi = ld(p + i), qi = ld(q + i);
    const T c = T(stencil::c2(0)) * (A.inv_h2[0] + A.inv_h2[1] + A.inv_h2[2]);
    T hp = c * pi, vq = c * qi;
#pragma unroll
    for (int k = 0; k < NDIM; ++k) {
        const int ax = axes[k];
        hp += stencil::d2_wings(p + i, st[ax]) * A.inv_h2[ax];
        vq += stencil::d2_wings(q + i, st[ax]) * A.inv_h2[ax];
    }
#pragma unroll
    for (int k = 0; k < NDIM; ++k) {
        const int ax = axes[k];
        hp -= stencil::d1_diff(static_cast<const T*>(A.flux[ax]) + i, st[ax]) * A.inv_h[ax];
        vq -= stencil::d1_diff(static_cast<const T*>(A.flux[3 + ax]) + i, st[ax]) * A.inv_h[ax];
    }
    update(A, wp, wq, i, pi, qi, hp, vq);
}

// --- SWiC (see tti_cuda.h) ---
// Thread block FX x FY over the flux columns; the shared tile of p and q has a further
// ring of R columns (PX x PY), read from global memory; RY = 0 in 2D (one row). FY3 is
// the 3D block's height: the ring's share of the flux columns falls with it
// (FX FY / (TX TY): 32 x 16, 2.67; 32 x 32, 1.78).
template <int NDIM, int FY3>
struct SwicShape {
    static constexpr int FX = NDIM == 3 ? 32 : 128, FY = NDIM == 3 ? FY3 : 1;
    static constexpr int RY = NDIM == 3 ? R : 0;
    static constexpr int TX = FX - 2 * R, TY = FY - 2 * RY;  // written columns per block
    static constexpr int PX = FX + 2 * R, PY = FY + 2 * RY;
    static constexpr int ring = PX * PY - FX * FY;
    static_assert(ring <= FX * FY, "one ring point per thread at most");
};

// What the update of one point reads besides p, q, H p and V q (loaded a plane ahead).
template <class T>
struct UpdateIn {
    T wp = 0, wq = 0, cpp = 0, cpq = 0, cqq = 0, k = 0;
};
template <class T>
__device__ __forceinline__ UpdateIn<T> update_in(const TtiStepArgs<T>& A, const T* wp, const T* wq, unsigned i) {
    UpdateIn<T> u;
    u.wp = wp[i];
    u.wq = wq[i];
    u.cpp = ld(A.cpp + i);
    u.cpq = ld(A.cpq + i);
    u.cqq = ld(A.cqq + i);
    u.k = A.damp ? ld(A.damp + i) : T(0);
    return u;
}

// Shared tiles, double-buffered by plane parity (two barriers per plane), in dynamic
// shared memory (up to 64 KB in 3D fp32 32 x 32).
template <class T, class S, int NDIM>
struct SwicTiles {
    T p[2][S::PY][S::PX], q[2][S::PY][S::PX];
    T f[2][NDIM - 1][S::FY][S::FX], g[2][NDIM - 1][S::FY][S::FX];  // x (and y) fluxes of p and q
};

// Resident blocks per SM the registers are limited for (__launch_bounds__): in fp32
// 1024 / threads, i.e. 64 registers (more registers and fewer threads lost: 0.77x at
// 512^3 on the H100, docs/performance.md); in fp64 1 (64 registers hold too few doubles:
// 0.17x the two-pass kernel at 256^3 on the H100).
template <class T, int THREADS>
constexpr int swic_min_blocks() {
    return sizeof(T) == 4 ? 1024 / THREADS : 1;
}
template <class T, int NDIM, int FY3>
__global__ void __launch_bounds__(SwicShape<NDIM, FY3>::FX * SwicShape<NDIM, FY3>::FY,
                                  swic_min_blocks<T, SwicShape<NDIM, FY3>::FX * SwicShape<NDIM, FY3>::FY>())
    tti_swic_kernel(TtiStepArgs<T> A, int zchunk, int chunks) {
    using S = SwicShape<NDIM, FY3>;
    constexpr int FX = S::FX, FY = S::FY, RY = S::RY, PX = S::PX;
    extern __shared__ __align__(16) unsigned char smem[];
    auto& sh = *reinterpret_cast<SwicTiles<T, S, NDIM>*>(smem);
    const Box B = A.box;
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * FX + tx;
    const int member = blockIdx.z / chunks, chunk = blockIdx.z % chunks;
    const long off = long(B.padded_size()) * member;
    const T* p = A.p + off;
    const T* q = A.q + off;
    T* wp = A.wp + off;
    T* wq = A.wq + off;
    const int bx = blockIdx.x * S::TX - 2 * R, by = NDIM == 3 ? int(blockIdx.y) * S::TY - 2 * RY : 0;  // tile origin
    const int cx = bx + R + tx, cy = by + RY + ty;  // this thread's column
    const bool col_in = cx >= 0 && cx < B.nx && cy >= 0 && cy < B.ny;
    // A writing row (warp-uniform in 3D: a warp is one row of 32): the rows above and
    // below need only the fluxes, not the Laplacian's wings nor the accumulators.
    const bool row_writes = ty >= RY && ty < FY - RY;
    const bool writes = col_in && row_writes && tx >= R && tx < FX - R;
    // Offsets within a member in 32 bits (swic_kernel checks the box fits): fewer registers
    // and one multiply-add per address; col + iz sz wraps for iz < -R, never loaded.
    const unsigned sz = unsigned(B.sz());
    const unsigned col = col_in ? unsigned(B.at(cx, cy, 0)) : 0;
    const int k0 = chunk * zchunk, k1 = min(B.nz, k0 + zchunk);
    // This thread's point of the ring (tid < ring): full rows above and below the flux
    // columns, then R columns left and right of them.
    int rx = 0, ry = 0;
    if (tid < 2 * RY * PX) {
        ry = tid / PX;
        if (ry >= RY) ry += FY;
        rx = tid % PX;
    } else {
        const int c = (tid - 2 * RY * PX) % (2 * R);
        ry = RY + (tid - 2 * RY * PX) / (2 * R);
        rx = c < R ? c : FX + c;
    }
    const bool ring = tid < S::ring, ring_in = ring && bx + rx >= 0 && bx + rx < B.nx && by + ry >= 0 && by + ry < B.ny;
    const unsigned rcol = ring_in ? unsigned(B.at(bx + rx, by + ry, 0)) : 0;
    auto in_z = [&](int iz) { return iz >= 0 && iz < B.nz; };
    auto load = [&](const T* f, int iz) { return col_in && in_z(iz) ? ld(f + (col + unsigned(iz) * sz)) : T(0); };
    auto load_ring = [&](const T* f, int iz) {
        return ring_in && in_z(iz) ? ld(f + (rcol + unsigned(iz) * sz)) : T(0);
    };

    T qp[2 * R + 1], qq[2 * R + 1];  // input queues: p, q at planes m-R..m+R of the column
    T ap[2 * R + 1], aq[2 * R + 1];  // output queues: H p, V q at planes m-R..m+R
#pragma unroll
    for (int j = 0; j <= 2 * R; ++j) {
        qp[j] = j ? load(p, k0 - 2 * R - 1 + j) : T(0);
        qq[j] = j ? load(q, k0 - 2 * R - 1 + j) : T(0);
        ap[j] = aq[j] = T(0);
    }
    const T ih2x = A.inv_h2[0], ih2y = A.inv_h2[1], ih2z = A.inv_h2[2];
    const T ihx = A.inv_h[0], ihy = A.inv_h[1], ihz = A.inv_h[2];
    const T ccentre = T(stencil::c2(0)) * (ih2x + ih2y + ih2z);
    const int x = tx + R, y = ty + RY;  // this column in the shared tile
    // Loaded a plane ahead of their use: the ring's p and q, the axis, the update's inputs.
    T rp = load_ring(p, k0 - R), rq = load_ring(q, k0 - R);
    T n0 = load(A.axis[0], k0 - R), n1 = NDIM == 3 ? load(A.axis[1], k0 - R) : T(0), n2 = load(A.axis[2], k0 - R);
    UpdateIn<T> u;  // for plane k0 (the first written)
    if (writes) u = update_in(A, wp, wq, col + unsigned(k0) * sz);

    for (int m = k0 - R; m < k1 + R; ++m) {
        const int b = m & 1;
        // The queues move one plane down; plane m goes into the shared tile.
#pragma unroll
        for (int j = 0; j < 2 * R; ++j) {
            qp[j] = qp[j + 1];
            qq[j] = qq[j + 1];
        }
        qp[2 * R] = load(p, m + R);
        qq[2 * R] = load(q, m + R);
        sh.p[b][y][x] = qp[R];
        sh.q[b][y][x] = qq[R];
        if (ring) {
            sh.p[b][ry][rx] = rp;
            sh.q[b][ry][rx] = rq;
        }
        rp = load_ring(p, m + 1);
        rq = load_ring(q, m + 1);
        __syncthreads();

        // Gradients and fluxes at (column, m); zero outside the computed points. From the
        // same shared values, the in-plane wings of the compact Laplacian (by the writing
        // rows: summing them after the second barrier, by the writers alone, re-reads the
        // tile and lost 0.92x on the H100).
        T fz = 0, gz = 0;
        T wpx = 0, wqx = 0, wpy = 0, wqy = 0;
        {
            T fx = 0, fy = 0, gx = 0, gy = 0;
            if (col_in && in_z(m)) {
                T dpx = 0, dqx = 0, dpy = 0, dqy = 0, dpz = 0, dqz = 0;
#pragma unroll
                for (int k = 1; k <= R; ++k) {
                    const T d = T(stencil::d1(k)), c = T(stencil::c2(k));
                    const T pr = sh.p[b][y][x + k], pl = sh.p[b][y][x - k], qr = sh.q[b][y][x + k],
                            ql = sh.q[b][y][x - k];
                    dpx += d * (pr - pl);
                    dqx += d * (qr - ql);
                    if (row_writes) {
                        wpx += c * (pr + pl);
                        wqx += c * (qr + ql);
                    }
                    if constexpr (NDIM == 3) {
                        const T pu = sh.p[b][y + k][x], pd = sh.p[b][y - k][x], qu = sh.q[b][y + k][x],
                                qd = sh.q[b][y - k][x];
                        dpy += d * (pu - pd);
                        dqy += d * (qu - qd);
                        if (row_writes) {
                            wpy += c * (pu + pd);
                            wqy += c * (qu + qd);
                        }
                    }
                    dpz += d * (qp[R + k] - qp[R - k]);
                    dqz += d * (qq[R + k] - qq[R - k]);
                }
                dpx *= ihx;
                dqx *= ihx;
                dpy *= ihy;
                dqy *= ihy;
                dpz *= ihz;
                dqz *= ihz;
                T s = n0 * dpx, t = n0 * dqx;
                if constexpr (NDIM == 3) {
                    s += n1 * dpy;
                    t += n1 * dqy;
                }
                s += n2 * dpz;
                t += n2 * dqz;
                fx = n0 * s;
                fy = n1 * s;
                fz = n2 * s;
                gx = dqx - n0 * t;
                gy = dqy - n1 * t;
                gz = dqz - n2 * t;
            }
            sh.f[b][0][ty][tx] = fx;
            sh.g[b][0][ty][tx] = gx;
            if constexpr (NDIM == 3) {
                sh.f[b][NDIM - 2][ty][tx] = fy;
                sh.g[b][NDIM - 2][ty][tx] = gy;
            }
        }
        n0 = load(A.axis[0], m + 1);
        if constexpr (NDIM == 3) n1 = load(A.axis[1], m + 1);
        n2 = load(A.axis[2], m + 1);
        __syncthreads();

        if (writes) {
            // Plane m's own terms: the compact Laplacian and the in-plane divergences.
            T wpz = 0, wqz = 0, dfx = 0, dgx = 0, dfy = 0, dgy = 0;
#pragma unroll
            for (int k = 1; k <= R; ++k) {
                const T c = T(stencil::c2(k)), d = T(stencil::d1(k));
                wpz += c * (qp[R + k] + qp[R - k]);
                wqz += c * (qq[R + k] + qq[R - k]);
                dfx += d * (sh.f[b][0][ty][tx + k] - sh.f[b][0][ty][tx - k]);
                dgx += d * (sh.g[b][0][ty][tx + k] - sh.g[b][0][ty][tx - k]);
                if constexpr (NDIM == 3) {
                    dfy += d * (sh.f[b][NDIM - 2][ty + k][tx] - sh.f[b][NDIM - 2][ty - k][tx]);
                    dgy += d * (sh.g[b][NDIM - 2][ty + k][tx] - sh.g[b][NDIM - 2][ty - k][tx]);
                }
            }
            ap[R] += ccentre * qp[R] + wpx * ih2x + wpy * ih2y + wpz * ih2z - dfx * ihx - dfy * ihy;
            aq[R] += ccentre * qq[R] + wqx * ih2x + wqy * ih2y + wqz * ih2z - dgx * ihx - dgy * ihy;
            // The z fluxes' divergence, scattered: -d_j f_z(m) into plane m - j, +d_j into m + j.
            const T fzs = fz * ihz, gzs = gz * ihz;
#pragma unroll
            for (int j = 1; j <= R; ++j) {
                const T d = T(stencil::d1(j));
                ap[R - j] -= d * fzs;
                ap[R + j] += d * fzs;
                aq[R - j] -= d * gzs;
                aq[R + j] += d * gzs;
            }
            // Plane k = m - R has all its terms now: the update (the twin's), then the next
            // plane's inputs.
            const int k = m - R;
            if (k >= k0 && k < k1) {
                const unsigned i = col + unsigned(k) * sz;
                const T hp = ap[0], vq = aq[0];
                wp[i] = advance(qp[0], u.wp, u.k, u.cpp * hp + u.cpq * vq);
                wq[i] = advance(qq[0], u.wq, u.k, u.cpq * hp + u.cqq * vq);
                if (k + 1 < k1) u = update_in(A, wp, wq, i + sz);
            }
        }
        if (row_writes) {
#pragma unroll
            for (int j = 0; j < 2 * R; ++j) {
                ap[j] = ap[j + 1];
                aq[j] = aq[j + 1];
            }
            ap[2 * R] = aq[2 * R] = T(0);
        }
    }
}

int sm_count() {
    static int n = 0;
    if (!n) {
        int dev = 0;
        RTM_CUDA_CHECK(cudaGetDevice(&dev));
        RTM_CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev));
    }
    return n;
}

// A SWiC kernel with its block shape and dynamic shared memory, ready to launch.
template <class T>
struct SwicKernel {
    void (*fn)(TtiStepArgs<T>, int, int) = nullptr;
    int fx = 0, fy = 0, tx = 0, ty = 0;
    int smem = 0;
    int blocks_per_sm = 1;  // resident at once (registers, shared memory)
};

template <class T, int NDIM, int FY3>
SwicKernel<T> swic_of() {
    using S = SwicShape<NDIM, FY3>;
    SwicKernel<T> k;
    k.fn = tti_swic_kernel<T, NDIM, FY3>;
    k.fx = S::FX;
    k.fy = S::FY;
    k.tx = S::TX;
    k.ty = S::TY;
    k.smem = int(sizeof(SwicTiles<T, S, NDIM>));
    // Once per kernel and device (an attribute is the current device's): more than 48 KB
    // of dynamic shared memory needs the opt-in.
    static std::mutex m;
    static std::map<int, int> resident;
    int dev = 0;
    RTM_CUDA_CHECK(cudaGetDevice(&dev));
    const std::lock_guard<std::mutex> lock(m);
    int& n = resident[dev];
    if (!n) {
        RTM_CUDA_CHECK(cudaFuncSetAttribute(k.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, k.smem));
        RTM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k.fn, k.fx * k.fy, k.smem));
        n = std::max(n, 1);
    }
    k.blocks_per_sm = n;
    return k;
}

// The SWiC kernel of a box: 3D blocks of 32 x 32 in fp32 (1.78 flux columns per written
// one; 32 x 16, 2.67, ran at 0.83x on the H100) and 32 x 16 in fp64, whose registers limit
// it to one block per SM already; 2D blocks of 128 x 1.
template <class T, int NDIM>
SwicKernel<T> swic_kernel(const Box& B) {
    if (B.padded_size() > std::size_t(std::numeric_limits<unsigned>::max()))
        fail("tti_step_cuda", "the SWiC kernel indexes a member's " + std::to_string(B.padded_size()) +
                                  " padded points in 32 bits (at most 4294967295)",
             "Run the two-pass kernel: RTM_TTI_KERNEL=two-pass");
    return swic_of<T, NDIM, sizeof(T) == 4 ? 32 : 16>();
}

struct SwicLaunch {
    dim3 grid, block;
    int zchunk = 0, chunks = 1;
};

// Columns of blocks over x and y; z split into chunks of at least 32 planes. Each chunk
// costs 2R planes of warm-up, and the last wave of blocks may leave SMs idle: the count
// of chunks is the one with the least (waves x planes per block), waves = the blocks over
// those resident at once (at 512^3, 32 x 32 blocks: 484 columns; 2 chunks would be 7.3
// waves of 264 planes, 3 are 11.0 waves of 179).
template <class T>
SwicLaunch swic_launch(const SwicKernel<T>& K, const Box& B, int batch) {
    SwicLaunch L;
    L.block = dim3(K.fx, K.fy, 1);
    const long gx = (B.nx + K.tx - 1) / K.tx, gy = B.ndim == 3 ? (B.ny + K.ty - 1) / K.ty : 1;
    const long columns = gx * gy * batch, resident = long(K.blocks_per_sm) * sm_count();
    double best = 0;
    for (int c = 1; c <= std::max(1, B.nz / 32); ++c) {
        const int zchunk = (B.nz + c - 1) / c, chunks = (B.nz + zchunk - 1) / zchunk;
        const double cost = double((columns * chunks + resident - 1) / resident) * (zchunk + 2 * R);
        if (c == 1 || cost < best) {
            best = cost;
            L.zchunk = zchunk;
            L.chunks = chunks;
        }
    }
    L.grid = dim3(unsigned(gx), unsigned(gy), unsigned(L.chunks * batch));
    return L;
}

dim3 point_grid(const Box& B) { return dim3((B.nx + kPx - 1) / kPx, (B.nz + kPz - 1) / kPz, B.ny); }

template <class T, int NDIM>
void step_ndim(const TtiStepArgs<T>& A, TtiKernel kernel, cudaStream_t s, const std::function<void(int)>& between) {
    const Box& B = A.box;
    const long stride = long(B.padded_size());
    const dim3 pb(kPx, kPz, 1), pg = point_grid(B);
    if (!A.axis[0]) {
        for (int m = 0; m < A.batch; ++m) {
            vti_kernel<T, NDIM><<<pg, pb, 0, s>>>(A, A.p + m * stride, A.q + m * stride, A.wp + m * stride,
                                                  A.wq + m * stride);
            RTM_CUDA_CHECK_LAUNCH("vti_kernel");
        }
    } else if (kernel == TtiKernel::TwoPass) {
        if (!A.flux[0] || !A.flux[2] || !A.flux[3] || !A.flux[5] || (NDIM == 3 && (!A.flux[1] || !A.flux[4])))
            fail("tti_step_cuda", "the two-pass TTI kernel needs its six flux fields", "Allocate TtiStepArgs::flux");
        for (int m = 0; m < A.batch; ++m) {
            tti_pass1_kernel<T, NDIM><<<pg, pb, 0, s>>>(A, A.p + m * stride, A.q + m * stride);
            RTM_CUDA_CHECK_LAUNCH("tti_pass1_kernel");
            if (between) between(m);
            tti_pass2_kernel<T, NDIM><<<pg, pb, 0, s>>>(A, A.p + m * stride, A.q + m * stride, A.wp + m * stride,
                                                        A.wq + m * stride);
            RTM_CUDA_CHECK_LAUNCH("tti_pass2_kernel");
        }
    } else {
        const SwicKernel<T> K = swic_kernel<T, NDIM>(B);
        const SwicLaunch L = swic_launch(K, B, A.batch);
        K.fn<<<L.grid, L.block, K.smem, s>>>(A, L.zchunk, L.chunks);
        RTM_CUDA_CHECK_LAUNCH("tti_swic_kernel");
    }
    if (B.free_surface) {
        free_surface_cuda(B, A.wp, s, A.batch);
        free_surface_cuda(B, A.wq, s, A.batch);
    }
}

template <class T>
__global__ void sample_pq_kernel(const T* p, const T* q, int nrec, const int* offset, const long* index,
                                 const double* weight, double* traces, int n) {
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= nrec) return;
    double s = 0;
    for (int k = offset[r]; k < offset[r + 1]; ++k) {
        const long i = index[k];
        s = __dadd_rn(s, __dmul_rn(__dmul_rn(weight[k], 0.5), __dadd_rn(double(p[i]), double(q[i]))));
    }
    traces[long(n) * nrec + r] = s;
}

template <class T, int NDIM>
TtiKernelInfo describe_ndim(const Box& B, bool tilted, TtiKernel kernel, int batch) {
    TtiKernelInfo info;
    cudaFuncAttributes fa{};
    const void* f = nullptr;
    int smem = 0;
    if (tilted && kernel != TtiKernel::TwoPass) {
        const SwicKernel<T> K = swic_kernel<T, NDIM>(B);
        const SwicLaunch L = swic_launch(K, B, batch);
        f = reinterpret_cast<const void*>(K.fn);
        smem = K.smem;
        info.threads = int(L.block.x * L.block.y);
        info.blocks = long(L.grid.x) * L.grid.y * L.grid.z;
        info.zchunk = L.zchunk;
    } else {
        f = tilted ? reinterpret_cast<const void*>(tti_pass2_kernel<T, NDIM>)
                   : reinterpret_cast<const void*>(vti_kernel<T, NDIM>);
        const dim3 g = point_grid(B);
        info.threads = kPx * kPz;
        info.blocks = long(g.x) * g.y * g.z * batch;
    }
    RTM_CUDA_CHECK(cudaFuncGetAttributes(&fa, f));
    info.regs = fa.numRegs;
    info.smem = int(fa.sharedSizeBytes) + smem;
    RTM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&info.blocks_per_sm, f, info.threads, smem));
    return info;
}

}  // namespace

const std::vector<std::string>& tti_kernel_names() {
    static const std::vector<std::string> names{"two-pass", "swic"};
    return names;
}

TtiKernel parse_tti_kernel(const std::string& name) {
    const auto& n = tti_kernel_names();
    for (std::size_t i = 0; i < n.size(); ++i)
        if (name == n[i]) return TtiKernel(i);
    fail("TTI kernel", "unknown kernel '" + name + "'", "Use two-pass or swic");
}

const char* tti_kernel_name(TtiKernel k) { return tti_kernel_names().at(std::size_t(k)).c_str(); }

double tti_bytes_per_point(TtiKernel k, int ndim, bool tilted, bool damped, int value_bytes) {
    // Values moved per point (see tti_cuda.h): p, q read; wp, wq read and written; cpp, cpq,
    // cqq read; damp read when damped; TTI adds the axis (ndim values), and the two-pass
    // kernel its fluxes (2 ndim written, then read) and a second read of p and q.
    double v = 2 + 4 + 3 + (damped ? 1 : 0);
    if (tilted) v += ndim + (k == TtiKernel::TwoPass ? 4.0 * ndim + 2 : 0);
    return v * value_bytes;
}

template <class T>
void tti_step_cuda(const TtiStepArgs<T>& args, TtiKernel kernel, cudaStream_t stream,
                   const std::function<void(int)>& between) {
    if (between && args.axis[0] && kernel != TtiKernel::TwoPass)
        fail("tti_step_cuda", "a step with work between its passes needs the two-pass kernel",
             "Internal error: pick TtiKernel::TwoPass");
    if (args.box.ndim == 3) step_ndim<T, 3>(args, kernel, stream, between);
    else step_ndim<T, 2>(args, kernel, stream, between);
}

template <class T>
void sample_pq_cuda(const T* p, const T* q, int nrec, const int* offset, const long* index, const double* weight,
                    double* traces, int n, cudaStream_t stream) {
    if (nrec <= 0) return;
    sample_pq_kernel<T><<<(nrec + 127) / 128, 128, 0, stream>>>(p, q, nrec, offset, index, weight, traces, n);
    RTM_CUDA_CHECK_LAUNCH("sample_pq_kernel");
}

template <class T>
__global__ void mean_pq_kernel(const T* p, const T* q, T* out, std::size_t n) {
    const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) out[i] = T(__dmul_rn(0.5, __dadd_rn(double(p[i]), double(q[i]))));
}

template <class T>
void mean_pq_cuda(const T* p, const T* q, T* out, std::size_t n, cudaStream_t stream) {
    if (n == 0) return;
    mean_pq_kernel<T><<<unsigned((n + 255) / 256), 256, 0, stream>>>(p, q, out, n);
    RTM_CUDA_CHECK_LAUNCH("mean_pq_kernel");
}

template <class T>
TtiKernelInfo describe_tti(const Box& box, bool tilted, TtiKernel kernel, int batch) {
    return box.ndim == 3 ? describe_ndim<T, 3>(box, tilted, kernel, batch)
                         : describe_ndim<T, 2>(box, tilted, kernel, batch);
}

template void tti_step_cuda<float>(const TtiStepArgs<float>&, TtiKernel, cudaStream_t, const std::function<void(int)>&);
template void tti_step_cuda<double>(const TtiStepArgs<double>&, TtiKernel, cudaStream_t, const std::function<void(int)>&);
template void sample_pq_cuda<float>(const float*, const float*, int, const int*, const long*, const double*, double*,
                                    int, cudaStream_t);
template void sample_pq_cuda<double>(const double*, const double*, int, const int*, const long*, const double*,
                                     double*, int, cudaStream_t);
template void mean_pq_cuda<float>(const float*, const float*, float*, std::size_t, cudaStream_t);
template void mean_pq_cuda<double>(const double*, const double*, double*, std::size_t, cudaStream_t);
template TtiKernelInfo describe_tti<float>(const Box&, bool, TtiKernel, int);
template TtiKernelInfo describe_tti<double>(const Box&, bool, TtiKernel, int);

}  // namespace rtm::kernels::cuda
