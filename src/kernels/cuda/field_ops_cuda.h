#pragma once
// CUDA operations on a propagator's fields besides the time step: the finite check,
// the edge band's gather and scatter, a window's volume source, snapshots and imaging
// conditions. Twins of HostWavefields' and CpuPropagator's loops (the gpu tests hold
// them together). Arrays are device pointers.
#include <cuda_runtime_api.h>

#include <cstddef>

#include "kernels/step_args.h"

namespace rtm::kernels::cuda {

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

// The isotropic Born source on a window (the twin of Propagator::add_born_source, whose
// host path forms it in double and uploads it as T through add_field):
//   u[node] += T(double(coef[i]) * double(T(-dm_v2[i] Lap u0[node])))
// at window node i, Lap with imaging::field_ops' 8th-order stencils and the nodes outside
// the window taken as zero (axes x, y, z summed in that order). dm_v2: window nodes, member
// after member; coef: window nodes, shared; u0, u: padded fields.
template <class T>
void born_source_window_cuda(const Box& box, Index3 origin, int nx, int ny, int nz, const double h[3],
                             const double* dm_v2, const T* u0, const T* coef, T* u, cudaStream_t stream = nullptr,
                             int batch = 1);

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

}  // namespace rtm::kernels::cuda
