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
//   q32x16, q32x8, q64x8, q64x4 : Micikevicius register queue along z, one 2D tile of
//             the current z-plane in shared memory (BX x BY threads, one output each),
//             double-buffered (one barrier per plane), the next plane's loads issued
//             before the current plane's arithmetic, z columns split in chunks so that
//             every SM is busy. 2D grids use a 128-wide row tile for every q variant.
//   q32x16d2, q32x8d2 : the same with loads issued two planes ahead (more bytes in flight)
//   q32x16o : q32x16 compiled for full occupancy (4 blocks of 512 threads per SM in fp32)
//   q32x8r2, q32x8r4, q32x4r4 : register queue with several y rows per thread (2 or 4
//             rows, BY apart): 32x16, 32x32, 32x16 tiles; fewer halo reads per point,
//             more loads in flight per thread, one barrier per RY outputs.
//   t32x16, t32x8, t32x8s6 : the register queue fed by Hopper's bulk tensor copies
//             (TMA): one thread per block has whole tiles (u with halos, w, vdt2)
//             copied into shared-memory rings 4 (s6: 6) planes ahead, no
//             registers or load instructions for data in flight; warps meet at per-warp
//             barriers, not a block barrier per plane. sm_90; the layer kernel too
//             (memory variables and damping read directly). 2D: 128-wide rows, 6 (s*: 12)
//             rows ahead. On a GPU before Hopper q32x8 runs instead.
// With absorbing layers the q and t variants split each step into two launches (see
// LaunchConfig::split); naive runs the layer kernel everywhere.
enum class Variant { Naive, Q32x16, Q32x8, Q64x8, Q64x4, Q32x16d2, Q32x8d2, Q32x16o,
                     Q32x8r2, Q32x8r4, Q32x4r4, T32x16, T32x8, T32x8s6 };

const std::vector<std::string>& variant_names();
Variant parse_variant(const std::string& name);  // throws rtm::Error naming the choices
const char* variant_name(Variant v);

struct LaunchConfig {
    // The best all-round on an H200 (docs/performance.md, 2026-11-21 session 5); before
    // Hopper the t variants run q32x8.
    Variant variant = Variant::T32x16;
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

// Receiver sampling: for r < nrec, traces[n * nrec + r] = sum_k weight[k] * u[index[k]]
// over k in [offset[r], offset[r+1]), summed in double in k order, each product and sum
// rounded once as CpuPropagator's loop (time-major on the device so that each step
// writes one contiguous row). One thread per receiver: deterministic.
template <class T>
void sample_cuda(const T* u, int nrec, const int* offset, const long* index, const double* weight,
                 T* traces, int n, cudaStream_t stream = nullptr);

// Source injection, the twin of kernels::inject_cpu (kernels/cpu/inject_cpu.h; device
// copies of an Injection's arrays): one thread per target point p = target[t] sums its
// taps k in [offset[t], offset[t+1]) in their order, with a = traces[source[k] * nt + n],
//   if a != 0:  w[p] = w[p] + T((coef[k] * a) * inv_vol),
// every product and sum rounded once (no FMA, no atomics). Deterministic by construction:
// each point is written by one thread, its additions in a fixed order; and bit for bit
// inject_cpu's result.
template <class T>
void inject_cuda(T* w, int ntargets, const long* target, const int* offset, const int* source, const double* coef,
                 const double* traces, int nt, double inv_vol, int n, cudaStream_t stream = nullptr);

// Sets *flag (device memory) to 1 when any computed point of `batch` padded boxes (one
// after another) of f is not finite (NaN or infinity), else leaves it: one pass over f.
template <class T>
void nonfinite_cuda(const Box& box, const T* f, int batch, int* flag, cudaStream_t stream = nullptr);

// Migration helpers. Index3: computed-point coordinates of a window's first node.
// `batch`: members of a batch (StepArgs::batch), padded fields one after another at a
// stride of box.padded_size(), window arrays (f, snapshots, image, illumination) one after
// another at a stride of nx ny nz; coef and v2 are shared. Each member gets exactly a
// batch of one's arithmetic, in one launch (or one per group of 65535 / ny members).
struct Index3 {
    int x = 0, y = 0, z = 0;
};
// u[node] += T(double(coef[i]) * double(f[i])) for window node i = ix + nx (iy + ny iz)
// at computed point origin + (ix, iy, iz) (a volume source added after a step).
template <class T>
void add_window_cuda(const Box& box, Index3 origin, int nx, int ny, int nz, const T* coef, const T* f, T* u,
                     cudaStream_t stream = nullptr, int batch = 1);
// dst[i] = float(f[index[i]]) (band save) and f[index[i]] = T(src[i]) (band restore).
template <class T>
void gather_cuda(const T* f, const long* index, std::size_t n, float* dst, cudaStream_t stream = nullptr);
template <class T>
void scatter_cuda(const float* src, const long* index, std::size_t n, T* f, cudaStream_t stream = nullptr);

// Snapshots and cross-correlation on a window (nx x ny x nz nodes, window node
// i = ix + nx (iy + ny iz) at computed point origin + (ix, iy, iz)); the twins of
// CpuPropagator::keep / recall / correlate:
//   pack:      dst[i] = u[node] as T, or to_bf16(float(u[node])) when bf16 (dst holds
//              uint16 then): 4 (8) B read + 4 (2) B written per node in fp32.
//   unpack:    u[node] = src[i] (from_bf16 when bf16).
//   correlate: image[i] += (w us[node]) u[node], illum[i] += (w us[node]) us[node], in
//              double with the CPU's operation order and rounding (no contraction):
//              8 B read, 32 B read + written per node in fp32.
template <class T>
void pack_window_cuda(const Box& box, Index3 origin, int nx, int ny, int nz, const T* u, void* dst, bool bf16,
                      cudaStream_t stream = nullptr, int batch = 1);
template <class T>
void unpack_window_cuda(const Box& box, Index3 origin, int nx, int ny, int nz, const void* src, bool bf16, T* u,
                        cudaStream_t stream = nullptr, int batch = 1);
template <class T>
void correlate_window_cuda(const Box& box, Index3 origin, int nx, int ny, int nz, const T* us, const T* u,
                           double w, double* image, double* illum, cudaStream_t stream = nullptr, int batch = 1);

// The inverse-scattering and Born-adjoint imaging terms on a window (twins of
// CpuPropagator::correlate; derivatives with imaging::field_ops' 8th-order stencils,
// values outside the window taken as zero), in double:
//   inverse scattering: image += w ((us - usp)/dt (u - up)/dt / v2 - grad us . grad u)
//   Born adjoint:       image -= w v2 Lap(us) u
// and illum += w us^2. us, usp, u, up: padded fields; v2, image, illum: window nodes.
struct WindowImaging {
    Index3 origin;              // computed-point coordinates of window node (0, 0, 0)
    int nx = 0, ny = 0, nz = 0; // window nodes
    double h[3] = {1, 1, 1};    // dx, dy, dz
    double dt = 0, w = 0;
    bool born = false;          // Born adjoint, else inverse scattering
    // Planes before the window's first and after its last that hold the field too (a
    // z-slab's ghost planes: the neighbours' window planes), read by the derivatives
    // instead of zero; the window's own nodes are still the only ones imaged.
    int z_before = 0, z_after = 0;
};
template <class T>
void image_window_cuda(const Box& box, const WindowImaging& wi, const T* us, const T* usp, const T* u, const T* up,
                       const double* v2, double* image, double* illum, cudaStream_t stream = nullptr,
                       int batch = 1);

// Streaming copy dst = src of n floats (16-byte accesses): the bandwidth ceiling.
void copy_cuda(const float* src, float* dst, std::size_t n, cudaStream_t stream = nullptr);
// Stream with the full update's traffic: d = 2 a - d + b * a (read a, b, d; write d:
// 16 B per value, as u, vdt2, w read and w written).
void update_stream_cuda(const float* a, const float* b, float* d, std::size_t n, cudaStream_t stream = nullptr);

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
