#pragma once
// A CUDA propagator's sources and receivers in device memory, one mechanism for the
// isotropic and the anisotropic propagators:
// - DeviceInjection: an Injection's arrays (targets grouped as the CPU groups them, so
//   inject_cuda adds each target's taps in the CPU's order), added at step n.
// - DeviceReceivers: the receivers' taps and their traces, recorded step-major (row n:
//   every receiver at step n) in R, the propagator's choice, and returned receiver-major
//   in double.
// Uploads go on the propagator's stream after its queued work and have landed on return
// (DeviceBuffer::upload).
#include <cuda_runtime_api.h>

#include <cstddef>
#include <vector>

#include "kernels/cpu/transpose_cpu.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/points_cuda.h"
#include "propagation/injection.h"

namespace rtm {

struct DeviceInjection {
    kernels::cuda::DeviceBuffer<long> target;
    kernels::cuda::DeviceBuffer<int> offset, source;
    kernels::cuda::DeviceBuffer<double> coef, traces;
    int nt = 0;
    double inv_vol = 1;

    void upload(const kernels::Injection& inj, cudaStream_t s) {
        target.upload(inj.target, s);
        offset.upload(inj.offset, s);
        source.upload(inj.source, s);
        coef.upload(inj.coef, s);
        traces.upload(inj.traces, s);
        nt = inj.nt;
        inv_vol = inj.inv_vol;
    }
    int targets() const { return int(target.size()); }
    // Targets [t0, t1) (all by default) into w at step n, on stream s.
    template <class T>
    void add(T* w, int n, cudaStream_t s, int t0 = 0, int t1 = -1) const {
        if (t1 < 0) t1 = targets();
        if (t1 > t0)
            kernels::cuda::inject_cuda(w, t1 - t0, target.data() + t0, offset.data() + t0, source.data(), coef.data(),
                                       traces.data(), nt, inv_vol, n, s);
    }
};

template <class R>
struct DeviceReceivers {
    kernels::cuda::DeviceBuffer<int> offset;
    kernels::cuda::DeviceBuffer<long> index;
    kernels::cuda::DeviceBuffer<double> weight;
    kernels::cuda::DeviceBuffer<R> traces;  // nt x count
    int count = 0, nt = 0;

    void set(const std::vector<PointStencil>& where, int steps, cudaStream_t s) {
        const ReceiverTaps taps = receiver_taps(where);
        count = int(where.size());
        nt = steps;
        offset.upload(taps.offset, s);
        index.upload(taps.index, s);
        weight.upload(taps.weight, s);
        traces.resize(std::size_t(count) * std::size_t(nt));
        traces.zero(s);
    }
    // Whether step n records.
    bool records(int n) const { return count > 0 && n >= 0 && n < nt; }
    // Receiver-major in double (the caller has waited for the steps).
    std::vector<double> download() const { return receiver_major<std::vector<double>>(traces.download(), nt, count); }
    // Out = UninitVector<double>: first touched by the transpose's threads (a batch of 16
    // 2D Marmousi shots' traces, 312 MB, were zeroed by one thread first: 0.07-0.09 s of
    // the 0.14 s they took to the host, H200 host, 2026-11-25).
    template <class Out, class In>
    static Out receiver_major(const In& t, int nt, int count) {
        Out out(t.size());
        kernels::transpose_widen(t.data(), nt, count, out.data());  // on every core (kernels/cpu/transpose_cpu.h)
        return out;
    }
};

}  // namespace rtm
