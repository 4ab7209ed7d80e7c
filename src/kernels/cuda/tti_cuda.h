#pragma once
// CUDA time step of the pseudo-acoustic VTI/TTI system: the twin of kernels::tti_step_cpu
// (kernels/cpu/tti_cpu.h: same TtiStepArgs, same equations, same stencil coefficients,
// same treatment of the halo, the damping layers and the free surface). Arrays in
// TtiStepArgs are device pointers here. The system: docs/anisotropy.md.
//
//   u[n+1] = 2 u[n] - u[n-1] + W L u[n] (damped: (2 u - (1 - k) u[n-1] + W L u) / (1 + k)),
//   u = (p, q), W = [[cpp, cpq], [cpq, cqq]], L = diag(H, V);
//   VTI: H = Dxx + Dyy, V = Dzz (compact 8th-order second derivatives);
//   TTI: H = Lap_c - div(n n^T grad), V = Lap_c - div((I - n n^T) grad), grad and div the
//        8th-order first-derivative stencils; the fluxes n n^T grad p and
//        (I - n n^T) grad q are zero outside the computed points (the CPU twin's zero
//        scratch halo) but above a free surface, where p and q are mirrored oddly and the
//        z fluxes evenly. Elsewhere the arrays' halo and row padding hold zeros
//        (Domain::each_stored; SWiC's tiles read them, and mask its fluxes there besides).
//
// Kernels (TtiKernel), bytes counted per computed point in fp32 (minimal DRAM traffic:
// each array read or written once), flops counted from the code (an FMA counts 2; a
// first derivative 4 differences + 4 FMAs + its 1/h = 13, a compact second derivative's
// wings 4 sums + 4 FMAs = 12):
//   two-pass: the CPU twin's two passes, one thread per point, neighbours through L1/L2.
//     TTI 3D: pass 1 reads p, q, n (5 values), writes 6 fluxes: 44 B; pass 2 reads the 6
//     fluxes, p, q, wp, wq, cpp, cpq, cqq, damp, writes wp, wq: 72 B; 116 B in all, 104
//     without damping (2D: 4 fluxes, 88 B and 84). Flops 3D: pass 1 6 first derivatives
//     78 + projections 10 + fluxes 9 = 97; pass 2 6 wings 84 + 6 divergences 84 + centre
//     and update 22 = 190; about 290 in all.
//   swic: one pass (Anjum et al., docs/anisotropy.md). A block of FX x FY threads (3D
//     fp32 32 x 32, fp64 32 x 16; 2D 128 x 1) owns a column tile of the x-y plane plus a
//     ring of R = 4 columns and marches down a chunk of z. Each thread keeps input register
//     queues of p and q along z (planes m-4..m+4 of its column) and output register queues
//     of the accumulators of H p and V q (planes m-4..m+4). At plane m the block has p(m),
//     q(m) in a shared tile (with a further ring of 4), every thread forms grad p and grad q
//     at (column, m) (x, y from the tile, z from its queue), the fluxes and the in-plane
//     wings of the compact Laplacian; the x and y fluxes go to shared memory, whose x and
//     y divergences and the Laplacian at plane m go to accumulator m; the z fluxes are
//     scattered into accumulators m-4..m+4 (the d2/dxdz, d2/dydz and d2/dz2 cross terms of
//     the rotated operator: -d_j f_z(m) into plane m - j, +d_j f_z(m) into plane m + j).
//     Accumulator m - 4 is then complete and its update is written. What is not in the
//     queues comes a plane ahead into 3 shared buffers: in 3D by the copy engine (TMA:
//     whole tiles of p, q, the axis and the update's inputs, asked for by the first lanes
//     of the ring's warps, one or two copies each, with the tiles of p and q R planes
//     further prefetched into L2 for the queues' loads; one barrier per plane), in 2D (a
//     row of 128 a plane: 11 small tiles a row ran at 0.75x, 49.7% of the ceiling against
//     65.9%) by the threads' cp.async. The x and y fluxes of p and q sit side by side in
//     shared memory (one load for both), and the queues' loads have no branch (the halo
//     planes hold zeros or the mirror). The queues rotate through their
//     registers instead of shifting (the plane loop unrolled 9 times), the stencil
//     coefficients are scaled by 1/h in the constant bank, the fluxes are formed without
//     a branch (masked outside the computed points), and offsets within a member are 32
//     bits. Every plane of p, q and n is read from DRAM once (the rings are re-read by
//     neighbouring blocks, from L2). The inner (FX-8) x (FY-8) threads write; the ring
//     threads only form fluxes. Registers are limited to 64 in fp32 (1024 resident
//     threads per SM); z is cut into the chunks that waste the fewest block-planes to
//     warm-up and to the last wave of blocks.
//     TTI 3D: reads p, q, n (3), wp, wq, cpp, cpq, cqq, damp, writes wp, wq: 52 B, 48
//     without damping (2D: 48 and 44). Flops 3D fp32 per written point: per thread-plane 6
//     first derivatives 72 (1/h in the coefficients) + projections 10 + fluxes 9 = 91, on
//     (32 x 32) / (24 x 24) = 1.78 times as many columns as are written: 162; the 4
//     in-plane wings 48, also on every thread: 85; plus the z wings 24, 4 divergences 48,
//     the accumulation 28, the z scatter 32 and the update 16: about 395 per written point
//     (the two-pass kernel's 290 and its 2.2x bytes).
//   VTI (every kernel name): one kernel, one thread per point (no cross terms, nothing to
//     pass through memory): reads p, q, wp, wq, cpp, cpq, cqq, damp, writes wp, wq: 40 B
//     (36 without damping); flops 3D about 60.
// A free surface mirrors wp and wq afterwards (free_surface_cuda), and in TTI the z fluxes
// of planes 1..R count also as those of their mirror planes above it, as the twin.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "kernels/cpu/tti_cpu.h"

namespace rtm::kernels::cuda {

enum class TtiKernel { TwoPass, Swic };  // in tti_kernel_names() order

const std::vector<std::string>& tti_kernel_names();  // "two-pass", "swic"
TtiKernel parse_tti_kernel(const std::string& name);  // throws rtm::Error naming the choices
const char* tti_kernel_name(TtiKernel k);

// Minimal bytes per computed point of a kernel (fp32 counts above, scaled by sizeof(T)/4).
double tti_bytes_per_point(TtiKernel k, int ndim, bool tilted, bool damped, int value_bytes);

// One step of args.batch members on `stream`. TwoPass with a tilted model needs
// args.flux: six device scratch fields of one padded box, zero outside the computed points
// (they are reused member after member); Swic needs none. between(m), when given (TwoPass,
// tilted), runs on the host after member m's pass 1 is queued and before its pass 2 (a
// z-slab's flux exchange, tti_cpu.h's twin): it finds the fluxes queued, not written,
// and synchronises `stream` itself before it reads them.
template <class T>
void tti_step_cuda(const TtiStepArgs<T>& args, TtiKernel kernel, cudaStream_t stream = nullptr,
                   const std::function<void(int)>& between = {});

// Receiver sampling of (p + q) / 2, the twin of the TTI CPU propagator's loop:
// traces[n * nrec + r] = sum_k weight[k] * 0.5 * (p[index[k]] + q[index[k]]) over k in
// [offset[r], offset[r+1]), in double in k order. One thread per receiver.
template <class T>
void sample_pq_cuda(const T* p, const T* q, int nrec, const int* offset, const long* index, const double* weight,
                    double* traces, int n, cudaStream_t stream = nullptr);

// out[i] = T(0.5 (double(p[i]) + double(q[i]))) for i < n: the field migration images,
// (p + q) / 2, before the isotropic imaging kernels read it (device_wavefields.h).
template <class T>
void mean_pq_cuda(const T* p, const T* q, T* out, std::size_t n, cudaStream_t stream = nullptr);

// Resources of the main kernel (bench, docs): registers, static shared memory, threads per
// block, resident blocks per SM, blocks launched, z planes per block.
struct TtiKernelInfo {
    int regs = 0, smem = 0, threads = 0, blocks_per_sm = 0, zchunk = 0;
    long blocks = 0;
};
template <class T>
TtiKernelInfo describe_tti(const Box& box, bool tilted, TtiKernel kernel, int batch = 1);

}  // namespace rtm::kernels::cuda
