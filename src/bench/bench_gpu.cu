// GPU half of rtm bench: the copy-bandwidth ceiling and the kernel modes (full
// update, stencil only; the VTI/TTI step with --physics) timed with CUDA events,
// median of several repeats.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>

#include "bench/bench_common.h"
#include "kernels/cuda/ceiling_cuda.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/step_cuda.h"
#include "kernels/cuda/tti_cuda.h"

namespace rtm::bench {

namespace kc = kernels::cuda;

namespace {

// Deterministic pseudo-random values in [lo, hi): never time on zeros.
template <class T>
__global__ void fill_kernel(T* p, std::size_t n, std::uint32_t seed, T lo, T hi) {
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += std::size_t(gridDim.x) * blockDim.x) {
        std::uint32_t h = std::uint32_t(i) * 2654435761u ^ seed;
        h ^= h >> 16;
        h *= 0x7feb352du;
        h ^= h >> 15;
        h *= 0x846ca68bu;
        h ^= h >> 16;
        p[i] = lo + (hi - lo) * T(h * (1.0 / 4294967296.0));
    }
}

// A timed kernel's row: its rate, its bytes per point and its share of the copy
// ceiling measured in the same run (`ceiling_gbs`), and its launch shape (`info`:
// KernelInfo or TtiKernelInfo) with `extra` after.
template <class T, class Info>
Row kernel_row(const std::string& mode, const std::string& variant, const Options& o, double seconds, double points,
               double bpp, double ceiling_gbs, const Info& info, const std::string& extra) {
    Row r = rate_row(mode, variant, int(sizeof(T)), "gpu", o, seconds, points, bpp, ceiling_gbs);
    char note[240];
    std::snprintf(note, sizeof note, "%d regs, %d B smem, %d threads, %d blocks/SM, %ld blocks, zchunk %d%s", info.regs,
                  info.smem, info.threads, info.blocks_per_sm, info.blocks, info.zchunk, extra.c_str());
    r.note = note;
    return r;
}

template <class T>
void fill(kc::DeviceBuffer<T>& b, std::uint32_t seed, double lo, double hi) {
    fill_kernel<T><<<1024, 256>>>(b.data(), b.size(), seed, T(lo), T(hi));
    RTM_CUDA_CHECK_LAUNCH("fill_kernel");
}

struct Events {
    cudaEvent_t a, b;
    Events() {
        RTM_CUDA_CHECK(cudaEventCreate(&a));
        RTM_CUDA_CHECK(cudaEventCreate(&b));
    }
    ~Events() {
        cudaEventDestroy(a);
        cudaEventDestroy(b);
    }
    // Median seconds per call of f over `reps` repeats of `inner` calls.
    template <class F>
    double median(int reps, int inner, F&& f) {
        std::vector<double> t;
        for (int r = 0; r < reps; ++r) {
            RTM_CUDA_CHECK(cudaEventRecord(a));
            for (int i = 0; i < inner; ++i) f();
            RTM_CUDA_CHECK(cudaEventRecord(b));
            RTM_CUDA_CHECK(cudaEventSynchronize(b));
            float ms = 0;
            RTM_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
            t.push_back(ms * 1e-3 / inner);
        }
        std::sort(t.begin(), t.end());
        return t[t.size() / 2];
    }
};

// f run for `sustain` seconds (in rounds of `inner` calls), then timed as Events::median
// times it, with the GPU's clocks sampled over the timed repeats (bench/gpu_clocks.h).
struct Timed {
    double seconds = 0;
    GpuConditions gpu;
};
template <class F>
Timed timed(double sustain, int reps, int inner, F&& f) {
    GpuSampler{}.stop();  // NVML opened (once) now, not between the sustained and the timed calls
    const auto t0 = std::chrono::steady_clock::now();
    while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < sustain) {
        for (int i = 0; i < inner; ++i) f();
        RTM_CUDA_CHECK(cudaDeviceSynchronize());
    }
    Events ev;
    GpuSampler sampler;
    Timed r;
    r.seconds = ev.median(reps, inner, f);
    r.gpu = sampler.stop();
    return r;
}

template <class T>
std::vector<Row> kernels_t(const Options& o, const Ceiling& c) {
    const kernels::Box box = o.box();
    const std::size_t n = box.padded_size();
    const bool stencil = o.mode == "stencil";
    kc::DeviceBuffer<T> u(n * o.batch), w(n * o.batch), v(stencil ? 0 : n);
    fill(u, 1, -1, 1);
    fill(w, 2, -1, 1);
    // (v dt / h)^2 well inside the stability limit (h = 1).
    if (!stencil) fill(v, 3, 0.02, 0.08);
    kernels::StepArgs<T> A;
    A.box = box;
    for (int i = 0; i < 3; ++i) A.inv_h2[i] = A.inv_h[i] = (i == 1 && box.ndim == 2) ? T(0) : T(1);
    A.vdt2 = v.data();
    A.batch = o.batch;
    std::vector<Row> rows;
    const double bpp = stencil ? 2 * sizeof(T) : o.full_bytes();
    for (const auto& name : o.variants) {
        kc::LaunchConfig cfg;
        cfg.variant = kc::parse_variant(name);
        cfg.zchunk = o.zchunk;
        T* pu = u.data();
        T* pw = w.data();
        auto one = [&] {
            if (stencil) {
                kc::stencil_cuda<T>(box, A.inv_h2, pu, pw, cfg);
            } else {
                A.u = pu;
                A.w = pw;
                kc::step_cuda(A, cfg);
                std::swap(pu, pw);
            }
        };
        for (int i = 0; i < 3; ++i) one();  // warm-up
        const Timed t = timed(o.sustain, o.repeats, o.steps, one);
        const auto info = kc::describe_step<T>(box, cfg, stencil, o.batch);
        rows.push_back(kernel_row<T>(o.mode, name, o, t.seconds, double(box.points()) * o.batch, bpp, c.gbs, info,
                                     o.batch > 1 ? ", batch of " + std::to_string(o.batch) : ""));
        rows.back().gpu = t.gpu;
    }
    return rows;
}

// The VTI/TTI step (--physics vti|tti): each kernel of o.variants on random fields, no
// layers; bytes per point as tti_bytes_per_point counts them. The SWiC row's note gives
// its speed over the two-pass kernel's when both ran.
template <class T>
std::vector<Row> tti_kernels_t(const Options& o, const Ceiling& c) {
    const kernels::Box box = o.box();
    const std::size_t n = box.padded_size();
    const bool tilted = o.physics == "tti";
    kc::DeviceBuffer<T> p(n), q(n), wp(n), wq(n), cpp(n), cpq(n), cqq(n), axis[3], flux[6];
    fill(p, 1, -1, 1);
    fill(q, 2, -1, 1);
    fill(wp, 3, -1, 1);
    fill(wq, 4, -1, 1);
    // W positive semi-definite at every point (cpq^2 <= cpp cqq: cpq <= 0.024 < sqrt(0.03 x
    // 0.02)) and its largest eigenvalue, at most cpp + cqq = 0.08, times |L| <= 19.5 (3D,
    // h = 1) within the scheme's limit of 4: the fields stay bounded.
    fill(cpp, 5, 0.03, 0.05);
    fill(cpq, 6, 0.01, 0.024);
    fill(cqq, 7, 0.02, 0.03);
    kernels::TtiStepArgs<T> A;
    A.box = box;
    for (int i = 0; i < 3; ++i) A.inv_h2[i] = A.inv_h[i] = (i == 1 && box.ndim == 2) ? T(0) : T(1);
    A.cpp = cpp.data();
    A.cpq = cpq.data();
    A.cqq = cqq.data();
    if (tilted) {
        for (int ax = 0; ax < 3; ++ax) {
            axis[ax].resize(n);
            fill(axis[ax], 8 + ax, -0.577, 0.577);  // |n| <= 1 keeps L negative semi-definite
            A.axis[ax] = axis[ax].data();
        }
        if (std::find(o.variants.begin(), o.variants.end(), "two-pass") != o.variants.end())
            for (int k = 0; k < 6; ++k) {
                flux[k].resize(n);
                flux[k].zero();
                A.flux[k] = flux[k].data();
            }
    }
    std::vector<Row> rows;
    double two_pass = 0;
    for (const auto& name : o.variants) {
        const kc::TtiKernel k = kc::parse_tti_kernel(name);
        auto one = [&] {
            A.p = p.data(), A.q = q.data(), A.wp = wp.data(), A.wq = wq.data();
            kc::tti_step_cuda(A, k);
            std::swap(p, wp);
            std::swap(q, wq);
        };
        for (int i = 0; i < 3; ++i) one();  // warm-up
        const Timed tm = timed(o.sustain, o.repeats, o.steps, one);
        const double t = tm.seconds;
        const auto info = kc::describe_tti<T>(box, tilted, k);
        const double bpp = kc::tti_bytes_per_point(k, box.ndim, tilted, false, sizeof(T));
        const double gpts = double(box.points()) / t * 1e-9;
        if (k == kc::TtiKernel::TwoPass) two_pass = gpts;
        char speedup[64] = "";
        if (k != kc::TtiKernel::TwoPass && two_pass > 0)
            std::snprintf(speedup, sizeof speedup, ", %.3fx the two-pass kernel", gpts / two_pass);
        rows.push_back(kernel_row<T>(o.physics, name, o, t, double(box.points()), bpp, c.gbs, info, speedup));
        rows.back().gpu = tm.gpu;
    }
    return rows;
}

}  // namespace

std::vector<Row> gpu_tti_kernels(const Options& o, const Ceiling& c) {
    return o.dbl ? tti_kernels_t<double>(o, c) : tti_kernels_t<float>(o, c);
}

void gpu_synchronize() { RTM_CUDA_CHECK(cudaDeviceSynchronize()); }

Ceiling gpu_ceiling(double sustain) {
    Ceiling c;
    int dev = 0;
    cudaDeviceProp p{};
    RTM_CUDA_CHECK(cudaGetDevice(&dev));
    RTM_CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
    char buf[200];
    std::snprintf(buf, sizeof buf, "%s, %d SMs, %.0f GiB, L2 %d MB", p.name, p.multiProcessorCount,
                  p.totalGlobalMem / double(1 << 30), p.l2CacheSize >> 20);
    c.device = buf;
    // 1 GiB per buffer: 20x the L2, so every pass streams from DRAM.
    const std::size_t n = std::size_t(1) << 28;
    kc::DeviceBuffer<float> a(n), b(n), e(n);
    fill(a, 11, -1, 1);
    fill(b, 12, -1, 1);
    fill(e, 14, -1, 1);
    Events ev;
    for (int i = 0; i < 3; ++i) kc::copy_cuda(a.data(), b.data(), n);
    // The ceiling at the clocks the kernels are timed at: sustained as long as they are.
    const Timed copy = timed(sustain, 7, 10, [&] { kc::copy_cuda(a.data(), b.data(), n); });
    const double tc = copy.seconds;
    c.gpu = copy.gpu;
    const double tm = ev.median(7, 10, [&] {
        RTM_CUDA_CHECK(cudaMemcpyAsync(b.data(), a.data(), n * 4, cudaMemcpyDeviceToDevice));
    });
    // (Before 2026-11-21 16:15 UTC this stream also read a fourth array, 20 B per value
    // counted as 16: its figures in docs/performance.md are 20% low.)
    const double ts = ev.median(7, 10, [&] { kc::update_stream_cuda(a.data(), b.data(), e.data(), n); });
    c.name = "copy kernel (16-byte loads/stores, bytes read + written)";
    c.gbs = 2.0 * n * 4 / tc * 1e-9;
    c.others.push_back({"cudaMemcpy device-to-device", 2.0 * n * 4 / tm * 1e-9});
    c.others.push_back({"3-read-1-write stream (the full update's traffic: 16 B per value)", 4.0 * n * 4 / ts * 1e-9});
    return c;
}

std::vector<Row> gpu_kernels(const Options& o, const Ceiling& c) {
    return o.dbl ? kernels_t<double>(o, c) : kernels_t<float>(o, c);
}

}  // namespace rtm::bench
