#pragma once
// CUDA receiver sampling and source injection: the twins of CpuPropagator's sampling
// loop and kernels::inject_cpu, bit for bit (the gpu tests hold them together). Arrays
// are device pointers.
#include <cuda_runtime_api.h>

namespace rtm::kernels::cuda {

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

}  // namespace rtm::kernels::cuda
