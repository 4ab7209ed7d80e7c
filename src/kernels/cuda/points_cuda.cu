#include "kernels/cuda/points_cuda.h"

#include "kernels/cuda/cuda_check.h"

namespace rtm::kernels::cuda {

namespace {

template <class T>
__global__ void sample_kernel(const T* __restrict__ u, int nrec, const int* __restrict__ off,
                              const long* __restrict__ idx, const double* __restrict__ wgt, T* traces) {
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= nrec) return;
    double s = 0;
    for (int k = off[r]; k < off[r + 1]; ++k) s = __dadd_rn(s, __dmul_rn(wgt[k], double(u[idx[k]])));
    traces[r] = T(s);
}

// Sums rounded once, not fused with the product before them (the CPU twin's rounding).
__device__ __forceinline__ float add_rn(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double add_rn(double a, double b) { return __dadd_rn(a, b); }

// One thread per target point, its taps in order (see inject_cuda in points_cuda.h).
template <class T>
__global__ void inject_kernel(T* w, int ntargets, const long* __restrict__ target, const int* __restrict__ offset,
                              const int* __restrict__ src, const double* __restrict__ coef,
                              const double* __restrict__ traces, int nt, double inv_vol, int n) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= ntargets) return;
    T acc = w[target[t]];
    for (int k = offset[t]; k < offset[t + 1]; ++k) {
        const double a = traces[long(src[k]) * nt + n];
        if (a != 0) acc = add_rn(acc, T(__dmul_rn(__dmul_rn(coef[k], a), inv_vol)));
    }
    w[target[t]] = acc;
}

}  // namespace

template <class T>
void sample_cuda(const T* u, int nrec, const int* offset, const long* index, const double* weight, T* traces,
                 int n, cudaStream_t stream) {
    if (nrec <= 0) return;
    sample_kernel<T><<<(nrec + 255) / 256, 256, 0, stream>>>(u, nrec, offset, index, weight,
                                                             traces + long(n) * nrec);
    RTM_CUDA_CHECK_LAUNCH("sample_kernel");
}

template <class T>
void inject_cuda(T* w, int ntargets, const long* target, const int* offset, const int* source, const double* coef,
                 const double* traces, int nt, double inv_vol, int n, cudaStream_t stream) {
    if (ntargets <= 0 || n < 0 || n >= nt) return;
    inject_kernel<T><<<(ntargets + 255) / 256, 256, 0, stream>>>(w, ntargets, target, offset, source, coef, traces,
                                                                 nt, inv_vol, n);
    RTM_CUDA_CHECK_LAUNCH("inject_kernel");
}

#define RTM_INSTANTIATE(T)                                                                                   \
    template void sample_cuda<T>(const T*, int, const int*, const long*, const double*, T*, int, cudaStream_t); \
    template void inject_cuda<T>(T*, int, const long*, const int*, const int*, const double*, const double*,   \
                                 int, double, int, cudaStream_t);
RTM_INSTANTIATE(float)
RTM_INSTANTIATE(double)

}  // namespace rtm::kernels::cuda
