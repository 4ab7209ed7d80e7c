#pragma once
// VTI/TTI Born modelling and its adjoint on a window, in double: the GPU twins of
// imaging::anisotropic_operator (field_ops.cpp) and of HostWavefields' Born source and
// born-adjoint image (host_wavefields.h). One member per call: p, q, ps, qs point at
// that member's padded boxes; hp, vq, dm_v2, v2, w, image, illum at its window arrays
// (nx ny nz nodes, x fastest, node (0, 0, 0) at computed point origin). The derivatives
// are window_stencils.cuh's, neighbours outside the window zero, so the Born operator
// and its adjoint are one fixed linear map, as on the CPU.
#include <cuda_runtime_api.h>

#include "kernels/cuda/field_ops_cuda.h"

namespace rtm::kernels::cuda {

// (hp, vq) = diag(H, V) (p, q) (docs/anisotropy.md): VTI (axis[0] null) H = Dxx + Dyy,
// V = Dzz; TTI H = Lap - div(n (n . grad)), V = Lap - div((I - n n^T) grad), n read from
// the propagator's axis arrays (padded boxes, in T: in fp32 they are the CPU twin's
// double axis rounded, the same axis the step reads), in two passes as the twin: the six
// fluxes (flux: 6 window arrays of scratch, TTI only), then the divergences. h: dx, dy,
// dz (2D: ny = 1, no y terms).
template <class T>
void anisotropic_operator_cuda(const Box& box, Index3 origin, int nx, int ny, int nz, const double h[3], const T* p,
                               const T* q, const T* const axis[3], double* hp, double* vq, double* flux,
                               cudaStream_t stream);

// The Born source W g, g = -dm_v2 (hp, vq): p += T(W_pp g_p + W_pq g_q), q += T(W_pq g_p +
// W_qq g_q) where that sum is not 0, the products in double; w: W_pp, W_pq, W_qq (each
// divided by 1 + k), three window arrays one after another.
template <class T>
void born_source_tti_cuda(const Box& box, Index3 origin, int nx, int ny, int nz, const double* dm_v2,
                          const double* hp, const double* vq, const double* w, T* p, T* q, cudaStream_t stream);

// The born-adjoint image of a VTI/TTI model: image -= weight v2 (hp p + vq q), hp, vq the
// source's diag(H, V) and p, q this propagator's fields; illum += weight s s, s = (ps + qs)
// / 2 the source's imaged field.
template <class T>
void born_adjoint_tti_cuda(const Box& box, Index3 origin, int nx, int ny, int nz, double weight, const double* v2,
                           const double* hp, const double* vq, const T* p, const T* q, const T* ps, const T* qs,
                           double* image, double* illum, cudaStream_t stream);

}  // namespace rtm::kernels::cuda
