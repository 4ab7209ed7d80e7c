// The CUDA backend for anisotropic domains (pseudo-acoustic VTI/TTI): the twin of the TTI
// CPU propagator (tti_cpu_propagator.cpp) with the fields in device memory and
// kernels/cuda/tti_cuda for the step. Same step order: record (p + q) / 2 at the receivers
// (traces in double on the device, time-major, one row per step), mirror p and q at a free
// surface (VTI), step, inject W B s[n] into both fields (tti_injection, bit for bit the
// CPU's injection through inject_cuda), swap.
// The kernel: SWiC (one pass) by default; RTM_TTI_KERNEL=two-pass picks the baseline
// (tests, rtm bench). Busy time: a pair of events around each step's launches, summed.
// p and q of every member lie in one array per time level (DeviceWavefields, as on the
// CPU): migration's operations are the isotropic propagator's, moving both fields, and
// imaging reads (p + q) / 2.
#include <cuda_runtime_api.h>

#include <cstdlib>
#include <functional>
#include <utility>

#include "core/error.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/points_cuda.h"
#include "kernels/cuda/step_cuda.h"
#include "kernels/cuda/tti_cuda.h"
#include "physics/stencil.h"
#include "propagation/backend.h"
#include "propagation/device_taps.h"
#include "propagation/device_wavefields.h"
#include "propagation/injection.h"
#include "propagation/stored_propagator.h"
#include "propagation/tti_propagator.h"

namespace rtm {

namespace kc = kernels::cuda;

namespace {

template <class T>
kc::DeviceBuffer<T> upload(const UninitVector<double>& v) {
    return kc::DeviceBuffer<T>(converted<T>(v));
}

template <class T>
class TtiCudaPropagator final : public StoredPropagator<DeviceWavefields<T>> {
    using Base = StoredPropagator<DeviceWavefields<T>>;
    using Base::f_;  // (members of a dependent base are named)
    using Base::require_same_batch;
    using Base::unsupported;

public:
    using Base::batch;
    TtiCudaPropagator(const Domain& d, int batch) : StoredPropagator<DeviceWavefields<T>>(d, 2, batch), d_(d), box_(d.box()) {
        RTM_CUDA_CHECK(cudaGetDevice(&device_));
        if (!d.anisotropic()) fail("TTI propagator", "the domain is isotropic", "Use make_cuda_propagator");
        if (const char* k = std::getenv("RTM_TTI_KERNEL")) kernel_ = kc::parse_tti_kernel(k);
        const TtiCoefficients& c = d.tti();
        const std::size_t box = box_.padded_size(), n = box * std::size_t(batch);
        const std::size_t fields = 4 * n + 3 * box + (d.damping().empty() ? 0 : box) +
                                   (c.tilted ? 3 * box + (kernel_ == kc::TtiKernel::TwoPass ? 6 * box : 0) : 0);
        const double free_b = device_free_bytes();
        if (double(fields * sizeof(T)) > free_b)
            fail("backend " + name(),
                 "the VTI/TTI fields need " + std::to_string(fields * sizeof(T) >> 20) + " MiB of GPU memory, " +
                     std::to_string(std::size_t(free_b) >> 20) + " MiB are free",
                 "Use a smaller model or batch, or propagation.device = cpu");
        f_.allocate();
        cpp_ = upload<T>(c.cpp);
        cpq_ = upload<T>(c.cpq);
        cqq_ = upload<T>(d.vdt2());
        if (!d.damping().empty()) damp_ = upload<T>(d.damping());
        args_.box = box_;
        d.inverse_spacings(args_.inv_h2, args_.inv_h);
        args_.cpp = cpp_.data();
        args_.cpq = cpq_.data();
        args_.cqq = cqq_.data();
        args_.damp = damp_.empty() ? nullptr : damp_.data();
        if (c.tilted) {
            for (int ax = 0; ax < 3; ++ax) {
                axis_[ax] = upload<T>(c.axis[ax]);
                args_.axis[ax] = axis_[ax].data();
                f_.axis[ax] = axis_[ax].data();
            }
            if (kernel_ == kc::TtiKernel::TwoPass) allocate_fluxes();
        }
        args_.batch = batch;
    }

    ~TtiCudaPropagator() override {
        if (stream_) cudaStreamSynchronize(stream_);
        for (auto& e : events_) {
            cudaEventDestroy(e.first);
            cudaEventDestroy(e.second);
        }
    }

    void set_sources(const std::vector<PointStencil>& where, const std::vector<std::vector<double>>& traces) override {
        RTM_CUDA_CHECK(cudaSetDevice(device_));  // (may run on another host thread: cuda_propagator.cu)
        const auto inj = tti_injection(d_, where, traces);
        inj_p_.upload(inj.first, stream_);
        inj_q_.upload(inj.second, stream_);
    }

    void set_receivers(const std::vector<PointStencil>& where, int nt) override {
        RTM_CUDA_CHECK(cudaSetDevice(device_));
        rec_.set(where, nt, stream_);
    }

    void reset() override {
        f_.reset();  // p, q at both time levels, the image
        rec_.traces.zero(stream_);
        RTM_CUDA_CHECK(cudaStreamSynchronize(stream_));
    }

    void step(int n) override {
        std::pair<cudaEvent_t, cudaEvent_t> ev{};
        RTM_CUDA_CHECK(cudaEventCreate(&ev.first));
        RTM_CUDA_CHECK(cudaEventCreate(&ev.second));
        RTM_CUDA_CHECK(cudaEventRecord(ev.first, stream_));
        T *p = f_.field(f_.cur, 0), *q = f_.field(f_.cur, 1);
        if (rec_.records(n))
            kc::sample_pq_cuda(p, q, rec_.count, rec_.offset.data(), rec_.index.data(), rec_.weight.data(),
                               rec_.traces.data(), n, stream_);
        if (box_.free_surface) {
            kc::free_surface_cuda(box_, p, stream_, batch());
            kc::free_surface_cuda(box_, q, stream_, batch());
        }
        args_.p = p;
        args_.q = q;
        args_.wp = f_.field(f_.prev, 0);
        args_.wq = f_.field(f_.prev, 1);
        kc::tti_step_cuda(args_, kernel_, stream_, between_);
        inj_p_.add(args_.wp, n, stream_);
        inj_q_.add(args_.wq, n, stream_);
        f_.swap();
        RTM_CUDA_CHECK(cudaEventRecord(ev.second, stream_));
        events_.push_back(ev);
        if (events_.size() >= 256) collect();
    }

    double busy_seconds() const override {
        collect();
        return busy_;
    }

    std::vector<double> receiver_traces() const override {
        RTM_CUDA_CHECK(cudaStreamSynchronize(stream_));
        return rec_.download();
    }

    // (p + q) / 2, what receivers record and imaging reads.
    bool finite() const override { return f_.finite(); }

    // Migration's operations (DeviceWavefields; the backward pass is this step run
    // backwards, docs/anisotropy.md "The exact adjoint"): every storage moves p and q.
    void add_field(const std::vector<double>& f) override {
        f_.add_field(f, [&](int field, long p) { return tti_injection_weight(d_, field, p); });
    }
    void reserve_bands(std::size_t count) override { f_.reserve_bands(count); }
    void store_band(std::size_t slot) override { f_.store_band(slot); }
    void load_band(std::size_t slot) override { f_.load_band(slot); }
    // Born modelling of VTI/TTI models and its adjoint (the born-adjoint condition) read
    // diag(H, V) of the background (source) wavefield on the window, formed on the device
    // (DeviceWavefields, tti_window_cuda.h; the CPU twin's operators).
    void add_born_source(const Propagator& background) override {
        const auto* u0 = dynamic_cast<const TtiCudaPropagator<T>*>(&background);
        if (!u0) unsupported("Born modelling with a background propagator of another backend, precision or physics");
        require_same_batch(background);
        this->born_perturbation();  // throws when none was set
        f_.add_born_source(u0->f_, [&](int k, int j, long p) { return tti_w(d_, k, j, p); });
    }
    void correlate(const Propagator& source, double w, ImagingCondition condition) override {
        const auto* src = dynamic_cast<const TtiCudaPropagator<T>*>(&source);
        if (!src) unsupported("correlate with a propagator of another backend, precision or physics");
        require_same_batch(source);
        f_.correlate(src->f_, w, condition);
    }

    // z-slabs (as the CPU twin, tti_cpu_propagator.cpp): a plane is p's then q's (each
    // member's count planes of p, then of q), through the host. The intermediate fields
    // are pass 1's z fluxes of a tilted model, the two that pass 2 differentiates across
    // a face; SWiC has no pass between which to exchange them (its fluxes never reach
    // memory, and one pass would need 2 R ghost planes), so a slab steps with the
    // two-pass kernel (set_between_passes), the same sums as one GPU's two-pass step.
    std::size_t plane_bytes() const override { return 2 * std::size_t(box_.sz()) * sizeof(T); }
    void copy_planes_out(int iz0, int count, void* dst) const override {
        move_planes(wavefield_arrays(), iz0, count, static_cast<char*>(dst), false);
    }
    void copy_planes_in(int iz0, int count, const void* src) override {
        move_planes(wavefield_arrays(), iz0, count, const_cast<char*>(static_cast<const char*>(src)), true);
    }
    std::size_t intermediate_plane_bytes() const override {
        return d_.tti().tilted ? 2 * std::size_t(box_.sz()) * sizeof(T) : 0;
    }
    void copy_intermediate_out(int iz0, int count, void* dst) const override {
        move_planes({flux_[2].data(), flux_[5].data()}, iz0, count, static_cast<char*>(dst), false);
    }
    void copy_intermediate_in(int iz0, int count, const void* src) override {
        move_planes({flux_[2].data(), flux_[5].data()}, iz0, count, const_cast<char*>(static_cast<const char*>(src)), true);
    }
    // The derivative imaging conditions read the ghost planes beyond a slab's window where
    // the fields live, as one GPU's window reads its neighbouring planes (the means
    // (p + q) / 2 are taken over the whole padded arrays, ghost planes included): the
    // same sums as one GPU's image.
    bool window_continues(int before, int after) override {
        f_.z_before = before;
        f_.z_after = after;
        return true;
    }
    void set_between_passes(std::function<void(int)> between) override {
        if (d_.tti().tilted && kernel_ != kc::TtiKernel::TwoPass) {
            kernel_ = kc::TtiKernel::TwoPass;
            allocate_fluxes();
        }
        between_ = std::move(between);
    }

    std::string name() const override {
        return std::string(d_.tti().tilted ? "cuda TTI " : "cuda VTI ") + kc::tti_kernel_name(kernel_) +
               (sizeof(T) == 4 ? " (fp32)" : " (fp64)");
    }

private:
    // The two-pass kernel's six flux fields of one padded box (zero halo).
    void allocate_fluxes() {
        const std::size_t box = box_.padded_size(), bytes = 6 * box * sizeof(T);
        if (double(bytes) > device_free_bytes())
            fail("backend " + name(), "the two-pass TTI kernel's fluxes need " + std::to_string(bytes >> 20) +
                                          " MiB more of GPU memory",
                 "Use a smaller model or batch, more ranks per shot, or propagation.device = cpu");
        for (int k = 0; k < 6; ++k) {
            flux_[k].resize(box);
            flux_[k].zero(stream_);  // the halo stays zero
            args_.flux[k] = flux_[k].data();
        }
    }

    // The current p and q of every member, in the planes' order (member by member, p then q).
    std::vector<const T*> wavefield_arrays() const {
        std::vector<const T*> a;
        for (int m = 0; m < batch(); ++m)
            for (int k = 0; k < 2; ++k) a.push_back(f_.field(f_.cur, k) + m * box_.padded_size());
        return a;
    }
    // Padded planes iz0 + R .. iz0 + R + count - 1 of each device array in turn to (in: from)
    // the host bytes at h, one run after another; returns when the host memory is done with.
    void move_planes(const std::vector<const T*>& arrays, int iz0, int count, char* h, bool in) const {
        const std::size_t n = std::size_t(box_.sz()) * std::size_t(count) * sizeof(T);
        for (const T* a : arrays) {
            char* dev = reinterpret_cast<char*>(const_cast<T*>(a) + std::size_t(iz0 + stencil::R) * box_.sz());
            RTM_CUDA_CHECK(cudaMemcpyAsync(in ? dev : h, in ? h : dev, n,
                                           in ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, stream_));
            h += n;
        }
        RTM_CUDA_CHECK(cudaStreamSynchronize(stream_));
    }

    // Sums the device time of the recorded steps (waits for the last).
    void collect() const {
        for (auto& e : events_) {
            RTM_CUDA_CHECK(cudaEventSynchronize(e.second));
            float ms = 0;
            RTM_CUDA_CHECK(cudaEventElapsedTime(&ms, e.first, e.second));
            busy_ += ms * 1e-3;
            cudaEventDestroy(e.first);
            cudaEventDestroy(e.second);
        }
        events_.clear();
    }

    int device_ = 0;  // the GPU current when it was made
    const Domain& d_;
    kernels::Box box_;
    cudaStream_t stream_ = f_.stream();
    kc::TtiKernel kernel_ = kc::TtiKernel::Swic;
    kernels::TtiStepArgs<T> args_;
    kc::DeviceBuffer<T> cpp_, cpq_, cqq_, damp_, axis_[3], flux_[6];
    DeviceInjection inj_p_, inj_q_;
    DeviceReceivers<double> rec_;
    std::function<void(int)> between_;  // set_between_passes
    mutable std::vector<std::pair<cudaEvent_t, cudaEvent_t>> events_;
    mutable double busy_ = 0;
};

}  // namespace

std::unique_ptr<Propagator> make_tti_cuda_propagator(const Domain& domain, Precision precision, int batch) {
    if (precision == Precision::Double) return std::make_unique<TtiCudaPropagator<double>>(domain, batch);
    return std::make_unique<TtiCudaPropagator<float>>(domain, batch);
}

}  // namespace rtm
