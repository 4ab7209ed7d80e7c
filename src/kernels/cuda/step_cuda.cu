// CUDA kernels of the constant-density acoustic time step with C-PML (twin of
// kernels/cpu/step_cpu.cpp) and the small kernels around it.
//
// Equation (every kernel that updates w):
//   w = 2 u - w + vdt2 * L,   L = sum_i [ inv_h2[i] (c0 u + sum_k c_k (u[+k s_i] + u[-k s_i]))
//                                         + (d_i psi_i + zeta_i) where within R of axis i's layers ]
//   psi_i  <- b_i psi_i + a_i d_i u          (pass 1, layer cells of axis i only)
//   zeta_i <- b_i zeta_i + a_i (d_ii u + d_i psi_i)   (pass 2, zone of axis i)
// Assumptions: padded arrays as in kernels::Box (halo R = 4, zero except above a free
// surface); a = 0, b = 1 outside the layers (cpml_profile), so zeta there is read but
// never changes and is not written back.
//
// Counts per interior point, fp32 (3D): 16 B at the minimum (read u, w, vdt2; write w),
// 3*4 wing additions + 3*4 wing multiply-adds + centre + update: about 35 flops.
// Stencil only: 8 B (read u, write out), about 32 flops.
#include "kernels/cuda/step_cuda.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <type_traits>
#include <utility>

#include "core/error.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/sm_count.h"
#include "kernels/cuda/tma.cuh"

namespace rtm::kernels::cuda {

using stencil::R;

namespace {

// kFull: plain update (no layers, or the interior part of a split launch); kPml: C-PML
// zones; kDamp: damping layers (StepArgs::damp); kStencil: Laplacian only.
enum Mode { kFull = 0, kPml = 1, kStencil = 2, kDamp = 3 };

__host__ __device__ __forceinline__ bool in_zone(int i, int n, int lo, int hi) {
    return (lo > 0 && i < lo + R) || (hi > 0 && i >= n - hi - R);
}
__host__ __device__ __forceinline__ bool in_layer(int i, int n, int lo, int hi) { return i < lo || i >= n - hi; }

// Resident blocks the 3D C-PML kernels are compiled for (__launch_bounds__): 1024
// threads per SM, so at most 64 registers each. The index of the compact C-PML memory
// at zone points (StepArgs::mem_at, its pointers kept per axis along the z loop) takes
// them to 76-100 otherwise: one block of 512 threads per SM. (1536 threads, 40
// registers with 92 B of spills, was slower: 44.5% against 45.6-46.0% at 512^3.) 0
// elsewhere: the compiler's own choice (capping the others was slower:
// docs/performance.md, run 7; fp64 would spill under the cap).
template <class T, int NDIM, int MODE, int THREADS>
constexpr int kLayerBlocks = sizeof(T) == 4 && NDIM == 3 && MODE == kPml ? 1024 / THREADS : 0;

// The update written to w at one point. kDamp: inside a layer (damp = k there, 0 in the
// window) w = (2u - (1 - k) w + vdt2 lap) / (1 + k), as step_cpu's damped rows; elsewhere
// the plain update (k = 0 gives it exactly), so the window never reads damp.
template <class T, int MODE>
__device__ __forceinline__ T updated_with(bool layer, T k, T c, T wold, T v, T lap) {
    if (MODE == kDamp && layer) return (T(2) * c - (T(1) - k) * wold + v * lap) / (T(1) + k);
    return T(2) * c - wold + v * lap;
}
template <class T, int MODE>
__device__ __forceinline__ T updated(const StepArgs<T>& A, long p, bool layer, T c, T wold, T v, T lap) {
    return updated_with<T, MODE>(layer, MODE == kDamp && layer ? __ldg(A.damp + p) : T(0), c, wold, v, lap);
}

// One axis's contribution in the C-PML zone at point (ix, iy, iz): t = d_ii u + d_i psi_i,
// zeta advanced (the memory at StepArgs::mem_at; s its stride along the axis).
template <class T>
__device__ __forceinline__ T cpml_axis(const StepArgs<T>& A, int ax, int ix, int iy, int iz, long s, T d2) {
    const long q = A.mem_at(ax, ix, iy, iz);
    const int k = ax == 0 ? ix : ax == 1 ? iy : iz;
    const T t = d2 + stencil::d1_diff(A.psi[ax] + q, s) * A.inv_h[ax];
    const T a = A.a[ax][k], b = A.b[ax][k];
    T* zp = A.zeta[ax] + q;
    const T zn = b * *zp + a * t;
    if (a != T(0) || b != T(1)) *zp = zn;
    return t + zn;
}

// The Laplacian with C-PML terms at a zone point, axis after axis as step_cpu's layer rows do.
template <class T, int NDIM>
__device__ __forceinline__ T zone_lap(const StepArgs<T>& A, int ix, int iy, int iz, T c, T wx, T wy, T wz,
                                      bool zx, bool zy, bool zz) {
    const Box& B = A.box;
    const T c0 = T(stencil::c2(0));
    T lap = 0;
    {
        const T d2 = (c0 * c + wx) * A.inv_h2[0];
        lap += zx ? cpml_axis(A, 0, ix, iy, iz, 1, d2) : d2;
    }
    if (NDIM == 3) {
        const T d2 = (c0 * c + wy) * A.inv_h2[1];
        lap += zy ? cpml_axis(A, 1, ix, iy, iz, B.sy(), d2) : d2;
    }
    {
        const T d2 = (c0 * c + wz) * A.inv_h2[2];
        lap += zz ? cpml_axis(A, 2, ix, iy, iz, B.sz(), d2) : d2;
    }
    return lap;
}

template <class T, int NDIM>
__device__ __forceinline__ bool axis_zone(const Box& B, int ax, int i) {
    const int n = ax == 0 ? B.nx : ax == 1 ? B.ny : B.nz;
    return in_zone(i, n, B.pml_lo[ax], B.pml_hi[ax]);
}

// Where a block of a split launch (map: its {tile x, tile y, z0, z1}, grid (blocks of the
// map, batch members)) or of a whole-box launch (grid (x tiles, y tiles, z chunks x
// batch members)) works.
struct BlockTile {
    int bx, by, z0, z1, member;
};
__device__ __forceinline__ BlockTile block_tile(const Box& B, int zchunk, const int4* map) {
    if (map) {
        const int4 m = map[blockIdx.x];
        return {m.x, m.y, m.z, m.w, int(blockIdx.y)};
    }
    const int chunks = (B.nz + zchunk - 1) / zchunk;
    const int z0 = (blockIdx.z % chunks) * zchunk;
    return {int(blockIdx.x), int(blockIdx.y), z0, min(z0 + zchunk, B.nz), int(blockIdx.z / chunks)};
}

// ---------------------------------------------------------------------------------
// naive: one thread per computed point; every neighbour a global load (L1 hits for
// most). Bytes from DRAM as the minimum if L1/L2 catch the re-reads; 25 (3D) or 17
// (2D) load instructions per point. Reference and fallback variant.
template <class T, int NDIM, int MODE>
__global__ void __launch_bounds__(256) naive_kernel(StepArgs<T> A, int, const int4*) {
    const Box& B = A.box;
    const int ix = blockIdx.x * blockDim.x + threadIdx.x;
    const int iy = NDIM == 3 ? blockIdx.y * blockDim.y + threadIdx.y : 0;
    const int iz = blockIdx.z % B.nz;  // grid z: nz planes x batch members
    A = A.member(blockIdx.z / B.nz);
    if (ix >= B.nx || iy >= B.ny) return;
    const long p = B.at(ix, iy, iz);
    const T* __restrict__ u = A.u;
    const T c = u[p];
    const T wx = stencil::d2_wings(u + p, 1);
    const T wz = stencil::d2_wings(u + p, int(B.sz()));
    const T wy = NDIM == 3 ? stencil::d2_wings(u + p, int(B.sy())) : T(0);
    const T hx = A.inv_h2[0], hy = A.inv_h2[1], hz = A.inv_h2[2];
    const T c0s = T(stencil::c2(0)) * (hx + hy + hz);
    T lap;
    if (MODE == kPml) {
        const bool zx = axis_zone<T, NDIM>(B, 0, ix), zy = NDIM == 3 && axis_zone<T, NDIM>(B, 1, iy),
                   zz = axis_zone<T, NDIM>(B, 2, iz);
        if (zx || zy || zz) lap = zone_lap<T, NDIM>(A, ix, iy, iz, c, wx, wy, wz, zx, zy, zz);
        else lap = c0s * c + hx * wx + hz * wz + (NDIM == 3 ? hy * wy : T(0));
    } else {
        lap = c0s * c + hx * wx + hz * wz + (NDIM == 3 ? hy * wy : T(0));
    }
    if (MODE == kStencil) {
        A.w[p] = lap;
    } else {
        const bool layer = MODE == kDamp && (in_layer(ix, B.nx, B.pml_lo[0], B.pml_hi[0]) ||
                                             (NDIM == 3 && in_layer(iy, B.ny, B.pml_lo[1], B.pml_hi[1])) ||
                                             in_layer(iz, B.nz, B.pml_lo[2], B.pml_hi[2]));
        A.w[p] = updated<T, MODE>(A, p, layer, c, A.w[p], A.vdt2[p], lap);
    }
}

// ---------------------------------------------------------------------------------
// Register queue (Micikevicius 2009) with a double-buffered shared-memory plane tile:
// the variants before Hopper (q32x16, q32x8) and the tile geometry the TMA variants share.
//
// Block: BX x BY threads (BY = 1 in 2D), one output per thread and plane. The block's
// tile and z range come from the launch grid (blockIdx.z selects a chunk of `zchunk`
// planes) or, for split launches, from map[blockIdx.x] = {tile x, tile y, z0, z1}. Each
// thread keeps u of its column at z-4..z+4 in registers (q[0..8]) and the next plane's
// value loading (q[9]); plane z goes to shared memory with its x (and y) halos, read by
// edge threads. Loads for plane z+1 (u at z+5, halos, w, vdt2) are issued before plane
// z's barrier and arithmetic, so a plane's latency hides behind the last one's work.
// One barrier per plane (two tile buffers).
// DRAM bytes per point: the 16 B (full) / 8 B (stencil) minimum, plus halo re-reads that
// mostly hit L2 ((BX+8)(BY+8)/(BX BY) - 1 of u: 0.88 for 32x16, 1.5 for 32x8), plus
// 8/zchunk of u for the queue's start-up at each chunk. Shared memory: 2 (BX+8)(BY+8)
// values. Variants that lost to these (loads two planes ahead, full occupancy, several
// y rows per thread, 64-wide tiles; session 1-2 tables in docs/performance.md) are gone
// from the code.
template <class T, int NDIM, int BX, int BY, int MODE>
__global__ void __launch_bounds__(BX * BY, kLayerBlocks<T, NDIM, MODE, BX * BY>) queue_kernel(StepArgs<T> A, int zchunk, const int4* map) {
    constexpr int HY = NDIM == 3 ? R : 0;
    constexpr int TW = BX + 2 * R;
    constexpr int QN = 2 * R + 1;  // q[k] = u(z - R + k); q[2R] is the load in flight
    static_assert(NDIM == 2 || BY >= R, "the y-halo rows are loaded by R thread rows");
    __shared__ T tile[2][BY + 2 * HY][TW];
    const Box& B = A.box;
    const long sy = B.sy(), sz = B.sz();
    const int tx = threadIdx.x, ty = threadIdx.y;
    const BlockTile bt = block_tile(B, zchunk, map);
    const int bx = bt.bx, by = bt.by, z0 = bt.z0, z1 = bt.z1;
    A = A.member(bt.member);
    const int ix = bx * BX + tx;
    const int iy = NDIM == 3 ? by * BY + ty : 0;
    const bool active = ix < B.nx && iy < B.ny;
    // Own column inside the padded array: provides the tile value (halo of the active).
    const bool own = ix < B.nx + R && (NDIM == 2 || iy < B.ny + R);
    const bool hxl = tx < R && iy < B.ny;
    const bool hxr = tx >= BX - R && ix < B.nx && iy < B.ny;
    const bool hyt = NDIM == 3 && ty < R && ix < B.nx;
    const bool hyb = NDIM == 3 && ty >= BY - R && ix < B.nx && iy < B.ny;
    constexpr bool kW = MODE != kStencil;

    const T* __restrict__ u = A.u;
    const T* __restrict__ v = A.vdt2;
    T* __restrict__ w = A.w;
    long p = own ? B.at(ix, iy, z0) : 0;

    // Prologue: the queue and the first plane's halos, w and vdt2.
    T q[QN];
#pragma unroll
    for (int k = 0; k < QN; ++k) q[k] = (own && z0 - R + k <= B.nz - 1 + R) ? __ldg(u + p + (k - R) * sz) : T(0);
    const bool in = z0 < z1;
    T cxl = (in && hxl) ? __ldg(u + p - R) : T(0);
    T cxr = (in && hxr) ? __ldg(u + p + R) : T(0);
    T cw = (kW && in && active) ? w[p] : T(0);
    T cv = (kW && in && active) ? __ldg(v + p) : T(0);
    T cyt = (in && hyt) ? __ldg(u + p - R * sy) : T(0);
    T cyb = (in && hyb) ? __ldg(u + p + R * sy) : T(0);

    const T hx = A.inv_h2[0], hy = A.inv_h2[1], hz = A.inv_h2[2];
    const T c0s = T(stencil::c2(0)) * (hx + hy + hz);
    const bool zx = MODE == kPml && axis_zone<T, NDIM>(B, 0, ix);
    const bool zy = MODE == kPml && NDIM == 3 && axis_zone<T, NDIM>(B, 1, iy);
    const bool lxy = MODE == kDamp && (in_layer(ix, B.nx, B.pml_lo[0], B.pml_hi[0]) ||
                                       (NDIM == 3 && in_layer(iy, B.ny, B.pml_lo[1], B.pml_hi[1])));

#pragma unroll 1
    for (int z = z0; z < z1; ++z) {
        const int buf = (z - z0) & 1;
        tile[buf][ty + HY][tx + R] = q[R];
        if (hxl) tile[buf][ty + HY][tx] = cxl;
        if (hxr) tile[buf][ty + HY][tx + 2 * R] = cxr;
        if (NDIM == 3) {
            if (hyt) tile[buf][ty][tx + R] = cyt;
            if (hyb) tile[buf][ty + 2 * HY][tx + R] = cyb;
        }
        // Issue the loads of plane z + 1 now; they complete behind this plane's work.
        const bool more = z + 1 < z1;
        const long pn = p + sz;
        const T nq = (more && own) ? __ldg(u + pn + R * sz) : T(0);
        const T nxl = (more && hxl) ? __ldg(u + pn - R) : T(0);
        const T nxr = (more && hxr) ? __ldg(u + pn + R) : T(0);
        const T nw = (kW && more && active) ? w[pn] : T(0);
        const T nv = (kW && more && active) ? __ldg(v + pn) : T(0);
        const T nyt = (more && hyt) ? __ldg(u + pn - R * sy) : T(0);
        const T nyb = (more && hyb) ? __ldg(u + pn + R * sy) : T(0);
        __syncthreads();
        if (active) {
            const T* row = &tile[buf][ty + HY][tx + R];
            const T c = q[R];
            const T wx = stencil::d2_wings(row, 1);
            const T wy = NDIM == 3 ? stencil::d2_wings(row, TW) : T(0);
            const T wz = T(stencil::c2(1)) * (q[R + 1] + q[R - 1]) + T(stencil::c2(2)) * (q[R + 2] + q[R - 2]) +
                         T(stencil::c2(3)) * (q[R + 3] + q[R - 3]) + T(stencil::c2(4)) * (q[R + 4] + q[R - 4]);
            const bool zz = MODE == kPml && axis_zone<T, NDIM>(B, 2, z);
            T lap;
            if (MODE == kPml && (zx || zy || zz)) lap = zone_lap<T, NDIM>(A, ix, iy, z, c, wx, wy, wz, zx, zy, zz);
            else lap = c0s * c + hx * wx + hz * wz + (NDIM == 3 ? hy * wy : T(0));
            if (MODE == kStencil) {
                w[p] = lap;
            } else {
                const bool layer = MODE == kDamp && (lxy || in_layer(z, B.nz, B.pml_lo[2], B.pml_hi[2]));
                w[p] = updated<T, MODE>(A, p, layer, c, cw, cv, lap);
            }
        }
#pragma unroll
        for (int k = 0; k < QN - 1; ++k) q[k] = q[k + 1];
        q[QN - 1] = nq;
        cxl = nxl; cxr = nxr; cw = nw; cv = nv; cyt = nyt; cyb = nyb;
        p += sz;
    }
}

// What to run should the driver refuse a tensor map.
constexpr const char* kNoTma = "Set RTM_CUDA_VARIANT=q32x8 (rtm bench: --variant q32x8)";

// ---------------------------------------------------------------------------------
// Bulk tensor copies (Hopper's copy engine, TMA) feeding the register queue: t32x16.
//
// The register queue along z of queue_kernel, but no thread loads a tile: one thread
// per block asks the copy engine for whole tiles, NB steps ahead, into shared-memory
// rings: u's plane tile with its x and y halos ((BX+8) x (BY+8) values) and the w and
// vdt2 tiles (BX x BY). Step k's three tiles complete on mbarrier k % NB. So the bytes
// in flight per block, NB x (u, w, vdt2 tiles) = 31 KB for 32x16 and NB = 4 in fp32,
// hold no registers and cost no load instructions (the q kernels keep one plane's loads
// in registers). The u ring
// keeps planes z..z+4 (the x/y wings of plane z, the queue's newest value at z+4) and
// the NB - 1 in flight; the queue's first 8 values come straight from global memory.
// 3D: no block-wide barrier: each warp, done with step k, arrives on empty barrier
// k % NB; the issuing thread waits for all warps there before refilling the slots step
// k freed, so warps run up to NB - 1 steps apart instead of meeting at every plane
// (ncu on the barrier version: 41% of stall cycles at the barrier; 512^3 full update
// 74.5% -> 82.7%). 2D rows (4 warps) keep the block barrier: the per-warp barriers
// cost 8 registers there, 16 -> 12 blocks per SM, and batches ran 71-75% against 78-81%.
// Out-of-box tile parts (right and bottom tiles) arrive as zeros.
// Bytes from DRAM as the 16 B (8 B stencil-only) minimum plus the tiles' halos, which
// the copy engine reads from L2 like the other kernels' halo loads.
// 2D: the tile is one row of BX points (BY = 1, no y halo), the queue runs along z.
// Every mode: with layers (kPml, kDamp) the zone points take queue_kernel's layer
// arithmetic (memory variables and damping read from global memory), and split
// launches run the kFull instance on the interior tiles.
// Needs: sm_90, row and plane strides multiples of 16 B (Box pads rows).
struct TmaMaps {
    CUtensorMap u, w, v;  // u[n] and w (batch members stacked along z), vdt2 (shared)
};

// The x tiles of the TMA kernels start XS = kTileShift<T> columns left of the computed
// box. fp32: XS = R, so that every tile's w and vdt2 rows (and the w it writes) are one
// 128-byte line (Box::sy() makes every padded row start on a line; the computed points
// start R values later). Unaligned, a 128-byte tile row spans two lines and 5 sectors
// shared with its neighbours: ncu (H100, 512^3 full update) read 1.97 GB from DRAM a
// step against 1.61 GB of minimum. Measured on an H200 (full update, t32x16): 512^3
// 81.6% -> 90.3% of the copy ceiling although the shift adds a 17th column of tiles,
// 440 x 440 x 340 84.8% -> 94.5%; C-PML modelling 512^3 44.1% -> 46.3%. fp64: 0, its
// computed points start on a sector already (32 bytes) and a shift that adds a column of
// tiles lost there (256^3: 91.8% unshifted, 89.7% shifted).
template <class T>
constexpr int kTileShift = sizeof(T) == 4 ? R : 0;

template <class T, int NDIM, int BX, int BY, int NB>
struct TmaShape {
    static constexpr int HY = NDIM == 3 ? R : 0;
    static constexpr int TW = BX + 2 * R, TH = BY + 2 * HY, NU = NB + 4;
    static constexpr int kU = TW * TH, kW = BX * BY;  // values per u tile, per w/vdt2 tile
    static constexpr int kA = 128 / sizeof(T);        // slots start 128-byte aligned (the copy engine's rule)
    static constexpr int sU = (kU + kA - 1) / kA * kA, sW = (kW + kA - 1) / kA * kA;  // slot strides
    // Shared memory: u ring, w ring, vdt2 ring; NB + 1 full barriers (the last for the
    // prologue) and NB empty barriers.
    static constexpr std::size_t bytes = sizeof(T) * (std::size_t(NU) * sU + 2 * std::size_t(NB) * sW) +
                                         8 * (2 * NB + 1);
};

// A TMA kernel's block: its tile (block_tile) and z steps, its rings in shared memory,
// and its leader's copies: step k's tiles are u's
// plane z0 + 4 + k (with halos) in u slot (k + 4) % NU, w's and vdt2's plane z0 + k in
// slot k % NB (WV: not for the stencil only), completing on full barrier k % NB; the
// prologue's planes z0 .. z0 + 3 (the wings of the first four steps) on barrier NB.
// Padded coordinates, x from the tile's left halo. 3D: warps free the slots of step k
// on empty barrier k % NB (each warp's first lane arrives), and the leader waits there
// before refilling them; 2D rows meet at the block barrier instead.
template <class T, int NDIM, int BX, int BY, int NB, bool WV>
struct TmaRing {
    using S = TmaShape<T, NDIM, BX, BY, NB>;
    T *us, *ws, *vs;
    std::uint64_t *bar, *empty;
    const TmaMaps& maps;
    BlockTile tile;
    int z0, nsteps;  // the tile's first plane, its planes
    int x0, y0, zm;  // the tile's corner in the u map; its first plane in the member's u and w

    __device__ TmaRing(unsigned char* smem, const TmaMaps& m, const Box& B, int zchunk, const int4* map)
        : us(reinterpret_cast<T*>(smem)), ws(us + S::NU * S::sU), vs(ws + NB * S::sW),
          bar(reinterpret_cast<std::uint64_t*>(vs + NB * S::sW)), empty(bar + NB + 1), maps(m),
          tile(block_tile(B, zchunk, map)), z0(tile.z0), nsteps(tile.z1 - tile.z0), x0(tile.bx * BX - kTileShift<T>),
          y0(tile.by * BY), zm(tile.member * (B.nz + 2 * R) + tile.z0) {}
    __device__ void issue(int k) const {
        std::uint64_t* b = bar + k % NB;
        mbar_expect_tx(b, unsigned(sizeof(T) * (S::kU + (WV ? 2 * S::kW : 0))));
        tma_load(us + ((k + 4) % S::NU) * S::sU, &maps.u, x0, y0, zm + 4 + k + R, b);
        if (WV) {
            tma_load(ws + (k % NB) * S::sW, &maps.w, x0 + R, y0 + S::HY, zm + k + R, b);
            tma_load(vs + (k % NB) * S::sW, &maps.v, x0 + R, y0 + S::HY, z0 + k + R, b);
        }
    }
    // Barriers set up, then (leader) the prologue and the first NB steps' copies.
    __device__ void start(bool leader, int warps) const {
        if (leader) {
            for (int i = 0; i <= NB; ++i) mbar_init(bar + i, 1);
            if (NDIM == 3)
                for (int i = 0; i < NB; ++i) mbar_init(empty + i, warps);
            asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");  // visible to the copy engine
        }
        __syncthreads();
        if (leader) {
            mbar_expect_tx(bar + NB, unsigned(sizeof(T) * 4 * S::kU));
            for (int j = 0; j < 4; ++j) tma_load(us + j * S::sU, &maps.u, x0, y0, zm + j + R, bar + NB);
            for (int k = 0; k < NB && k < nsteps; ++k) issue(k);
        }
    }
    __device__ void wait_prologue() const { mbar_wait(bar + NB, 0); }
    __device__ void wait(int k) const { mbar_wait(bar + k % NB, unsigned(k / NB) & 1u); }
    // This thread (`thread`: its linear index in the block) is done with step k.
    __device__ void release(int k, int thread, bool leader) const {
        if constexpr (NDIM == 3) {
            __syncwarp();
            if (thread % 32 == 0) mbar_arrive(empty + k % NB);
            if (leader && k + NB < nsteps) {
                mbar_wait(empty + k % NB, unsigned(k / NB) & 1u);  // the slots of step k are free
                issue(k + NB);
            }
        } else {
            __syncthreads();  // every thread is done with step k's slots
            if (leader && k + NB < nsteps) issue(k + NB);
        }
    }
};

// (No register cap but kLayerBlocks' for the 3D C-PML kernels: capping the plain kernel
// to 32 registers for 4 blocks of 512 per SM, and the layer kernels to 64 when they used
// 40, was 2-6 points slower on an H200.)
template <class T, int NDIM, int MODE, int BX, int BY, int NB>
__global__ void __launch_bounds__(BX * BY, kLayerBlocks<T, NDIM, MODE, BX * BY>) tma_kernel(StepArgs<T> A, int zchunk, const int4* map,
                                                      const __grid_constant__ TmaMaps maps) {
    using S = TmaShape<T, NDIM, BX, BY, NB>;
    constexpr int TW = S::TW, NU = S::NU, HY = S::HY;
    extern __shared__ __align__(128) unsigned char smem[];
    const Box& B = A.box;
    const TmaRing<T, NDIM, BX, BY, NB, MODE != kStencil> ring(smem, maps, B, zchunk, map);
    const int z0 = ring.z0, nsteps = ring.nsteps;
    A = A.member(ring.tile.member);
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int ix = ring.tile.bx * BX + tx - kTileShift<T>, iy = NDIM == 3 ? ring.tile.by * BY + ty : 0;
    const bool active = ix >= 0 && ix < B.nx && iy < B.ny;
    const bool leader = tx == 0 && ty == 0;
    const long sz = B.sz();
    ring.start(leader, (BX * BY + 31) / 32);
    const long p0 = active ? B.at(ix, iy, z0) : 0;
    T q[2 * R + 1];
#pragma unroll
    for (int k = 0; k < 2 * R; ++k) q[k] = active ? __ldg(A.u + p0 + (k - R) * sz) : T(0);

    const T hx = A.inv_h2[0], hy = A.inv_h2[1], hz = A.inv_h2[2];
    const T c0s = T(stencil::c2(0)) * (hx + hy + hz);
    const int me = (ty + HY) * TW + tx + R;  // this thread's point in a u tile
    const bool zx = MODE == kPml && axis_zone<T, NDIM>(B, 0, ix);
    const bool zy = MODE == kPml && NDIM == 3 && axis_zone<T, NDIM>(B, 1, iy);
    const bool lxy = MODE == kDamp && (in_layer(ix, B.nx, B.pml_lo[0], B.pml_hi[0]) ||
                                       (NDIM == 3 && in_layer(iy, B.ny, B.pml_lo[1], B.pml_hi[1])));
    // kDamp: step k's layer flag and k value, loaded a step ahead so that the load's
    // latency passes behind a plane of work. Loaded in the step that used it, it held the
    // shell's warps (ncu: L1TEX stalls half of the cycles between instructions). H200,
    // 512^3: the shell 434 -> 345 us (and 47 -> 40 registers: 3 blocks an SM, not 2), the
    // damping step 65.6% -> 73.6% of the copy ceiling. (The same prefetch of the C-PML
    // zone's psi and zeta, to L1 or L2, 1-4 steps ahead, moved its step < 1 point.)
    auto layer_at = [&](int k) { return MODE == kDamp && active && (lxy || in_layer(z0 + k, B.nz, B.pml_lo[2], B.pml_hi[2])); };
    bool layer_next = layer_at(0);
    T damp_next = layer_next ? __ldg(A.damp + p0) : T(0);
    ring.wait_prologue();
#pragma unroll 1
    for (int k = 0; k < nsteps; ++k) {
        const bool layer = layer_next;
        const T damp = damp_next;
        if (MODE == kDamp && k + 1 < nsteps) {
            layer_next = layer_at(k + 1);
            damp_next = layer_next ? __ldg(A.damp + p0 + (k + 1) * sz) : T(0);
        }
        ring.wait(k);
        q[2 * R] = ring.us[((k + 4) % NU) * S::sU + me];
        if (active) {
            const T* row = ring.us + (k % NU) * S::sU + me;
            const T c = q[R];
            const T wx = stencil::d2_wings(row, 1);
            const T wy = NDIM == 3 ? stencil::d2_wings(row, TW) : T(0);
            const T wz = T(stencil::c2(1)) * (q[R + 1] + q[R - 1]) + T(stencil::c2(2)) * (q[R + 2] + q[R - 2]) +
                         T(stencil::c2(3)) * (q[R + 3] + q[R - 3]) + T(stencil::c2(4)) * (q[R + 4] + q[R - 4]);
            const long p = p0 + k * sz;
            const int z = z0 + k;
            T lap = c0s * c + hx * wx + hz * wz + (NDIM == 3 ? hy * wy : T(0));
            if (MODE == kPml) {
                const bool zz = axis_zone<T, NDIM>(B, 2, z);
                if (zx || zy || zz) lap = zone_lap<T, NDIM>(A, ix, iy, z, c, wx, wy, wz, zx, zy, zz);
            }
            if (MODE == kStencil) {
                A.w[p] = lap;
            } else {
                const int t = (k % NB) * S::sW + ty * BX + tx;
                A.w[p] = updated_with<T, MODE>(layer, damp, c, ring.ws[t], ring.vs[t], lap);
            }
        }
        ring.release(k, tx + BX * ty, leader);
#pragma unroll
        for (int j = 0; j < 2 * R; ++j) q[j] = q[j + 1];
    }
}

// t32x32v4 (fp32; the full update and the stencil only). 3D: tma_kernel's rings and
// barriers on 32 x BY tiles, but each thread owns 4 consecutive points along x (8 x BY
// threads a tile), so that its shared-memory reads are 16-byte vectors: the x wings of
// its 4 points from 3 (the 12 values around them), the y wings from 8 (one a row), the
// plane's newest z value from 1: 12 load instructions for 4 points, against 17 for each
// point. The same arithmetic in the same order as tma_kernel's kFull and kStencil, point
// by point. Needs the tiles on lines (kTileShift<float> = R: a thread's 4 points start
// on 16 bytes, in shared and in global memory). Measured (H200, 512^3, against
// t32x16 in the same call): stencil only 56.9% -> 69.7% with 32 x 16 tiles, 71.3% with
// 32 x 32 (the u tile's halos 1.56x its points instead of 1.88x: the step is bound by L2
// once the load instructions are gone); full update 88.7% -> 89.9% and 92.1%. ncu
// (stencil only): 423 M -> 233 M warp instructions a step.
// 2D: rows of 128 points, one warp a block (the TMA box is at most 256 values wide), no
// y wings. ncu had tma_kernel's 2D plain kernel bound by instruction issue (SM 87%
// busy, DRAM 73%, 2001 x 601, a batch of 64); with 4 points a thread, H200: full update
// 84.8% -> 87.5%, C-PML step 52.5% -> 56.0% (the interior), 256-shot 2D migration
// 13.5 -> 12.4 s.
template <int NDIM, int MODE, int NB, int BX, int BY>
__global__ void __launch_bounds__(BX / 4 * BY, NDIM == 3 ? 3 : 16) tma4_kernel(StepArgs<float> A, int zchunk, const int4* map,
                                                   const __grid_constant__ TmaMaps maps) {
    using T = float;
    constexpr int VX = 4, HY = NDIM == 3 ? R : 0;
    using S = TmaShape<T, NDIM, BX, BY, NB>;
    constexpr int TW = S::TW, NU = S::NU;
    static_assert(kTileShift<T> == R && TW % VX == 0 && MODE != kPml && MODE != kDamp, "aligned vectors, no layers");
    static_assert(NDIM == 3 ? BX == 32 : BY == 1 && BX == 128, "3D: 32 x BY tiles; 2D: rows of 128, one warp");
    extern __shared__ __align__(128) unsigned char smem[];
    const Box& B = A.box;
    const TmaRing<T, NDIM, BX, BY, NB, MODE != kStencil> ring(smem, maps, B, zchunk, map);
    const int z0 = ring.z0, nsteps = ring.nsteps;
    A = A.member(ring.tile.member);
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int ix0 = ring.tile.bx * BX + tx * VX - kTileShift<T>, iy = NDIM == 3 ? ring.tile.by * BY + ty : 0;
    bool act[VX];
#pragma unroll
    for (int j = 0; j < VX; ++j) act[j] = ix0 + j >= 0 && ix0 + j < B.nx && iy < B.ny;
    const bool any = act[0] || act[1] || act[2] || act[3], all = act[0] && act[1] && act[2] && act[3];
    const bool leader = tx == 0 && ty == 0;
    const long sz = B.sz();
    ring.start(leader, BX / VX * BY / 32);
    // (A thread with a point in the box reads its 4 values as one vector: they lie in
    // its padded row, which holds whole vectors.)
    const long p0 = any ? B.at(ix0, iy, z0) : 0;
    float4 q[2 * R + 1];
#pragma unroll
    for (int k = 0; k < 2 * R; ++k)
        q[k] = any ? __ldg(reinterpret_cast<const float4*>(A.u + p0 + (k - R) * sz)) : make_float4(0, 0, 0, 0);

    const T hx = A.inv_h2[0], hy = A.inv_h2[1], hz = A.inv_h2[2];
    const T c0s = T(stencil::c2(0)) * (hx + hy + hz);
    const T k1 = T(stencil::c2(1)), k2 = T(stencil::c2(2)), k3 = T(stencil::c2(3)), k4 = T(stencil::c2(4));
    const int me = (ty + HY) * TW + tx * VX + R;  // the thread's first point in a u tile
    ring.wait_prologue();
#pragma unroll 1
    for (int k = 0; k < nsteps; ++k) {
        ring.wait(k);
        q[2 * R] = *reinterpret_cast<const float4*>(ring.us + ((k + 4) % NU) * S::sU + me);
        if (any) {
            const T* row = ring.us + (k % NU) * S::sU + me;
            float x[12];
            *reinterpret_cast<float4*>(x) = *reinterpret_cast<const float4*>(row - 4);
            *reinterpret_cast<float4*>(x + 4) = *reinterpret_cast<const float4*>(row);
            *reinterpret_cast<float4*>(x + 8) = *reinterpret_cast<const float4*>(row + 4);
            float ys[4][4] = {};  // ys[d - 1][j]: the sum of the rows d above and below, point j
#pragma unroll
            for (int d = 1; d <= (NDIM == 3 ? 4 : 0); ++d) {
                const float4 a = *reinterpret_cast<const float4*>(row + d * TW);
                const float4 b = *reinterpret_cast<const float4*>(row - d * TW);
                ys[d - 1][0] = a.x + b.x; ys[d - 1][1] = a.y + b.y; ys[d - 1][2] = a.z + b.z; ys[d - 1][3] = a.w + b.w;
            }
            const float* qz[2 * R + 1];
#pragma unroll
            for (int i = 0; i <= 2 * R; ++i) qz[i] = reinterpret_cast<const float*>(&q[i]);
            float out[VX];
            const long p = p0 + k * sz;
            float wold[VX], vv[VX];
            if (MODE != kStencil) {
                const int t = (k % NB) * S::sW + ty * BX + tx * VX;
                *reinterpret_cast<float4*>(wold) = *reinterpret_cast<const float4*>(ring.ws + t);
                *reinterpret_cast<float4*>(vv) = *reinterpret_cast<const float4*>(ring.vs + t);
            }
#pragma unroll
            for (int j = 0; j < VX; ++j) {
                const T c = qz[R][j];
                const T wx = stencil::d2_wings(x + 4 + j, 1);
                const T wy = k1 * ys[0][j] + k2 * ys[1][j] + k3 * ys[2][j] + k4 * ys[3][j];
                const T wz = k1 * (qz[R + 1][j] + qz[R - 1][j]) + k2 * (qz[R + 2][j] + qz[R - 2][j]) +
                             k3 * (qz[R + 3][j] + qz[R - 3][j]) + k4 * (qz[R + 4][j] + qz[R - 4][j]);
                const T lap = c0s * c + hx * wx + hz * wz + (NDIM == 3 ? hy * wy : T(0));
                out[j] = MODE == kStencil ? lap : T(2) * c - wold[j] + vv[j] * lap;
            }
            if (all) {
                *reinterpret_cast<float4*>(A.w + p) = *reinterpret_cast<const float4*>(out);
            } else {
#pragma unroll
                for (int j = 0; j < VX; ++j)
                    if (act[j]) A.w[p + j] = out[j];
            }
        }
        ring.release(k, tx + BX / VX * ty, leader);
#pragma unroll
        for (int j = 0; j < 2 * R; ++j) q[j] = q[j + 1];
    }
}

// Pass 1 of the C-PML: psi_AX <- b psi_AX + a d_AX u on the layer cells of axis AX only.
// x layers (y and z: psi_walk_kernel): index space the layer cells along x (lo + hi of
// them) times the rows; block rows along y, grid z the planes times the batch members;
// in 2D (one row a plane) block rows along z, grid z the members.
// Bytes per layer point: read u (+ neighbours along AX, cache hits), psi read + write: 12 B
// (psi at StepArgs::mem_at: kept near the layers only).
template <class T>
__global__ void __launch_bounds__(256) psi_x_kernel(StepArgs<T> A) {
    const Box& B = A.box;
    const int lo = B.pml_lo[0], hi = B.pml_hi[0];
    const int r = int(blockIdx.y * blockDim.y + threadIdx.y);
    const bool flat = B.ny == 1;
    const int c = int(blockIdx.x * blockDim.x + threadIdx.x), iy = flat ? 0 : r,
              iz = flat ? r : int(blockIdx.z % B.nz);
    A = A.member(flat ? blockIdx.z : blockIdx.z / B.nz);
    if (c >= lo + hi || iy >= B.ny || iz >= B.nz) return;
    const int ix = c < lo ? c : B.nx - hi + (c - lo);
    const long p = B.at(ix, iy, iz), q = A.mem_at(0, ix, iy, iz);
    T* psi = A.psi[0];
    psi[q] = A.b[0][ix] * psi[q] + A.a[0][ix] * stencil::d1_diff(A.u + p, 1) * A.inv_h[0];
}

// Pass 1 for the y or z layers (AX 1 or 2): one thread per x and other axis (z for y,
// y for z) and layer (low, high), walking the layer's cells along AX with u's column in a
// register queue, so each u value is loaded once instead of by 8 threads, the warp's 32
// threads on consecutive x; the same arithmetic as psi_x_kernel's (stencil::d1_diff).
// (y at 512^3 with 20-cell layers, ncu on an H200: 66 us, against 86 us for a thread per
// layer cell, 32 x 8 of them a block; the C-PML modelling step 46.1-46.3% -> 46.7-46.8%.)
// A layer is walked in `segs` pieces by as many threads (each loads its piece's 2R
// wings again) when one thread a column would leave the GPU mostly idle: 2D, a batch of
// 16 Marmousi shots, 52 K threads walked 20 cells each in 14-16 us; in 5 pieces, 9.6 us,
// and the step 0.121 -> 0.114 ms (H200). Each cell's arithmetic is the same.
template <class T, int AX>
__global__ void __launch_bounds__(256) psi_walk_kernel(StepArgs<T> A, int segs) {
    static_assert(AX == 1 || AX == 2, "x layers: psi_x_kernel");
    const Box& B = A.box;
    const int ix = blockIdx.x * blockDim.x + threadIdx.x, io = blockIdx.y * blockDim.y + threadIdx.y;
    const int piece = blockIdx.z % (2 * segs);  // grid z: (2 layers x segs) x batch members
    const bool high = piece % 2;
    A = A.member(blockIdx.z / (2 * segs));
    const int n = AX == 1 ? B.ny : B.nz, no = AX == 1 ? B.nz : B.ny;
    const int l0 = high ? n - B.pml_hi[AX] : 0, l1 = high ? n : B.pml_lo[AX];
    const int per = (l1 - l0 + segs - 1) / segs;
    const int a0 = l0 + piece / 2 * per, a1 = min(l1, a0 + per);
    if (ix >= B.nx || io >= no || a0 >= a1) return;
    const long s = AX == 1 ? B.sy() : B.sz();
    const T* u = A.u + (AX == 1 ? B.at(ix, a0, io) : B.at(ix, io, a0));
    T q[2 * R + 1];
#pragma unroll
    for (int k = 0; k < 2 * R; ++k) q[k] = __ldg(u + (k - R) * s);
    T* psi = A.psi[AX];
#pragma unroll 1
    for (int a = a0; a < a1; ++a, u += s) {
        q[2 * R] = __ldg(u + R * s);
        const long m = AX == 1 ? A.mem_at(1, ix, a, io) : A.mem_at(2, ix, io, a);
        psi[m] = A.b[AX][a] * psi[m] + A.a[AX][a] * stencil::d1_diff(q + R, 1) * A.inv_h[AX];
#pragma unroll
        for (int k = 0; k < 2 * R; ++k) q[k] = q[k + 1];
    }
}

template <class T>
__global__ void free_surface_kernel(Box B, T* f) {
    const int ix = blockIdx.x * blockDim.x + threadIdx.x;
    const int iy = blockIdx.y;
    if (ix >= B.nx) return;
    f += long(B.padded_size()) * blockIdx.z;  // grid z: batch members
    f[B.at(ix, iy, 0)] = 0;
#pragma unroll
    for (int k = 1; k <= R; ++k) f[B.at(ix, iy, -k)] = -f[B.at(ix, iy, k)];
}

// ---------------------------------------------------------------------------------
// Host side.

// smem: the kernel's dynamic shared memory (the TMA kernels'), allowed once per kernel.
int blocks_per_sm(const void* kernel, int threads, int smem = 0) {
    static std::mutex mu;
    static std::map<const void*, int> cache;
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(kernel);
    if (it != cache.end()) return it->second;
    if (smem > 0)
        RTM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    int n = 0;
    RTM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, threads, smem));
    cache[kernel] = std::max(n, 1);
    return cache[kernel];
}

// z planes per block: the fewest chunks whose blocks fill the resident slots in whole
// waves within ~3%, weighing the queue start-up (8 planes of u re-read per chunk, about
// 8/(4 zchunk) of the traffic).
// max_chunk: the TMA kernels run faster with short chunks (H200, 512^3 full update:
// 78% at 64 planes, 73-74% at 103-128, 65% at 512), although each chunk re-reads 8
// planes: with more, shorter columns in flight the tiles that share halos run closer
// together in z, and the halos come from L2 (ncu at 103 planes: DRAM reads 1.3x the minimum).
constexpr int kTmaMaxChunk = 64;
int choose_zchunk(long blocks_xy, int nz, int resident, int max_chunk = 1 << 30, int min_chunk = 16) {
    double best = -1;
    int best_chunk = std::min(nz, max_chunk);
    for (int chunks = 1; chunks <= std::max(1, nz / min_chunk); ++chunks) {
        const int zc = (nz + chunks - 1) / chunks;
        if (zc > max_chunk) continue;
        const long blocks = blocks_xy * ((nz + zc - 1) / zc);
        const double waves = double(blocks) / resident;
        const double fill = waves / std::ceil(waves);
        // Many waves smooth the tail out (blocks finish at different times).
        const double eff_fill = 1 - (1 - fill) / std::max(1.0, std::floor(waves));
        const double eff = eff_fill / (1 + 2.0 / zc);
        if (eff > best * 1.0001) {
            best = eff;
            best_chunk = zc;
        }
    }
    return best_chunk;
}

template <class T, int NDIM, int MODE>
struct Launch {
    const void* kernel = nullptr;
    const void* interior = nullptr;  // queue variants: the same tile's plain (kFull) kernel
    dim3 grid, block, interior_block;
    int zchunk = 0;
    int tile_x = 0, tile_y = 0;      // outputs per block along x and y
    int shift_x = 0;                 // tile i's first column: i tile_x - shift_x (kTileShift)
    // TMA kernels (the kernel, or the interior one with layers): their dynamic shared memory.
    int kernel_smem = 0, interior_smem = 0;
    bool kernel_tma = false, interior_tma = false;
};

// CUDA's launch grids stop at 65535 blocks along y and z. Batch members are a grid
// dimension of every batched launch: z holds planes or z chunks times members (at most
// nz per member), the split launches' y one per member, the free surface's z one per
// member. So a batch runs in groups of members for which every launch fits (one
// mechanism for every batched kernel): member_groups(batch, z blocks per member, fn)
// calls fn(first member, members) on consecutive groups. Members are independent and
// every point's arithmetic is the same in any launch shape: results do not depend on
// the grouping.
constexpr long kMaxGridYZ = 65535;
int members_per_launch(long z_per_member) { return int(std::max(1L, kMaxGridYZ / std::max(1L, z_per_member))); }
template <class F>
void member_groups(int batch, long z_per_member, F&& fn) {
    const int most = members_per_launch(z_per_member);
    for (int m0 = 0; m0 < batch; m0 += most) fn(m0, std::min(most, batch - m0));
}

// A launch grid's z extent: planes or z chunks times the members of one group (above
// 65535 only for a single member of more planes than that).
unsigned grid_z(long n) {
    if (n > kMaxGridYZ)
        fail("step_cuda", std::to_string(n) + " z blocks (planes or chunks x batch members) exceed the launch "
                                              "grid's 65535",
             "Use a grid of fewer than 65536 planes along z");
    return unsigned(n);
}

template <class T, int NDIM, int BX, int BY, int MODE>
Launch<T, NDIM, MODE> queue_launch(const Box& B, int zchunk, int batch) {
    Launch<T, NDIM, MODE> L;
    L.kernel = reinterpret_cast<const void*>(&queue_kernel<T, NDIM, BX, BY, MODE>);
    if constexpr (MODE == kPml || MODE == kDamp)
        L.interior = reinterpret_cast<const void*>(&queue_kernel<T, NDIM, BX, BY, kFull>);
    L.block = L.interior_block = dim3(BX, BY, 1);
    L.tile_x = BX;
    L.tile_y = NDIM == 3 ? BY : 1;
    const long gx = (B.nx + BX - 1) / BX, gy = NDIM == 3 ? (B.ny + L.tile_y - 1) / L.tile_y : 1;
    if (zchunk <= 0) zchunk = choose_zchunk(gx * gy * batch, B.nz, sm_count() * blocks_per_sm(L.kernel, BX * BY));
    zchunk = std::min(zchunk, B.nz);
    L.grid = dim3(unsigned(gx), unsigned(gy), grid_z(long(batch) * ((B.nz + zchunk - 1) / zchunk)));
    L.zchunk = zchunk;
    return L;
}

// The z chunks of a TMA launch that fill the SMs with its kernel's own occupancy (its
// block and shared memory), at most kTmaMaxChunk planes.
template <class T, int NDIM, int MODE>
void tma_chunks(Launch<T, NDIM, MODE>& L, const Box& B, int batch) {
    const int resident = sm_count() * blocks_per_sm(L.kernel, int(L.block.x * L.block.y), L.kernel_smem);
    L.zchunk = std::min(B.nz, choose_zchunk(long(L.grid.x) * L.grid.y * batch, B.nz, resident, kTmaMaxChunk));
    L.grid.z = grid_z(long(batch) * ((B.nz + L.zchunk - 1) / L.zchunk));
}

// TMA variants: tma_kernel of the mode (with layers also its kFull instance for the
// interior of split launches). On a GPU before Hopper: q32x8 (the best q variant with
// layers; 2D: the 128-wide row).
template <class T, int NDIM, int BX, int BY, int MODE, int NB>
Launch<T, NDIM, MODE> tma_launch(const Box& B, int zchunk, int batch) {
    if (!tma_supported()) return queue_launch<T, NDIM, NDIM == 3 ? 32 : 128, NDIM == 3 ? 8 : 1, MODE>(B, zchunk, batch);
    constexpr int smem = int(TmaShape<T, NDIM, BX, BY, NB>::bytes);
    const void* tma = reinterpret_cast<const void*>(&tma_kernel<T, NDIM, MODE, BX, BY, NB>);
    auto L = queue_launch<T, NDIM, BX, BY, MODE>(B, zchunk, batch);
    if (MODE == kPml || MODE == kDamp) {
        L.interior = reinterpret_cast<const void*>(&tma_kernel<T, NDIM, kFull, BX, BY, NB>);
        L.interior_smem = smem;
        L.interior_tma = true;
    }
    L.kernel = tma;
    L.kernel_smem = smem;
    L.kernel_tma = true;
    L.shift_x = kTileShift<T>;
    L.grid.x = unsigned((B.nx + L.shift_x + BX - 1) / BX);
    if (zchunk <= 0) tma_chunks(L, B, batch);
    return L;
}

// t32x32v4: tma4_kernel on 32 x 32 tiles (blocks of 8 x 32 threads) for the 3D fp32
// full update and stencil only, on rows of 128 (one warp) for the 2D fp32 plain kernel
// (alone, or as the interior of a split launch: its shell keeps tma_kernel's rows, and
// the tiles are the same); t32x16's launch for everything else (3D layers, fp64).
// 3D planes copied ahead: 3 for the stencil only, 2 for the full update (its w and vdt2
// rings too), so that 3 blocks fit an SM (69 and 55 KB of shared memory; the kernel is
// compiled for 3 blocks, 80 registers). Measured (H200, four grids from 320^3 to 512^3,
// against 4 planes ahead and 2 blocks per SM): stencil only 3.6-7.4% faster with 3
// planes (2: 0-7% slower), full update 0-2.8% faster with 2 (3: 1-4% slower).
template <class T, int NDIM, int MODE>
Launch<T, NDIM, MODE> vector_launch(const Box& B, int zchunk, int batch) {
    if constexpr (std::is_same_v<T, float> && NDIM == 3 && (MODE == kFull || MODE == kStencil)) {
        constexpr int BY = 32, NB = MODE == kStencil ? 3 : 2;
        auto L = tma_launch<T, NDIM, 32, BY, MODE, NB>(B, zchunk, batch);
        if (!L.kernel_tma) return L;  // before Hopper: q32x8
        L.kernel = reinterpret_cast<const void*>(&tma4_kernel<3, MODE, NB, 32, BY>);
        L.block = dim3(8, BY, 1);
        if (zchunk <= 0) tma_chunks(L, B, batch);
        return L;
    } else if constexpr (NDIM == 2) {
        auto L = tma_launch<T, NDIM, 128, 1, MODE, 6>(B, zchunk, batch);
        if constexpr (std::is_same_v<T, float>) {  // (fp64: tma_kernel's rows)
            if (!L.kernel_tma) return L;
            // Rows ahead: 4 (9.3 KB of shared memory a block of 32 threads, 77 registers:
            // 22 blocks an SM, shared memory the limit).
            constexpr int NB = 4, smem = int(TmaShape<T, 2, 128, 1, NB>::bytes);
            if constexpr (MODE == kFull || MODE == kStencil) {
                L.kernel = reinterpret_cast<const void*>(&tma4_kernel<2, MODE, NB, 128, 1>);
                L.block = dim3(32, 1, 1);
                L.kernel_smem = smem;
                if (zchunk <= 0) tma_chunks(L, B, batch);
            } else {
                L.interior = reinterpret_cast<const void*>(&tma4_kernel<2, kFull, NB, 128, 1>);
                L.interior_block = dim3(32, 1, 1);
                L.interior_smem = smem;
            }
        }
        return L;
    } else {
        return tma_launch<T, NDIM, 32, 16, MODE, 4>(B, zchunk, batch);
    }
}

template <class T, int NDIM, int MODE>
Launch<T, NDIM, MODE> make_launch(const Box& B, const LaunchConfig& cfg, int batch) {
    if (cfg.variant == Variant::Naive) {
        Launch<T, NDIM, MODE> L;
        L.kernel = reinterpret_cast<const void*>(&naive_kernel<T, NDIM, MODE>);
        L.block = NDIM == 3 ? dim3(32, 8, 1) : dim3(256, 1, 1);
        L.grid = dim3((B.nx + L.block.x - 1) / L.block.x, NDIM == 3 ? (B.ny + 7) / 8 : 1, grid_z(long(B.nz) * batch));
        return L;
    }
    if constexpr (NDIM == 2) {
        if (cfg.variant == Variant::T32x32v4) return vector_launch<T, NDIM, MODE>(B, cfg.zchunk, batch);
        if (cfg.variant == Variant::T32x16 || cfg.variant == Variant::T32x8)
            return tma_launch<T, NDIM, 128, 1, MODE, 6>(B, cfg.zchunk, batch);
        if (cfg.variant == Variant::T32x8s6) return tma_launch<T, NDIM, 128, 1, MODE, 12>(B, cfg.zchunk, batch);
        return queue_launch<T, NDIM, 128, 1, MODE>(B, cfg.zchunk, batch);
    } else {
        switch (cfg.variant) {
            case Variant::T32x16: return tma_launch<T, NDIM, 32, 16, MODE, 4>(B, cfg.zchunk, batch);
            case Variant::T32x8: return tma_launch<T, NDIM, 32, 8, MODE, 4>(B, cfg.zchunk, batch);
            case Variant::T32x8s6: return tma_launch<T, NDIM, 32, 8, MODE, 6>(B, cfg.zchunk, batch);
            case Variant::T32x32v4: return vector_launch<T, NDIM, MODE>(B, cfg.zchunk, batch);
            case Variant::Q32x8: return queue_launch<T, NDIM, 32, 8, MODE>(B, cfg.zchunk, batch);
            default: return queue_launch<T, NDIM, 32, 16, MODE>(B, cfg.zchunk, batch);
        }
    }
}

// One launch of L's kernel (interior: its interior kernel) over `grid`; a TMA kernel
// gets its tensor maps (built here: u and w swap every step) and shared memory.
template <class T, int NDIM, int MODE>
void launch(const Launch<T, NDIM, MODE>& L, bool interior, dim3 grid, const StepArgs<T>& A, int zchunk,
            const int4* map, cudaStream_t s) {
    StepArgs<T> args = A;
    const void* kernel = interior ? L.interior : L.kernel;
    const bool tma = interior ? L.interior_tma : L.kernel_tma;
    TmaMaps maps{};
    int smem = 0;
    if (tma) {
        const Box& B = A.box;
        const long planes = long(B.nz + 2 * R);
        const int bx = L.tile_x, by = L.tile_y;
        maps.u = tensor_map(A.u, B, planes * A.batch, bx + 2 * R, by + 2 * B.halo_y(), kNoTma);
        maps.w = tensor_map<T>(A.w, B, planes * A.batch, bx, by, kNoTma);
        maps.v = tensor_map(MODE == kStencil ? A.u : A.vdt2, B, planes, bx, by, kNoTma);
        smem = interior ? L.interior_smem : L.kernel_smem;
        const dim3 b = interior ? L.interior_block : L.block;
        blocks_per_sm(kernel, int(b.x * b.y), smem);  // allows the shared memory (once)
    }
    void* params[4] = {&args, &zchunk, &map, &maps};
    RTM_CUDA_CHECK(cudaLaunchKernel(kernel, grid, interior ? L.interior_block : L.block, params, smem, s));
}

template <class T, int NDIM, int MODE>
void launch_main(const StepArgs<T>& A, const LaunchConfig& cfg, cudaStream_t s) {
    const auto L = make_launch<T, NDIM, MODE>(A.box, cfg, A.batch);
    launch(L, false, L.grid, A, L.zchunk, nullptr, s);
}

// Split launches of a box with layers: the tiles (x-y tile x z chunk) that touch no
// layer zone (layer + R cells, where C-PML terms or damping act) go to the plain kernel,
// the rest (the shell) to the layer kernel. Block lists {tile x, tile y, z0, z1}, built
// once per box and tile shape, x fastest then y then z (neighbours resident together).
// The shell's z chunks are its own, for its own kernel's resident blocks, down to 4
// planes: a layer block's time is a chain of dependent loads per plane, so when its
// columns are few (2D, small batches) the shell lasts as long as one chunk's chain. H200,
// C-PML steps: one 8001 x 2001 shot 45.0% -> 65.4% of the copy ceiling with 4-plane
// chunks for every grid, a batch of 16 Marmousi shots 32.6% -> 37.9%; but 3D and large 2D
// batches lose with chunks that short (440 x 440 x 340: 43.7% -> 39.1%). With the shell's
// own choice: 66.9%, 36.7% and 43.5%.
struct SplitMap {
    const int4* inner = nullptr;
    const int4* shell = nullptr;
    int n_inner = 0, n_shell = 0;
};

// The shell's chunks are chosen for 2 waves of its resident blocks: its blocks differ in
// cost (zone columns against plain ones), and more of them balance. H200, C-PML steps,
// 1 / 2 / 4 waves: a batch of 64 2001 x 601 shots 54.4% / 55.8% / 56.6%, of 16 Marmousi
// shots 36.7% / 38.1% / 38.2%; one 8001 x 2001 shot, 440 x 440 x 340 and 512^3 alike
// within a point.
constexpr int kShellWaves = 2;
SplitMap split_map(const Box& B, int TX, int TY, int XS, int zchunk, int resident, int resident_shell, int batch,
                   int max_chunk) {
    static std::mutex mu;
    static std::map<std::vector<long>, SplitMap> cache;
    const std::vector<long> key = {B.ndim, B.nx, B.ny, B.nz, B.pml_lo[0], B.pml_lo[1], B.pml_lo[2],
                                   B.pml_hi[0], B.pml_hi[1], B.pml_hi[2], TX, TY, XS, zchunk, resident,
                                   resident_shell, batch, max_chunk};
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
    const int gx = (B.nx + XS + TX - 1) / TX, gy = B.ndim == 3 ? (B.ny + TY - 1) / TY : 1;
    auto zone_tile = [&](int i, int j) {
        const int xa = std::max(0, i * TX - XS), xb = std::min(B.nx, i * TX - XS + TX);
        if ((B.pml_lo[0] > 0 && xa < B.pml_lo[0] + R) || (B.pml_hi[0] > 0 && xb > B.nx - B.pml_hi[0] - R))
            return true;
        if (B.ndim != 3) return false;
        const int ya = j * TY, yb = std::min(B.ny, ya + TY);
        return (B.pml_lo[1] > 0 && ya < B.pml_lo[1] + R) || (B.pml_hi[1] > 0 && yb > B.ny - B.pml_hi[1] - R);
    };
    const int zlo = B.pml_lo[2] > 0 ? std::min(B.nz, B.pml_lo[2] + R) : 0;
    const int zhi = B.pml_hi[2] > 0 ? std::max(zlo, B.nz - B.pml_hi[2] - R) : B.nz;
    long inner_xy = 0;
    for (int j = 0; j < gy; ++j)
        for (int i = 0; i < gx; ++i) inner_xy += !zone_tile(i, j);
    int zc = zchunk > 0 ? zchunk
                        : choose_zchunk(std::max(1L, inner_xy) * batch, std::max(1, zhi - zlo), resident, max_chunk);
    zc = std::max(1, zc);
    const long zone_xy = long(gx) * gy - inner_xy;
    const int zs = std::max(1, zchunk > 0 ? zchunk
                                          : choose_zchunk(std::max(1L, zone_xy) * batch, B.nz, kShellWaves * resident_shell,
                                                          max_chunk, 4));
    std::vector<int4> inner, shell;
    auto chunks = [&](std::vector<int4>& out, int za, int zb, bool want_zone, int c) {
        for (int z = za; z < zb; z += c)
            for (int j = 0; j < gy; ++j)
                for (int i = 0; i < gx; ++i)
                    if (zone_tile(i, j) == want_zone) out.push_back(make_int4(i, j, z, std::min(z + c, zb)));
    };
    chunks(inner, zlo, zhi, false, zc);
    chunks(shell, 0, B.nz, true, zs);
    chunks(shell, 0, zlo, false, zs);
    chunks(shell, zhi, B.nz, false, zs);
    auto upload = [](const std::vector<int4>& v) -> const int4* {
        if (v.empty()) return nullptr;
        int4* d = nullptr;  // kept for the process's life (a few KB per box shape)
        RTM_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&d), v.size() * sizeof(int4)));
        RTM_CUDA_CHECK(cudaMemcpy(d, v.data(), v.size() * sizeof(int4), cudaMemcpyHostToDevice));
        return d;
    };
    SplitMap m;
    m.inner = upload(inner);
    m.shell = upload(shell);
    m.n_inner = int(inner.size());
    m.n_shell = int(shell.size());
    cache[key] = m;
    return m;
}

// A second stream per (device, caller's stream) for LaunchConfig::overlap: created
// non-blocking at the highest priority (its blocks are dispatched first as slots free
// up), with the fork and join events; never destroyed (one per stream ever used).
struct SideStream {
    cudaStream_t stream = nullptr;
    cudaEvent_t fork = nullptr, join = nullptr;
    std::mutex mu;  // one step's fork ... join at a time
};

SideStream& side_stream(cudaStream_t main) {
    static std::mutex mu;
    static std::map<std::pair<int, cudaStream_t>, std::unique_ptr<SideStream>> all;
    int dev = 0;
    RTM_CUDA_CHECK(cudaGetDevice(&dev));
    std::lock_guard<std::mutex> lock(mu);
    auto& e = all[{dev, main}];
    if (!e) {
        auto s = std::make_unique<SideStream>();
        int least = 0, greatest = 0;
        RTM_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
        RTM_CUDA_CHECK(cudaStreamCreateWithPriority(&s->stream, cudaStreamNonBlocking, greatest));
        RTM_CUDA_CHECK(cudaEventCreateWithFlags(&s->fork, cudaEventDisableTiming));
        RTM_CUDA_CHECK(cudaEventCreateWithFlags(&s->join, cudaEventDisableTiming));
        e = std::move(s);
    }
    return *e;
}

template <class T, int AX>
void launch_psi(const StepArgs<T>& A, cudaStream_t s);

// The update of a box with layers (MODE kPml or kDamp): split (queue variants, unless
// cfg.split is off) or one launch of the layer kernel over the whole box. C-PML: pass 1
// (psi) first. With the split and cfg.overlap, pass 1 (overlap 1) or pass 1 and the
// shell (overlap 2) go to a side stream forked from `s` and joined back into it, so
// they run beside the interior launch (which touches neither psi nor zeta; the shell
// and the interior write disjoint points of w and only read u).
template <class T, int NDIM, int MODE>
void launch_layers(const StepArgs<T>& A, const LaunchConfig& cfg, cudaStream_t s) {
    const auto L = make_launch<T, NDIM, MODE>(A.box, cfg, A.batch);
    auto psi = [&](cudaStream_t st) {
        if (MODE != kPml) return;
        launch_psi<T, 0>(A, st);
        if (NDIM == 3) launch_psi<T, 1>(A, st);
        launch_psi<T, 2>(A, st);
    };
    if (!cfg.split || !L.interior) {
        psi(s);
        launch(L, false, L.grid, A, L.zchunk, nullptr, s);
        return;
    }
    const int threads = int(L.interior_block.x * L.interior_block.y), shell_threads = int(L.block.x * L.block.y);
    const SplitMap M = split_map(A.box, L.tile_x, L.tile_y, L.shift_x, cfg.zchunk,
                                 sm_count() * blocks_per_sm(L.interior, threads, L.interior_smem),
                                 sm_count() * blocks_per_sm(L.kernel, shell_threads, L.kernel_smem), A.batch,
                                 L.interior_tma ? kTmaMaxChunk : 1 << 30);
    const unsigned nb = unsigned(A.batch);  // split grids: (blocks of the map, batch members)
    const int ov = (MODE == kPml || cfg.overlap >= 2) && M.n_inner ? cfg.overlap : 0;
    if (ov <= 0) {
        psi(s);
        if (M.n_inner) launch(L, true, dim3(unsigned(M.n_inner), nb), A, 0, M.inner, s);
        if (M.n_shell) launch(L, false, dim3(unsigned(M.n_shell), nb), A, 0, M.shell, s);
        return;
    }
    SideStream& side = side_stream(s);
    std::lock_guard<std::mutex> lock(side.mu);
    RTM_CUDA_CHECK(cudaEventRecord(side.fork, s));
    RTM_CUDA_CHECK(cudaStreamWaitEvent(side.stream, side.fork, 0));
    psi(side.stream);
    if (ov >= 2 && M.n_shell) launch(L, false, dim3(unsigned(M.n_shell), nb), A, 0, M.shell, side.stream);
    RTM_CUDA_CHECK(cudaEventRecord(side.join, side.stream));
    launch(L, true, dim3(unsigned(M.n_inner), nb), A, 0, M.inner, s);
    RTM_CUDA_CHECK(cudaStreamWaitEvent(s, side.join, 0));
    if (ov < 2 && M.n_shell) launch(L, false, dim3(unsigned(M.n_shell), nb), A, 0, M.shell, s);
}

template <class T, int AX>
void launch_psi(const StepArgs<T>& A, cudaStream_t s) {
    const Box& B = A.box;
    const int L = B.pml_lo[AX] + B.pml_hi[AX];
    if (!L || !A.psi[AX]) return;
    if constexpr (AX != 0) {
        const int no = AX == 1 ? B.nz : B.ny;  // the other axis a thread stands on
        const int bx = no == 1 ? 256 : 32, by = 256 / bx;  // (2D: rows of 256 columns)
        // Pieces: enough threads for the resident slots of every SM (2048 threads each),
        // at most a quarter of the larger layer's cells (so a piece of the smaller layer
        // may hold fewer than 4).
        const long columns = 2L * B.nx * no * A.batch, slots = 2048L * sm_count();
        const int segs = int(std::clamp((slots + columns - 1) / columns, 1L, long(std::max({1, B.pml_lo[AX] / 4, B.pml_hi[AX] / 4}))));
        const dim3 block(bx, by, 1), grid((B.nx + bx - 1) / bx, (no + by - 1) / by, grid_z(2L * segs * A.batch));
        psi_walk_kernel<T, AX><<<grid, block, 0, s>>>(A, segs);
        RTM_CUDA_CHECK_LAUNCH("psi_walk_kernel");
    } else {
        // x layers: 8 x cells by 32 rows per block (a warp reads 32-byte row pieces), not
        // 32 by 8, which left 24 of 64 lanes idle on 20-cell layers. 2D: rows are planes.
        const int bx = 8, by = 32;
        const bool flat = B.ny == 1;
        const dim3 block(bx, by, 1), grid((L + bx - 1) / bx, ((flat ? B.nz : B.ny) + by - 1) / by,
                                          grid_z(long(flat ? 1 : B.nz) * A.batch));
        psi_x_kernel<T><<<grid, block, 0, s>>>(A);
        RTM_CUDA_CHECK_LAUNCH("psi_x_kernel");
    }
}

template <class T, int NDIM>
void step_dim(const StepArgs<T>& A, const LaunchConfig& cfg, cudaStream_t s) {
    if (A.box.has_pml() && A.damp) {
        launch_layers<T, NDIM, kDamp>(A, cfg, s);
    } else if (A.box.has_pml()) {
        launch_layers<T, NDIM, kPml>(A, cfg, s);
    } else {
        launch_main<T, NDIM, kFull>(A, cfg, s);  // (damp, if given, is 0 everywhere)
    }
    if (A.box.free_surface) free_surface_cuda(A.box, A.w, s, A.batch);
}

}  // namespace

const std::vector<std::string>& variant_names() {
    static const std::vector<std::string> names = {"naive", "q32x16", "q32x8", "t32x16", "t32x8", "t32x8s6", "t32x32v4"};
    return names;
}

const char* variant_name(Variant v) { return variant_names()[int(v)].c_str(); }

Variant parse_variant(const std::string& name) {
    const auto& n = variant_names();
    for (std::size_t i = 0; i < n.size(); ++i)
        if (n[i] == name) return Variant(i);
    std::string all;
    for (const auto& s : n) all += (all.empty() ? "" : ", ") + s;
    fail("option --variant", "unknown kernel variant '" + name + "'", "Use one of " + all);
}

template <class T>
void step_cuda(const StepArgs<T>& args, const LaunchConfig& cfg, cudaStream_t stream) {
    member_groups(args.batch, args.box.nz, [&](int m0, int members) {
        StepArgs<T> group = args.member(m0);
        group.batch = members;
        if (args.box.ndim == 3) step_dim<T, 3>(group, cfg, stream);
        else step_dim<T, 2>(group, cfg, stream);
    });
}

template <class T>
void stencil_cuda(const Box& box, const T inv_h2[3], const T* u, T* out, const LaunchConfig& cfg,
                  cudaStream_t stream) {
    StepArgs<T> A;
    A.box = box;
    for (int i = 0; i < 3; ++i) A.inv_h2[i] = inv_h2[i];
    A.u = u;
    A.w = out;
    if (box.ndim == 3) launch_main<T, 3, kStencil>(A, cfg, stream);
    else launch_main<T, 2, kStencil>(A, cfg, stream);
}

template <class T>
void free_surface_cuda(const Box& box, T* f, cudaStream_t stream, int batch) {
    member_groups(batch, 1, [&](int m0, int members) {
        const dim3 block(128), grid((box.nx + 127) / 128, box.ny, grid_z(members));
        free_surface_kernel<T><<<grid, block, 0, stream>>>(box, f + long(box.padded_size()) * m0);
        RTM_CUDA_CHECK_LAUNCH("free_surface_kernel");
    });
}

template <class T>
KernelInfo describe_step(const Box& box, const LaunchConfig& cfg, bool stencil_only, int batch) {
    batch = std::min(batch, members_per_launch(box.nz));  // one group's launch (member_groups)
    auto fill = [&](auto L) {
        KernelInfo k;
        cudaFuncAttributes fa;
        RTM_CUDA_CHECK(cudaFuncGetAttributes(&fa, L.kernel));
        k.regs = fa.numRegs;
        k.smem = int(fa.sharedSizeBytes) + L.kernel_smem;
        k.threads = int(L.block.x * L.block.y * L.block.z);
        k.blocks_per_sm = blocks_per_sm(L.kernel, k.threads, L.kernel_smem);
        k.zchunk = L.zchunk;
        k.blocks = long(L.grid.x) * L.grid.y * L.grid.z;
        return k;
    };
    if (box.ndim == 3) {
        if (stencil_only) return fill(make_launch<T, 3, kStencil>(box, cfg, batch));
        return box.has_pml() ? fill(make_launch<T, 3, kPml>(box, cfg, batch))
                             : fill(make_launch<T, 3, kFull>(box, cfg, batch));
    }
    if (stencil_only) return fill(make_launch<T, 2, kStencil>(box, cfg, batch));
    return box.has_pml() ? fill(make_launch<T, 2, kPml>(box, cfg, batch))
                         : fill(make_launch<T, 2, kFull>(box, cfg, batch));
}

#define RTM_INSTANTIATE(T)                                                                                   \
    template void step_cuda<T>(const StepArgs<T>&, const LaunchConfig&, cudaStream_t);                       \
    template void stencil_cuda<T>(const Box&, const T[3], const T*, T*, const LaunchConfig&, cudaStream_t);  \
    template void free_surface_cuda<T>(const Box&, T*, cudaStream_t, int);                                        \
    template KernelInfo describe_step<T>(const Box&, const LaunchConfig&, bool, int);
RTM_INSTANTIATE(float)
RTM_INSTANTIATE(double)

}  // namespace rtm::kernels::cuda
