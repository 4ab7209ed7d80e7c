#pragma once
// CUDA time step: the twin of kernels::step_cpu (same StepArgs, same function; the
// gpu tests hold them together). Arrays in StepArgs are device pointers here.
#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "kernels/step_args.h"

namespace rtm::kernels::cuda {

// How the update of the computed points is laid out on the GPU.
//   naive   : one thread per point, every neighbour read through L1 (reference variant)
//   q32x16, q32x8 : Micikevicius register queue along z, one 2D tile of the current
//             z-plane in shared memory (BX x BY threads, one output each),
//             double-buffered (one barrier per plane), the next plane's loads issued
//             before the current plane's arithmetic, z columns split in chunks so that
//             every SM is busy. 2D grids use a 128-wide row tile for every q variant.
//             The variants before Hopper; q32x8 runs where a t variant is asked for.
//   t32x16, t32x8, t32x8s6 : the register queue fed by Hopper's bulk tensor copies
//             (TMA): one thread per block has whole tiles (u with halos, w, vdt2)
//             copied into shared-memory rings 4 (s6: 6) planes ahead, no
//             registers or load instructions for data in flight; warps meet at per-warp
//             barriers, not a block barrier per plane. sm_90; the layer kernel too
//             (memory variables and damping read directly). 2D: 128-wide rows, 6 (s*: 12)
//             rows ahead. On a GPU before Hopper q32x8 runs instead.
//   t32x32v4 : each thread 4 points along x read as 16-byte vectors (tma4_kernel in
//             step_cuda.cu): the 3D fp32 full update and stencil only on 32 x 32 tiles;
//             in 2D (fp32) rows of 128, one warp a block, for the plain update, the
//             stencil only and the interior of split launches. The 3D layer steps, the
//             2D shell and fp64: t32x16.
// With absorbing layers the q and t variants split each step into two launches (see
// LaunchConfig::split); naive runs the layer kernel everywhere.
// Variants that lost on every grid measured (loads two planes ahead, full occupancy,
// several y rows per thread, 64-wide tiles, cp.async rings: docs/performance.md,
// sessions 1-2) were removed; their figures stay there.
enum class Variant { Naive, Q32x16, Q32x8, T32x16, T32x8, T32x8s6, T32x32v4 };

const std::vector<std::string>& variant_names();
Variant parse_variant(const std::string& name);  // throws rtm::Error naming the choices
const char* variant_name(Variant v);

struct LaunchConfig {
    // The best all-round on an H200 (docs/performance.md, 2026-11-24: t32x16's layer
    // kernels, the vector kernel for the plain steps and the 2D interior); before Hopper
    // the t variants run q32x8.
    Variant variant = Variant::T32x32v4;
    int zchunk = 0;  // z planes per block for the q variants; 0: chosen to fill the SMs
    // Boxes with layers (C-PML or damping), q and t variants: tiles away from every layer zone
    // run the plain kernel, only the shell of tiles touching a zone runs the layer kernel
    // (two launches). false: one launch of the layer kernel over the whole box.
    bool split = true;
    // Split launches only: 0, every launch on the caller's stream in turn (C-PML pass 1,
    // interior, shell); 1, C-PML pass 1 on a second stream beside the interior launch;
    // 2, pass 1 and then the shell on the second stream, beside the interior launch.
    // Forked from and joined back into the caller's stream (same function, same order
    // of every point's arithmetic: results are bit for bit those of 0). Default 2: 1.9%
    // (H200) and 1.2% (H100) faster than 0 on the 512^3 C-PML modelling step
    // (docs/performance.md, session 4).
    int overlap = 2;
};

// u[n+1] = 2 u[n] - u[n-1] + vdt2 (Lap8 u[n] + C-PML terms) into args.w (or the damped
// update in the layers when args.damp is set, see StepArgs), then the free-surface
// mirror: exactly step_cpu's function, on `stream`. A batch (StepArgs::batch) is one
// launch per kernel and group of members (batch members are a grid dimension, whose
// 65535 blocks a group of members fills at most): any batch size launches.
template <class T>
void step_cuda(const StepArgs<T>& args, const LaunchConfig& cfg = {}, cudaStream_t stream = nullptr);

// Stencil only: out = Lap8 u = sum_i inv_h2[i] d_ii u on the computed points (out's
// halo untouched). 8 B/point in fp32; the FDTD3d-class comparison.
template <class T>
void stencil_cuda(const Box& box, const T inv_h2[3], const T* u, T* out, const LaunchConfig& cfg = {},
                  cudaStream_t stream = nullptr);

// The free-surface mirror alone (twin of free_surface_cpu), on `batch` boxes one after
// another (StepArgs::batch).
template <class T>
void free_surface_cuda(const Box& box, T* f, cudaStream_t stream = nullptr, int batch = 1);

// Resources of the main kernel a configuration launches (for the bench and the docs):
// registers per thread, shared memory bytes, resident blocks per SM. A box with layers
// reports its C-PML layer kernel; a batch, the launch of its first group of members.
struct KernelInfo {
    int regs = 0, smem = 0, blocks_per_sm = 0, threads = 0, zchunk = 0;
    long blocks = 0;
};
template <class T>
KernelInfo describe_step(const Box& box, const LaunchConfig& cfg, bool stencil_only = false, int batch = 1);

}  // namespace rtm::kernels::cuda
