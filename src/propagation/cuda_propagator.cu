// The CUDA backend: padded arrays in device memory, kernels/cuda for the step; the
// same step order as CpuPropagator (record u[n] at the receivers, step, inject s[n]
// with weight * vdt2 / cell volume (/ (1 + k) in a damping layer), swap). Injection
// and sampling are deterministic (one thread per target point or receiver, fixed
// order, no atomics): injection is bit for bit the CPU's (kernels::inject_cpu). Receiver
// traces stay on the device for the whole run (time-major, one row per step) and come
// back on request. Migration operations: previous wavefield, volume sources (add_field),
// time reversal, and the edge band's save/restore through a device gather/scatter.
// A batch (Propagator) runs every operation on all members in one launch each: the
// window kernels take the batch, the band's indices list every member's band, a
// snapshot slot and a state hold every member.
//
// The wavefields, snapshots, band history, checkpoint states and the image: a
// DeviceWavefields (device_wavefields.h, which describes them; moved there from this
// file to serve the VTI/TTI propagator too).
// Busy time: a pair of timing events around each step's launches (a ring of kTimed;
// a pair is read when its slot comes round again, kTimed steps later, or by
// busy_seconds()), summed: the device time in propagation kernels.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <utility>

#include "core/error.h"
#include "kernels/cpu/transpose_cpu.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/step_cuda.h"
#include "propagation/device_wavefields.h"
#include "propagation/backend.h"
#include "propagation/injection.h"
#include "propagation/tti_propagator.h"

namespace rtm {

namespace kc = kernels::cuda;

double device_free_bytes() {
    std::size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return double(free_b);
}

bool cuda_device_available(std::string* description, int node_rank) {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        // Without an NVIDIA driver the runtime says its driver is "insufficient": say what
        // that means here.
        if (description)
            *description = e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice || n == 0
                               ? std::string("no NVIDIA GPU or driver found")
                               : std::string("no usable CUDA device (") + cudaGetErrorString(e) + ")";
        cudaGetLastError();  // clear the sticky-free error state of the failed query
        return false;
    }
    int dev = node_rank % n;
    cudaDeviceProp p{};
    if (cudaSetDevice(dev) != cudaSuccess || cudaGetDeviceProperties(&p, dev) != cudaSuccess) {
        if (description) *description = "CUDA device present but its properties could not be read";
        cudaGetLastError();
        return false;
    }
    if (description) {
        char buf[256];
        std::snprintf(buf, sizeof buf, "GPU %d of %d: %s (%.1f GiB, %d SMs, compute capability %d.%d)%s", dev, n,
                      p.name, p.totalGlobalMem / double(1 << 30), p.multiProcessorCount, p.major, p.minor,
                      node_rank >= n ? ", shared with another rank of this node (more ranks than GPUs)" : "");
        *description = buf;
    }
    return true;
}

namespace {

template <class T>
class CudaPropagator final : public Propagator {
public:
    CudaPropagator(const Domain& d, int batch) : Propagator(batch), d_(d), box_(d.box()), f_(d, 1, batch) {
        const std::size_t n = box_.padded_size() * std::size_t(batch);
        const bool cpml = d.options().boundary == Boundary::Cpml;
        int axes = 0;
        for (int ax = 0; ax < 3; ++ax)
            if (cpml && (box_.pml_lo[ax] || box_.pml_hi[ax])) ++axes;
        require_memory(n * sizeof(T) * (3 + 2 * std::size_t(axes) + (d.damping().empty() ? 0 : 1)),
                       cpml ? "wavefields, (v dt)^2 and C-PML memory" : "wavefields, (v dt)^2 and damping");

        // Kernel variant: the library default, or RTM_CUDA_VARIANT (tuning, rtm bench).
        if (const char* v = std::getenv("RTM_CUDA_VARIANT")) cfg_.variant = kc::parse_variant(v);
        if (const char* v = std::getenv("RTM_CUDA_SPLIT")) cfg_.split = std::string(v) != "0";
        if (const char* v = std::getenv("RTM_CUDA_OVERLAP")) cfg_.overlap = std::atoi(v);
        f_.allocate();
        vdt2_.upload(std::vector<T>(d.vdt2().begin(), d.vdt2().end()));
        d.inverse_spacings(args_.inv_h2, args_.inv_h);
        for (int ax = 0; ax < 3; ++ax) {
            if (d.cpml(ax)) {  // (Domain::cpml: a z-slab's own layers follow the whole box's)
                a_[ax].upload(std::vector<T>(d.profile(ax).a.begin(), d.profile(ax).a.end()));
                b_[ax].upload(std::vector<T>(d.profile(ax).b.begin(), d.profile(ax).b.end()));
                psi_[ax].resize(n);
                zeta_[ax].resize(n);
                psi_[ax].zero(stream_);
                zeta_[ax].zero(stream_);
                f_.state_extra.push_back(&psi_[ax]);  // a state: u, u_prev and the C-PML memory
                f_.state_extra.push_back(&zeta_[ax]);
            }
        }
        if (!d.damping().empty()) {
            damp_.upload(std::vector<T>(d.damping().begin(), d.damping().end()));
            args_.damp = damp_.data();
        }
        args_.box = box_;
        args_.vdt2 = vdt2_.data();
        args_.batch = batch;
        for (int ax = 0; ax < 3; ++ax) {
            args_.a[ax] = a_[ax].empty() ? nullptr : a_[ax].data();
            args_.b[ax] = b_[ax].empty() ? nullptr : b_[ax].data();
            args_.psi[ax] = psi_[ax].empty() ? nullptr : psi_[ax].data();
            args_.zeta[ax] = zeta_[ax].empty() ? nullptr : zeta_[ax].data();
        }
        RTM_CUDA_CHECK(cudaStreamSynchronize(stream_));
    }

    ~CudaPropagator() override {
        if (stream_) cudaStreamSynchronize(stream_);
        for (auto& tm : timing_) {
            if (tm.start) cudaEventDestroy(tm.start);
            if (tm.stop) cudaEventDestroy(tm.stop);
        }
    }

    // The taps grouped by target point as CpuPropagator groups them (injection_of), so
    // that inject_cuda, one thread per point, adds them in the CPU's order.
    void set_sources(const std::vector<PointStencil>& where,
                     const std::vector<std::vector<double>>& traces) override {
        const kernels::Injection inj = injection_of(d_, where, traces);
        require_memory(inj.traces.size() * 8 + inj.target.size() * 12 + inj.coef.size() * 12, "source traces");
        inj_target_.upload(inj.target);
        inj_offset_.upload(inj.offset);
        inj_source_.upload(inj.source);
        inj_coef_.upload(inj.coef);
        src_tr_.upload(inj.traces);
        src_nt_ = inj.nt;
        inv_vol_ = inj.inv_vol;
    }

    void set_receivers(const std::vector<PointStencil>& where, int nt) override {
        const ReceiverTaps taps = receiver_taps(where);
        nrec_ = int(where.size());
        nt_ = nt;
        require_memory(std::size_t(nrec_) * nt * sizeof(T) + taps.index.size() * 16, "receiver traces");
        rec_off_.upload(taps.offset);
        rec_idx_.upload(taps.index);
        rec_w_.upload(taps.weight);
        rec_tr_.resize(std::size_t(nrec_) * nt);
        rec_tr_.zero(stream_);
    }

    void reset() override {
        f_.reset();  // wavefields, C-PML memory, image
        rec_tr_.zero(stream_);
        RTM_CUDA_CHECK(cudaStreamSynchronize(stream_));
    }

    void step(int n) override {
        Timing& tm = timing_[timing_next_];
        timing_next_ = (timing_next_ + 1) % kTimed;
        if (tm.pending) collect(tm);
        if (!tm.start) {
            RTM_CUDA_CHECK(cudaEventCreate(&tm.start));
            RTM_CUDA_CHECK(cudaEventCreate(&tm.stop));
        }
        RTM_CUDA_CHECK(cudaEventRecord(tm.start, stream_));
        if (nrec_ > 0 && n >= 0 && n < nt_)
            kc::sample_cuda(u_.data(), nrec_, rec_off_.data(), rec_idx_.data(), rec_w_.data(), rec_tr_.data(), n,
                            stream_);
        // The free-surface mirror of u[n] before it is read: sources injected after the
        // last step, add_field, recall and load_band change u[n] after the kernel's own mirror.
        if (box_.free_surface) kc::free_surface_cuda(box_, u_.data(), stream_, batch());
        args_.u = u_.data();
        args_.w = w_.data();
        kc::step_cuda(args_, cfg_, stream_);
        kc::inject_cuda(w_.data(), int(inj_target_.size()), inj_target_.data(), inj_offset_.data(),
                        inj_source_.data(), inj_coef_.data(), src_tr_.data(), src_nt_, inv_vol_, n, stream_);
        std::swap(u_, w_);
        RTM_CUDA_CHECK(cudaEventRecord(tm.stop, stream_));
        tm.pending = true;
    }

    double busy_seconds() const override {
        for (auto& tm : timing_)
            if (tm.pending) collect(tm);
        return busy_;
    }

    // --- States, band, snapshots and correlation: DeviceWavefields (device_wavefields.h) ---
    std::size_t state_bytes() const override { return f_.state_bytes(); }
    void reserve_states(std::size_t count) override { f_.reserve_states(count); }
    void store_state(std::size_t slot) override { f_.move_state(slot, true); }
    void load_state(std::size_t slot) override { f_.move_state(slot, false); }
    // Where the states are (for the tests): 0 none, 1 device memory, 2 pinned host memory.
    int states_where() const { return f_.states_where(); }

    std::vector<double> receiver_traces() const override {
        RTM_CUDA_CHECK(cudaStreamSynchronize(stream_));
        const auto t = rec_tr_.download();  // nt x nrec
        std::vector<double> out(t.size());
        kernels::transpose_widen(t.data(), nt_, nrec_, out.data());  // on every core (kernels/cpu/transpose_cpu.h)
        return out;
    }

    std::vector<double> wavefield() const override { return f_.window_of(u_); }
    std::vector<double> previous_wavefield() const override { return f_.window_of(w_); }
    bool finite() const override { return f_.finite(); }

    // u += injection * f on the window's nodes, after the step just queued.
    void add_field(const std::vector<double>& f) override {
        f_.add_field(f, [&](int, long p) { return d_.injection(p); });
    }
    void reverse_time() override { f_.swap(); }

    std::size_t band_size() const override { return f_.band_size(); }
    void save_band(float* dst) const override { f_.save_band(dst); }
    void restore_band(const float* src) override { f_.restore_band(src); }
    void reserve_bands(std::size_t count) override { f_.reserve_bands(count); }
    void store_band(std::size_t slot) override { f_.store_band(slot); }
    void load_band(std::size_t slot) override { f_.load_band(slot); }
    std::pair<int, const void*> bands_where() const { return f_.bands_where(); }

    std::size_t keep(bool bf16) override { return f_.keep(bf16); }
    void recall(std::size_t slot, bool previous) override { f_.recall(slot, previous); }
    void clear_kept() override { f_.clear_kept(); }
    void correlate(const Propagator& source, double w, ImagingCondition condition) override {
        const auto* src = dynamic_cast<const CudaPropagator<T>*>(&source);
        if (!src) unsupported("correlate with a propagator of another backend or precision");
        require_same_batch(source);
        f_.correlate(src->f_, w, condition);
    }
    std::vector<double> correlation(bool illumination) const override { return f_.correlation(illumination); }
    std::pair<std::size_t, std::size_t> kept_where() const { return f_.kept_where(); }

    std::string name() const override { return sizeof(T) == 4 ? "cuda (fp32)" : "cuda (fp64)"; }

private:
    // Busy time of a step whose events are recorded (waits for its stop event).
    struct Timing {
        cudaEvent_t start = nullptr, stop = nullptr;
        bool pending = false;
    };
    void collect(Timing& tm) const {
        RTM_CUDA_CHECK(cudaEventSynchronize(tm.stop));
        float ms = 0;
        RTM_CUDA_CHECK(cudaEventElapsedTime(&ms, tm.start, tm.stop));
        busy_ += ms * 1e-3;
        tm.pending = false;
    }

    void require_memory(std::size_t bytes, const char* what) const { require_device_memory<T>(box_, bytes, what); }

    const Domain& d_;
    kernels::Box box_;
    // The wavefields and what migration keeps of them (device_wavefields.h); u_ and w_
    // are its buffers (swapping them swaps its current and previous wavefields), stream_
    // its stream.
    DeviceWavefields<T> f_;
    kc::DeviceBuffer<T>& u_ = f_.cur;
    kc::DeviceBuffer<T>& w_ = f_.prev;
    cudaStream_t stream_ = f_.stream();
    kernels::StepArgs<T> args_;
    kc::LaunchConfig cfg_;
    kc::DeviceBuffer<T> vdt2_, damp_, a_[3], b_[3], psi_[3], zeta_[3];
    kc::DeviceBuffer<long> inj_target_, rec_idx_;
    kc::DeviceBuffer<int> inj_offset_, inj_source_, rec_off_;
    kc::DeviceBuffer<double> inj_coef_, src_tr_, rec_w_;
    kc::DeviceBuffer<T> rec_tr_;
    int src_nt_ = 0, nrec_ = 0, nt_ = 0;
    double inv_vol_ = 1;
    static constexpr int kTimed = 128;
    mutable Timing timing_[kTimed];
    int timing_next_ = 0;
    mutable double busy_ = 0;  // seconds of collected steps
};

}  // namespace

std::pair<std::size_t, std::size_t> cuda_kept_where(const Propagator& p) {
    if (const auto* f = dynamic_cast<const CudaPropagator<float>*>(&p)) return f->kept_where();
    if (const auto* d = dynamic_cast<const CudaPropagator<double>*>(&p)) return d->kept_where();
    return {0, 0};
}

int cuda_states_where(const Propagator& p) {
    if (const auto* f = dynamic_cast<const CudaPropagator<float>*>(&p)) return f->states_where();
    if (const auto* d = dynamic_cast<const CudaPropagator<double>*>(&p)) return d->states_where();
    return 0;
}

std::pair<int, const void*> cuda_bands_where(const Propagator& p) {
    if (const auto* f = dynamic_cast<const CudaPropagator<float>*>(&p)) return f->bands_where();
    if (const auto* d = dynamic_cast<const CudaPropagator<double>*>(&p)) return d->bands_where();
    return {0, nullptr};
}

std::unique_ptr<Propagator> make_cuda_propagator(const Domain& domain, Precision precision, int batch) {
    std::string why;
    if (!cuda_device_available(&why)) fail("option propagation.device = gpu", why, "Set propagation.device to cpu or auto");
    if (domain.anisotropic()) return make_tti_cuda_propagator(domain, precision, batch);
    if (precision == Precision::Double) return std::make_unique<CudaPropagator<double>>(domain, batch);
    return std::make_unique<CudaPropagator<float>>(domain, batch);
}

}  // namespace rtm
