// CUDA VTI/TTI step: the two-pass baseline and the SWiC single-pass kernel (tti_cuda.h
// gives the equations, bytes and flops; kernels/cpu/tti_cpu.cpp is the twin).
#include "kernels/cuda/tti_cuda.h"

#include <algorithm>
#include <cstddef>
#include <type_traits>
#include <limits>
#include <map>
#include <mutex>
#include <string>

#include "core/error.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/step_cuda.h"
#include "kernels/cuda/tma.cuh"

#include <cuda_pipeline.h>
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

// The same for the two fields of a SWiC point. In fp32 without a branch: one reciprocal
// of 1 + k for both, the hardware's approximation (within 2 ulp: the GPU tests' bound
// counts a rounding per operation, and this is one), and where k = 0 the numerators
// themselves, the twin's bits. In fp64 as advance (a reciprocal in fp64 is a division).
template <class T>
__device__ __forceinline__ void advance2(T& p, T& q, T up, T uq, T prevp, T prevq, T k, T wlp, T wlq) {
    if constexpr (sizeof(T) == 4) {
        const T np = T(2) * up - (T(1) - k) * prevp + wlp, nq = T(2) * uq - (T(1) - k) * prevq + wlq;
        const T r = __fdividef(1.0f, 1.0f + k);
        p = k == T(0) ? np : np * r;
        q = k == T(0) ? nq : nq * r;
    } else {
        p = advance(up, prevp, k, wlp);
        q = advance(uq, prevq, k, wlq);
    }
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

// Two-pass, pass 1: f[0..2] = n (n . grad p), f[3..5] = (I - n n^T) grad q; under a free
// surface the z ones of planes 1..R also into the halo above (the twin's mirror_z_fluxes).
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
    if (B.free_surface && iz >= 1 && iz <= R) {
        const long g = B.at(ix, iy, -iz);
        A.flux[2][g] = n[2] * sp;
        A.flux[5][g] = gq[2] - n[2] * sq;
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
// What to run where the SWiC kernel cannot.
constexpr const char* kNoSwic = "Run the two-pass kernel: RTM_TTI_KERNEL=two-pass";

// Thread block FX x FY over the flux columns; the shared tile of p and q has a further
// ring of R columns (PX x PY); RY = 0 in 2D (one row). FY3 is the 3D block's height: the
// ring's share of the flux columns falls with it (FX FY / (TX TY): 32 x 16, 2.67; 32 x
// 32, 1.78). The TX x TY writing columns start 2R (x) and 2RY (y) into the tile.
template <int NDIM, int FY3>
struct SwicShape {
    static constexpr int FX = NDIM == 3 ? 32 : 128, FY = NDIM == 3 ? FY3 : 1;
    static constexpr int RY = NDIM == 3 ? R : 0;
    static constexpr int TX = FX - 2 * R, TY = FY - 2 * RY;  // written columns per block
    static constexpr int PX = FX + 2 * R, PY = FY + 2 * RY;
};

// The stencil coefficients scaled by the grid steps, a kernel parameter: in the constant
// bank they are operands of the FMAs, so the loop holds no registers for them and does
// no multiplications by 1/h. d[a][k-1] = d1(k) / h_a, c[a][k-1] = c2(k) / h_a^2 (k =
// 1..R), centre = c2(0) (1/hx^2 + 1/hy^2 + 1/hz^2).
template <class T>
struct SwicCoef {
    T d[3][R], c[3][R], centre;
};
template <class T>
SwicCoef<T> swic_coef(const TtiStepArgs<T>& A) {
    SwicCoef<T> s{};
    for (int a = 0; a < 3; ++a)
        for (int k = 1; k <= R; ++k) {
            s.d[a][k - 1] = T(stencil::d1(k) * double(A.inv_h[a]));
            s.c[a][k - 1] = T(stencil::c2(k) * double(A.inv_h2[a]));
        }
    s.centre = T(stencil::c2(0)) * (A.inv_h2[0] + A.inv_h2[1] + A.inv_h2[2]);
    return s;
}

// The update's inputs besides p, q, H p and V q, in their order in SwicTiles::u and
// SwicMaps::in.
enum SwicIn { kWp, kWq, kCpp, kCpq, kCqq, kDamp, kInputs };

// The copy engine's tensor maps of one SWiC launch: p and q (PX x PY tiles, batch
// members stacked along z), the axis (FX x FY, shared by the members), the update's
// inputs (TX x TY; wp and wq per member, the others shared; damp absent when null).
struct SwicMaps {
    CUtensorMap p, q, n[3], in[kInputs];
};
// The 3D kernel takes map c as (&p)[c].
static_assert(offsetof(SwicMaps, in) == 5 * sizeof(CUtensorMap), "SwicMaps holds its maps without gaps");

// Two values of T in one aligned vector (float2, double2): one shared-memory load.
template <class T>
using Pair = std::conditional_t<sizeof(T) == 4, float2, double2>;

// Buffers of tiles: plane m's are asked for at the start of plane m - 1, into buffer
// (m - m0) % kSwicBuffers, while plane m - 1 is read from its own and plane m - 2's
// update may still read its inputs.
constexpr int kSwicBuffers = 3;

// Shared memory of a block: every plane's tiles in kSwicBuffers buffers, whole tiles of
// p and q (the ring of R columns with the flux columns), of the axis at the flux
// columns, and of the update's inputs at the writing columns (in 3D copied by the copy
// engine, completing on the buffer's mbarrier; in 2D by the threads' cp.async), and the
// x (and y) fluxes the block forms. Slots start on 128 bytes (the copy engine's rule).
template <class T, class S, int NDIM>
struct SwicTiles {
    static constexpr int kA = 128 / sizeof(T);
    static constexpr int sP = (S::PX * S::PY + kA - 1) / kA * kA, sU = (S::TX * S::TY + kA - 1) / kA * kA;
    T p[kSwicBuffers][sP], q[kSwicBuffers][sP];
    T n[kSwicBuffers][NDIM][S::FY][S::FX];  // the axis (x, y in 3D, z) of each flux column
    T u[kSwicBuffers][kInputs][sU];         // the update's inputs of each writing column
    // The x (and y) fluxes of p and q side by side: a divergence reads both in one load.
    Pair<T> fg[kSwicBuffers][NDIM - 1][S::FY][S::FX];
    std::uint64_t bar[kSwicBuffers];
};

// f[i] into shared *dst by cp.async, or 0 where !ok (a zero fill: nothing is read).
template <class T>
__device__ __forceinline__ void stage(T* dst, const T* f, unsigned i, bool ok) {
    __pipeline_memcpy_async(dst, ok ? f + i : f, sizeof(T), ok ? 0 : sizeof(T));
}

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
    tti_swic_kernel(TtiStepArgs<T> A, SwicCoef<T> C, const __grid_constant__ SwicMaps maps, int zchunk, int chunks) {
    using S = SwicShape<NDIM, FY3>;
    using Tiles = SwicTiles<T, S, NDIM>;
    constexpr bool kTma = NDIM == 3;  // 3D: tiles by the copy engine; 2D: by the threads (cp.async)
    constexpr int FX = S::FX, FY = S::FY, RY = S::RY, PX = S::PX, TX = S::TX;
    extern __shared__ __align__(128) unsigned char smem[];
    auto& sh = *reinterpret_cast<Tiles*>(smem);
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
    // below need only the fluxes, not the accumulators.
    const bool row_writes = ty >= RY && ty < FY - RY;
    const bool writes = col_in && row_writes && tx >= R && tx < FX - R;
    // Offsets within a member in 32 bits (swic_kernel checks the box fits): fewer registers
    // and one multiply-add per address. A column outside the halo reads the halo's nearest
    // column (zeros, as the tile's are).
    const unsigned sz = unsigned(B.sz());
    const unsigned col = unsigned(B.at(min(max(cx, -R), B.nx + R - 1), min(max(cy, -RY), B.ny + RY - 1), 0));
    const int k0 = chunk * zchunk, k1 = min(B.nz, k0 + zchunk);
    const int m0 = k0 - R, m1 = k1 + R;  // the planes of the loop
    auto in_z = [&](int iz) { return iz >= 0 && iz < B.nz; };
    // The z queues' values, without a branch: the halo planes hold zeros, or above a free
    // surface the mirror of p and q. Planes beyond the halo (the first and the last chunk's
    // outermost R) read the halo's nearest plane: they reach only the fluxes of planes
    // outside the box, which are masked, and accumulators that are never written.
    auto load = [&](const T* f, int iz) { return ld(f + (col + unsigned(min(max(iz, -R), B.nz + R - 1)) * sz)); };
    // 3D: plane m's tiles (and the update's inputs of plane m - R, when written here) are asked
    // for into buffer s by the first lanes of the ring's 2RY warps (rows of 32), whose path
    // is the shorter (every warp's first lane asking, in a loop over the copies, cost every
    // warp's path about 48 instructions a plane; one thread asking for all held its warp,
    // and the block's barrier). Action c is copy c, the tile of map c in SwicMaps' order
    // (c = 0 also sets the bytes the buffer's barrier waits for), then the two prefetches;
    // ring warp r takes actions r, r + 2RY, ... Padded coordinates: a member's plane iz is
    // z member (nz + 2R) + iz + R; the tile's corner (bx, by) is x bx + R, y by + RY, the
    // axis's R (RY) further, the inputs' 2R (2RY).
    const int zm = member * (B.nz + 2 * R) + R;
    constexpr int kCopies = 2 + NDIM + kInputs, kActions = kCopies + 2;
    const bool issuer = tid % 32 == 0 && !row_writes;
    const int ring_warp = ty < RY ? ty : ty - (FY - 2 * RY);  // (3D: a warp is a row)
    auto act = [&](int c, int m, int s) {
        const int k = m - R;
        const bool update = k >= k0 && k < k1;
        const int inputs = update ? (A.damp ? kInputs : kDamp) : 0;
        std::uint64_t* b = &sh.bar[s];
        if (c == 0)
            mbar_expect_tx(b, unsigned(sizeof(T) * (2 * S::PX * S::PY + NDIM * FX * FY + inputs * TX * S::TY)));
        if (c >= kCopies) {
            // Plane m + R of p and q, the next plane's queue entries, fetched into L2: the
            // queues' loads then do not wait for DRAM (they waited 2.1 cycles an
            // instruction, H200).
            tma_prefetch(c == kCopies ? &maps.p : &maps.q, bx + R, by + RY, zm + m + R);
            return;
        }
        if (c >= 2 + NDIM + inputs) return;
        const int kind = c < 2 ? 0 : c < 2 + NDIM ? 1 : 2;  // p and q, the axis, the inputs
        const int j = c - 2 - NDIM;                          // the input
        T* dst = kind == 0 ? (c ? sh.q[s] : sh.p[s]) : kind == 1 ? &sh.n[s][c - 2][0][0] : sh.u[s][j];
        const int z = kind == 0 ? zm + m : kind == 1 ? m + R : j <= kWq ? zm + k : k + R;
        tma_load(dst, &maps.p + c, bx + R + kind * R, by + RY + kind * RY, z, b);
    };
    auto issue = [&](int m, int s) {
        static_assert(!kTma || RY > 0, "3D: the ring's 2RY warps ask");
        if constexpr (kTma) {
#pragma unroll
            for (int c = 0; c < kActions; c += 2 * RY)
                if (c + ring_warp < kActions) act(c + ring_warp, m, s);
        }
    };
    // 2D: the threads copy the tiles themselves (cp.async), the interior of p and q from
    // their register queues, the ring (2R values) by the first 2R threads, the axis and
    // inputs of their own column; then a barrier. (The copy engine's 11 tiles of a row a
    // plane ran 2D at 0.75x: 49.7% of the ceiling against 65.9%, H200.)
    [[maybe_unused]] const int rx = tid < R ? tid : FX + tid;  // the ring column of threads 0..2R-1
    [[maybe_unused]] const bool ring_in = tid < 2 * R && bx + rx >= 0 && bx + rx < B.nx;
    [[maybe_unused]] const unsigned rcol = ring_in ? unsigned(B.at(bx + rx, 0, 0)) : 0;
    auto copy = [&](int m, int s) {
        const int k = m - R;
        if (tid < 2 * R) {
            const bool ok = ring_in && in_z(m);
            stage(&sh.p[s][rx], p, rcol + unsigned(m) * sz, ok);
            stage(&sh.q[s][rx], q, rcol + unsigned(m) * sz, ok);
        }
        const bool ok = col_in && in_z(m);
        stage(&sh.n[s][0][0][tx], A.axis[0], col + unsigned(m) * sz, ok);
        stage(&sh.n[s][1][0][tx], A.axis[2], col + unsigned(m) * sz, ok);
        if (writes && k >= k0 && k < k1) {
            const unsigned i = col + unsigned(k) * sz;
            const int at = tx - R;
            stage(&sh.u[s][kWp][at], static_cast<const T*>(wp), i, true);
            stage(&sh.u[s][kWq][at], static_cast<const T*>(wq), i, true);
            stage(&sh.u[s][kCpp][at], A.cpp, i, true);
            stage(&sh.u[s][kCpq][at], A.cpq, i, true);
            stage(&sh.u[s][kCqq][at], A.cqq, i, true);
            stage(&sh.u[s][kDamp][at], A.damp ? A.damp : A.cpp, i, A.damp != nullptr);
        }
    };
    if constexpr (kTma) {
        if (tid == 0) {
            for (int s = 0; s < kSwicBuffers; ++s) mbar_init(&sh.bar[s], 1);
            asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");  // visible to the copy engine
        }
        __syncthreads();
        if (issuer) issue(m0, 0);
    } else {
        copy(m0, 0);
        __pipeline_commit();
    }

    const int x = tx + R, y = ty + RY;  // this column in the shared tile
    // Register queues along z, rotated rather than shifted: in plane m of rotation
    // J (m minus the first plane, modulo Q = 2R + 1, a constant of each unrolled copy of
    // the plane's work), queue entry j (plane m - R + j) is register (j + J) % Q, so
    // moving the queues a plane down costs no instructions. Q is a multiple of
    // kSwicBuffers, so the buffer of a plane, J % kSwicBuffers, is a constant too.
    constexpr int Q = 2 * R + 1;
    static_assert(Q % kSwicBuffers == 0, "a plane's buffer follows from its rotation");
    T qp[Q], qq[Q];  // input queues: p, q at planes m-R..m+R of the column
    T ap[Q], aq[Q];  // output queues: H p, V q at planes m-R..m+R
#pragma unroll
    for (int j = 0; j < Q; ++j) {
        // Rotation 0 holds planes m0 - R + j; its entry 2R is loaded by the first plane.
        qp[j] = j < 2 * R ? load(p, m0 - R + j) : T(0);
        qq[j] = j < 2 * R ? load(q, m0 - R + j) : T(0);
        ap[j] = aq[j] = T(0);
    }

    // One plane's work in rotation J of the loop's round `round`; false past the last plane.
    auto plane = [&](auto rotation, int round, int m) {
        constexpr int J = decltype(rotation)::value, s = J % kSwicBuffers;
        auto e = [](int j) { return (j + J) % Q; };  // queue entry j's register
        if (m >= m1) return false;
        // The next plane's tiles, into the buffer of plane m - 2: every thread is past plane
        // m - 1's barrier, so done with plane m - 2 (plane m - 1's update may still read its
        // own buffer, and plane m is this one's).
        if constexpr (kTma) {
            if (issuer && m + 1 < m1) issue(m + 1, (J + 1) % kSwicBuffers);
        } else {
            if (m + 1 < m1) copy(m + 1, (J + 1) % kSwicBuffers);
            __pipeline_commit();
        }
        // Plane m's newest queue entry (from L2: issue() prefetched it); its tiles (the copy
        // engine's: use c = (m - m0) / kSwicBuffers of the buffer, whose parity is
        // (3 round + J / 3) mod 2).
        qp[e(2 * R)] = load(p, m + R);
        qq[e(2 * R)] = load(q, m + R);
        if constexpr (kTma) {
            mbar_wait(&sh.bar[s], unsigned(round + J / kSwicBuffers) & 1u);
        } else {
            sh.p[s][x] = qp[e(R)];
            sh.q[s][x] = qq[e(R)];
            __pipeline_wait_prior(1);  // plane m's copies, asked for in plane m - 1
            __syncthreads();
        }

        // Gradients and fluxes at (column, m), formed by every thread without a branch and
        // masked outside the computed points.
        // From the same shared values, the in-plane wings of the compact Laplacian.
        T fz, gz, wpx = 0, wqx = 0, wpy = 0, wqy = 0;
        {
            const T* tp = &sh.p[s][y * PX + x];
            const T* tq = &sh.q[s][y * PX + x];
            T dpx = 0, dqx = 0, dpz = 0, dqz = 0;
            [[maybe_unused]] T dpy = 0, dqy = 0;  // 3D
#pragma unroll
            for (int k = 1; k <= R; ++k) {
                const T pr = tp[k], pl = tp[-k], qr = tq[k], ql = tq[-k];
                dpx += C.d[0][k - 1] * (pr - pl);
                dqx += C.d[0][k - 1] * (qr - ql);
                wpx += C.c[0][k - 1] * (pr + pl);
                wqx += C.c[0][k - 1] * (qr + ql);
                if constexpr (NDIM == 3) {
                    const T pu = tp[k * PX], pd = tp[-k * PX], qu = tq[k * PX], qd = tq[-k * PX];
                    dpy += C.d[1][k - 1] * (pu - pd);
                    dqy += C.d[1][k - 1] * (qu - qd);
                    wpy += C.c[1][k - 1] * (pu + pd);
                    wqy += C.c[1][k - 1] * (qu + qd);
                }
                dpz += C.d[2][k - 1] * (qp[e(R + k)] - qp[e(R - k)]);
                dqz += C.d[2][k - 1] * (qq[e(R + k)] - qq[e(R - k)]);
            }
            const T n0 = sh.n[s][0][ty][tx], n2 = sh.n[s][NDIM - 1][ty][tx];
            [[maybe_unused]] const T n1 = NDIM == 3 ? sh.n[s][NDIM - 2][ty][tx] : T(0);
            T sp = n0 * dpx, tq2 = n0 * dqx;
            if constexpr (NDIM == 3) {
                sp += n1 * dpy;
                tq2 += n1 * dqy;
            }
            sp += n2 * dpz;
            tq2 += n2 * dqz;
            // (f is 0 there already where the axis is; masked too, so that nothing but the
            // computed points' values can reach them.)
            const bool live = col_in && in_z(m);
            sh.fg[s][0][ty][tx] = {live ? n0 * sp : T(0), live ? dqx - n0 * tq2 : T(0)};
            if constexpr (NDIM == 3) sh.fg[s][NDIM - 2][ty][tx] = {live ? n1 * sp : T(0), live ? dqy - n1 * tq2 : T(0)};
            fz = live ? n2 * sp : T(0);
            gz = live ? dqz - n2 * tq2 : T(0);
        }
        // One barrier a plane in 3D (the fluxes, in kSwicBuffers buffers, are rewritten 3
        // planes later, by threads past two more barriers); 2D has one more, above.
        __syncthreads();

        if (writes) {
            // Plane m's own terms: the compact Laplacian and the in-plane divergences.
            T wpz = 0, wqz = 0, dfx = 0, dgx = 0, dfy = 0, dgy = 0;
            const Pair<T>* tf = &sh.fg[s][0][ty][tx];
#pragma unroll
            for (int k = 1; k <= R; ++k) {
                wpz += C.c[2][k - 1] * (qp[e(R + k)] + qp[e(R - k)]);
                wqz += C.c[2][k - 1] * (qq[e(R + k)] + qq[e(R - k)]);
                const Pair<T> r = tf[k], l = tf[-k];
                dfx += C.d[0][k - 1] * (r.x - l.x);
                dgx += C.d[0][k - 1] * (r.y - l.y);
                if constexpr (NDIM == 3) {
                    constexpr int Y = FY * FX;  // from the x fluxes to the y fluxes
                    const Pair<T> u = tf[Y + k * FX], d = tf[Y - k * FX];
                    dfy += C.d[1][k - 1] * (u.x - d.x);
                    dgy += C.d[1][k - 1] * (u.y - d.y);
                }
            }
            ap[e(R)] += C.centre * qp[e(R)] + wpx + wpy + wpz - dfx - dfy;
            aq[e(R)] += C.centre * qq[e(R)] + wqx + wqy + wqz - dgx - dgy;
            // The z fluxes' divergence, scattered: -d_j f_z(m) into plane m - j, +d_j into m + j.
#pragma unroll
            for (int j = 1; j <= R; ++j) {
                ap[e(R - j)] -= C.d[2][j - 1] * fz;
                ap[e(R + j)] += C.d[2][j - 1] * fz;
                aq[e(R - j)] -= C.d[2][j - 1] * gz;
                aq[e(R + j)] += C.d[2][j - 1] * gz;
            }
            // Under a free surface the z fluxes are even about it: plane g = 1..R's is also
            // plane -g's, whose divergence reaches planes 0..R - g (+d_(o+g) into plane o).
            // The first chunk starts at plane -R, so plane g is its rotation R + g of round 0.
            // (Without a branch, adding 0 elsewhere: a branch here spilled registers.)
            if constexpr (J > R && J <= 2 * R) {
                constexpr int g = J - R;
                const bool ghost = B.free_surface && k0 == 0 && round == 0;
                const T gfz = ghost ? fz : T(0), ggz = ghost ? gz : T(0);
#pragma unroll
                for (int o = 0; o <= R - g; ++o) {
                    ap[e(o - g + R)] += C.d[2][o + g - 1] * gfz;
                    aq[e(o - g + R)] += C.d[2][o + g - 1] * ggz;
                }
            }
            // Plane k = m - R has all its terms now: the update (the twin's), its inputs
            // from this plane's buffer.
            const int k = m - R;
            if (k >= k0 && k < k1) {
                const unsigned i = col + unsigned(k) * sz;
                const T hp = ap[e(0)], vq = aq[e(0)];
                const int at = (ty - RY) * TX + tx - R;  // this column in the inputs' tile
                const auto& in = sh.u[s];
                const T kd = A.damp ? in[kDamp][at] : T(0);
                T np, nq;
                advance2(np, nq, qp[e(0)], qq[e(0)], in[kWp][at], in[kWq][at], kd,
                         in[kCpp][at] * hp + in[kCpq][at] * vq, in[kCpq][at] * hp + in[kCqq][at] * vq);
                wp[i] = np;
                wq[i] = nq;
            }
        }
        // Entry 0 is done with: it is the next plane's entry 2R, whose sums start at 0.
        ap[e(0)] = aq[e(0)] = T(0);
        return true;
    };
    // The plane loop unrolled by Q, one rotation a copy (Q copies of the plane's work in
    // the machine code: 0.89x the time of a loop that shifts its queues, H200).
    using std::integral_constant;
    for (int m = m0, round = 0;; m += Q, ++round)
        if (!plane(integral_constant<int, 0>(), round, m) || !plane(integral_constant<int, 1>(), round, m + 1) ||
            !plane(integral_constant<int, 2>(), round, m + 2) || !plane(integral_constant<int, 3>(), round, m + 3) ||
            !plane(integral_constant<int, 4>(), round, m + 4) || !plane(integral_constant<int, 5>(), round, m + 5) ||
            !plane(integral_constant<int, 6>(), round, m + 6) || !plane(integral_constant<int, 7>(), round, m + 7) ||
            !plane(integral_constant<int, 8>(), round, m + 8))
            break;
    if constexpr (!kTma) __pipeline_wait_prior(0);  // no copy outlives the block
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
    void (*fn)(TtiStepArgs<T>, SwicCoef<T>, SwicMaps, int, int) = nullptr;
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
    if (NDIM == 3 && !tma_supported())
        fail("tti_step_cuda", "the 3D SWiC kernel takes its tiles from Hopper's copy engine (compute capability 9.0)",
             kNoSwic);
    if (B.padded_size() > std::size_t(std::numeric_limits<unsigned>::max()))
        fail("tti_step_cuda", "the SWiC kernel indexes a member's " + std::to_string(B.padded_size()) +
                                  " padded points in 32 bits (at most 4294967295)",
             kNoSwic);
    return swic_of<T, NDIM, sizeof(T) == 4 ? 32 : 16>();
}

// The tensor maps of a 3D launch of K (SwicMaps).
template <class T>
SwicMaps swic_maps(const TtiStepArgs<T>& A, const SwicKernel<T>& K) {
    const Box& B = A.box;
    const long planes = B.nz + 2 * R, stacked = planes * A.batch;
    const int px = K.fx + 2 * R, py = K.fy + 2 * R;
    SwicMaps m{};
    if (B.ndim == 2) return m;  // 2D copies its tiles itself
    m.p = tensor_map(A.p, B, stacked, px, py, kNoSwic);
    m.q = tensor_map(A.q, B, stacked, px, py, kNoSwic);
    for (int a = 0; a < 3; ++a) m.n[a] = tensor_map(A.axis[a], B, planes, K.fx, K.fy, kNoSwic);
    m.in[kWp] = tensor_map<T>(A.wp, B, stacked, K.tx, K.ty, kNoSwic);
    m.in[kWq] = tensor_map<T>(A.wq, B, stacked, K.tx, K.ty, kNoSwic);
    m.in[kCpp] = tensor_map(A.cpp, B, planes, K.tx, K.ty, kNoSwic);
    m.in[kCpq] = tensor_map(A.cpq, B, planes, K.tx, K.ty, kNoSwic);
    m.in[kCqq] = tensor_map(A.cqq, B, planes, K.tx, K.ty, kNoSwic);
    if (A.damp) m.in[kDamp] = tensor_map(A.damp, B, planes, K.tx, K.ty, kNoSwic);
    return m;
}

struct SwicLaunch {
    dim3 grid, block;
    int zchunk = 0, chunks = 1;
};

// Columns of blocks over x and y; z split into chunks of at least 32 planes (so under a
// free surface planes 1..R, whose z fluxes are mirrored, are the first chunk's). Each chunk
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
        K.fn<<<L.grid, L.block, K.smem, s>>>(A, swic_coef(A), swic_maps(A, K), L.zchunk, L.chunks);
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
