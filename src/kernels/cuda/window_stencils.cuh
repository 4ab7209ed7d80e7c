#pragma once
// Derivatives on a window's nodes with neighbours outside the window as zero: the device
// twins of imaging::field_ops' d1 and d2 (in double, whatever the field's type), read by
// the imaging conditions and the isotropic Born source (field_ops_cuda.cu) and the VTI/TTI
// window operator (tti_window_cuda.cu).
#include "physics/stencil.h"

namespace rtm::kernels::cuda {

// One axis's first (d1) or second (d2) derivative at window node c, f pointing at it and
// its neighbours at a stride s (a padded box's or a window array's); only the nodes
// lo <= c +- k < hi are read.
template <class T>
__device__ __forceinline__ double window_d1(const T* f, long s, int c, int lo, int hi, double h) {
    double sum = 0;
#pragma unroll
    for (int k = 1; k <= stencil::R; ++k) {
        if (c + k < hi) sum += stencil::d1(k) * double(f[k * s]);
        if (c - k >= lo) sum -= stencil::d1(k) * double(f[-k * s]);
    }
    return sum / h;
}
template <class T>
__device__ __forceinline__ double window_d2(const T* f, long s, int c, int lo, int hi, double h) {
    double sum = stencil::c2(0) * double(f[0]);
#pragma unroll
    for (int k = 1; k <= stencil::R; ++k) {
        if (c + k < hi) sum += stencil::c2(k) * double(f[k * s]);
        if (c - k >= lo) sum += stencil::c2(k) * double(f[-k * s]);
    }
    return sum / (h * h);
}
// The Laplacian at window node c = (x, y, z): the axes' window_d2 summed x, y (where the
// window has y: with_y), z, as imaging::laplacian sums them; st, lo, hi and h per axis.
template <class T>
__device__ __forceinline__ double window_laplacian(const T* f, const long st[3], const int c[3], const int lo[3],
                                                   const int hi[3], const double h[3], bool with_y) {
    double sum = 0;
#pragma unroll
    for (int ax = 0; ax < 3; ++ax)
        if (ax != 1 || with_y) sum += window_d2(f, st[ax], c[ax], lo[ax], hi[ax], h[ax]);
    return sum;
}

}  // namespace rtm::kernels::cuda
