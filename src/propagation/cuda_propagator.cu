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
// z-slabs (propagation/slab_propagator.h): plane copies to and from the host
//   (copy_planes_out/in, for the host-staged exchange); exchange_in_step has each step
//   update the edge planes (kernels/step_planes.h) and inject their sources on a
//   high-priority stream, send them to the neighbours (propagation/cuda_slab_exchange.h)
//   and update the interior on stream_ meanwhile; window_continues lets the derivative
//   imaging conditions read the ghost planes beyond the slab's window.
// Host threads: set_sources and set_receivers may be called from another thread than
// the steps (migration gives the receivers to their propagator beside the source pass):
// they make this propagator's GPU current there (a thread's current GPU is its own).
// Busy time: a pair of timing events around each step's launches (a ring of kTimed;
// a pair is read when its slot comes round again, kTimed steps later, or by
// busy_seconds()), summed: the device time in propagation kernels.
#include <cuda_runtime_api.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <sstream>
#include <utility>

#include "core/error.h"
#include "core/phases.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/points_cuda.h"
#include "kernels/cuda/step_cuda.h"
#include "kernels/step_planes.h"
#include "parallel/world.h"
#include "propagation/backend.h"
#include "propagation/cuda_slab_exchange.h"
#include "propagation/device_taps.h"
#include "propagation/device_wavefields.h"
#include "propagation/injection.h"
#include "propagation/stored_propagator.h"
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

double device_memory_bandwidth() {
    int dev = 0, khz = 0, bits = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&bits, cudaDevAttrGlobalMemoryBusWidth, dev) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return 2.0 * khz * 1e3 * bits / 8;  // double data rate
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
class CudaPropagator final : public StoredPropagator<DeviceWavefields<T>> {
    using Base = StoredPropagator<DeviceWavefields<T>>;
    using Base::f_;  // (members of a dependent base are named)
    using Base::require_same_batch;
    using Base::unsupported;

public:
    using Base::batch;
    CudaPropagator(const Domain& d, int batch) : StoredPropagator<DeviceWavefields<T>>(d, 1, batch), d_(d), box_(d.box()) {
        RTM_CUDA_CHECK(cudaGetDevice(&device_));
        const std::size_t n = box_.padded_size() * std::size_t(batch);
        const bool cpml = d.options().boundary == Boundary::Cpml;
        args_.mem = kernels::cpml_memory(box_);
        std::size_t mem_values = 0;  // psi and zeta of every axis with layers, every member
        for (int ax = 0; ax < 3; ++ax)
            if (d.cpml(ax)) mem_values += 2 * args_.mem.size[ax] * std::size_t(batch);
        require_memory((n * (3 + (d.damping().empty() ? 0 : 1)) + mem_values) * sizeof(T),
                       cpml ? "wavefields, (v dt)^2 and C-PML memory" : "wavefields, (v dt)^2 and damping");

        // Kernel variant: the library default, or RTM_CUDA_VARIANT (tuning, rtm bench).
        if (const char* v = std::getenv("RTM_CUDA_VARIANT")) cfg_.variant = kc::parse_variant(v);
        if (const char* v = std::getenv("RTM_CUDA_SPLIT")) cfg_.split = std::string(v) != "0";
        if (const char* v = std::getenv("RTM_CUDA_OVERLAP")) cfg_.overlap = std::atoi(v);
        f_.allocate();
        vdt2_.upload(converted<T>(d.vdt2()));
        d.inverse_spacings(args_.inv_h2, args_.inv_h);
        for (int ax = 0; ax < 3; ++ax) {
            if (d.cpml(ax)) {  // (Domain::cpml: a z-slab's own layers follow the whole box's)
                a_[ax].upload(converted<T>(d.profile(ax).a));
                b_[ax].upload(converted<T>(d.profile(ax).b));
            }
            if (d.cpml(ax) && args_.mem.size[ax]) {  // (a z-slab between the z layers has no z memory)
                psi_[ax].resize(args_.mem.size[ax] * std::size_t(batch));
                zeta_[ax].resize(args_.mem.size[ax] * std::size_t(batch));
                psi_[ax].zero(stream_);
                zeta_[ax].zero(stream_);
                f_.state_extra.push_back(&psi_[ax]);  // a state: u, u_prev and the C-PML memory
                f_.state_extra.push_back(&zeta_[ax]);
            }
        }
        if (!d.damping().empty()) {
            damp_.upload(converted<T>(d.damping()));
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
        if (edge_) cudaStreamSynchronize(edge_);
        for (cudaEvent_t e : {fork_, join_})
            if (e) cudaEventDestroy(e);
        if (edge_) cudaStreamDestroy(edge_);
        for (auto& tm : timing_) {
            if (tm.start) cudaEventDestroy(tm.start);
            if (tm.stop) cudaEventDestroy(tm.stop);
        }
    }

    // The taps grouped by target point as CpuPropagator groups them (injection_of), so
    // that inject_cuda, one thread per point, adds them in the CPU's order.
    void set_sources(const std::vector<PointStencil>& where,
                     const std::vector<std::vector<double>>& traces) override {
        RTM_CUDA_CHECK(cudaSetDevice(device_));
        kernels::Injection inj = injection_of(d_, where, traces);
        inj_edge_ = slab_ ? edge_targets_first(inj) : 0;
        require_memory(inj.traces.size() * 8 + inj.target.size() * 12 + inj.coef.size() * 12, "source traces");
        inj_.upload(inj, stream_);
    }

    void set_receivers(const std::vector<PointStencil>& where, int nt) override {
        RTM_CUDA_CHECK(cudaSetDevice(device_));
        std::size_t taps = 0;
        for (const auto& r : where) taps += r.index.size();
        require_memory(where.size() * std::size_t(nt) * sizeof(T) + taps * 16, "receiver traces");
        rec_.set(where, nt, stream_);
    }

    void reset() override {
        f_.reset();  // wavefields, C-PML memory, image
        rec_.traces.zero(stream_);
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
        if (rec_.records(n))
            kc::sample_cuda(u_.data(), rec_.count, rec_.offset.data(), rec_.index.data(), rec_.weight.data(),
                            rec_.traces.data(), n, stream_);
        // The free-surface mirror of u[n] before it is read: sources injected after the
        // last step, add_field, recall and load_band change u[n] after the kernel's own mirror.
        if (box_.free_surface) kc::free_surface_cuda(box_, u_.data(), stream_, batch());
        args_.u = u_.data();
        args_.w = w_.data();
        if (slab_) {
            step_slab(n);
        } else {
            kc::step_cuda(args_, cfg_, stream_);
            inj_.add(w_.data(), n, stream_);
        }
        std::swap(u_, w_);
        RTM_CUDA_CHECK(cudaEventRecord(tm.stop, stream_));
        tm.pending = true;
        if (slab_) slab_->finish(stream_);
    }

    // --- z-slabs (propagation/slab_propagator.h) ---
    std::size_t plane_bytes() const override { return std::size_t(box_.sz()) * sizeof(T); }
    // Planes iz0 .. iz0 + count - 1 of every member (padded plane iz + R of member m
    // starts at m padded_size + (iz + R) sz): a copy per member, after the queued work.
    void copy_planes_out(int iz0, int count, void* dst) const override { copy_planes(iz0, count, dst, false); }
    void copy_planes_in(int iz0, int count, const void* src) override {
        copy_planes(iz0, count, const_cast<void*>(src), true);
    }
    void copy_planes(int iz0, int count, void* host, bool in) const {
        const std::size_t n = plane_bytes() * std::size_t(count);
        for (int m = 0; m < batch(); ++m) {
            char* dev = reinterpret_cast<char*>(const_cast<T*>(u_.data()) + m * box_.padded_size() +
                                                std::size_t(iz0 + stencil::R) * box_.sz());
            char* h = static_cast<char*>(host) + std::size_t(m) * n;
            RTM_CUDA_CHECK(cudaMemcpyAsync(in ? dev : h, in ? h : dev, n, in ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost,
                                           stream_));
        }
        RTM_CUDA_CHECK(cudaStreamSynchronize(stream_));  // the caller's memory
    }

    bool window_continues(int before, int after) override {
        f_.z_before = before;
        f_.z_after = after;
        return true;
    }

    // The exchange inside step() (propagation/cuda_slab_exchange.h): one member, the
    // cuts R planes inside the inner faces clear of the layers' zones (step_planes),
    // before any sources are set (their targets are ordered edge planes first).
    bool exchange_in_step(const parallel::World& group) override {
        if (inj_.targets())
            fail("exchange_in_step", "called after set_sources", "Internal error: set up the exchange first");
        const bool up = group.rank() > 0, down = group.rank() + 1 < group.size();
        std::string why;
        if (batch() != 1) why = "a batch of " + std::to_string(batch()) + " shots";
        else if (box_.nz < 3 * stencil::R) why = "a slab of " + std::to_string(box_.nz) + " planes";
        else if (!kernels::plane_cut_clean(box_, up ? stencil::R : 0) ||
                 !kernels::plane_cut_clean(box_, down ? box_.nz - stencil::R : box_.nz))
            why = "edge planes within the layers' zones";
        if (!group.all(why.empty())) {
            log_exchange(group, why.empty() ? "another rank's slab cannot (a thin slab or layers at its edges)" : why);
            return false;
        }
        void* const base[2] = {u_.data(), w_.data()};
        slab_ = CudaSlabExchange::open(group, base, box_.nz, plane_bytes(), &why);
        if (!slab_) {
            log_exchange(group, why);
            return false;
        }
        base_[0] = u_.data();
        base_[1] = w_.data();
        const char* ov = std::getenv("RTM_SLAB_OVERLAP");
        slab_overlap_ = !(ov && std::string(ov) == "0");
        int least = 0, greatest = 0;
        RTM_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
        RTM_CUDA_CHECK(cudaStreamCreateWithPriority(&edge_, cudaStreamNonBlocking, greatest));
        RTM_CUDA_CHECK(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming));
        RTM_CUDA_CHECK(cudaEventCreateWithFlags(&join_, cudaEventDisableTiming));
        log_exchange(group, "");
        return true;
    }

    double busy_seconds() const override {
        for (auto& tm : timing_)
            if (tm.pending) collect(tm);
        return busy_;
    }

    // --- States, band, snapshots and correlation: DeviceWavefields (device_wavefields.h) ---
    // Where the states are (for the tests): 0 none, 1 device memory, 2 pinned host memory.
    int states_where() const { return f_.states_where(); }

    std::vector<double> receiver_traces() const override {
        RTM_CUDA_CHECK(cudaStreamSynchronize(stream_));
        return rec_.download();
    }

    // The traces' buffer goes with the function; the next steps record into the spare
    // (the buffer of the fetch before, given back when that fetch is done: two buffers
    // for a modelling job). The steps that wrote it end first. The copy to the host then
    // runs on the legacy stream, which stream_ (non-blocking) is not ordered with: beside
    // the next steps.
    std::function<FetchedTraces()> receiver_traces_later() override {
        RTM_CUDA_CHECK(cudaSetDevice(device_));
        RTM_CUDA_CHECK(cudaStreamSynchronize(stream_));
        auto traces = std::make_shared<kc::DeviceBuffer<T>>(std::move(rec_.traces));
        {
            const std::lock_guard<std::mutex> lock(spare_->mutex);
            rec_.traces = std::move(spare_->buffer);
        }
        rec_.traces.resize(traces->size());
        rec_.traces.zero(stream_);
        return [traces, spare = spare_, device = device_, nt = rec_.nt, nrec = rec_.count]() {
            RTM_CUDA_CHECK(cudaSetDevice(device));
            PhaseTimer downloading("traces to the host");
            const auto t = traces->template download<UninitVector<T>>();
            downloading.stop();
            {
                const std::lock_guard<std::mutex> lock(spare->mutex);
                if (spare->buffer.empty()) spare->buffer = std::move(*traces);
            }
            const PhaseTimer transposing("traces to receiver order");
            return FetchedTraces(DeviceReceivers<T>::template receiver_major<UninitVector<double>>(t, nt, nrec));
        };
    }

    bool finite() const override { return f_.finite(); }

    // u += injection * f on the window's nodes, after the step just queued.
    void add_field(const std::vector<double>& f) override { f_.add_field(f, InjectionWeight{d_}); }

    // Born modelling: the source -dm v^2 Lap u0 formed on the device from the background's
    // field, with add_field's weights (DeviceWavefields::add_scalar_born_source; the
    // perturbation set by StoredPropagator::set_born_perturbation).
    void add_born_source(const Propagator& background) override {
        const auto* u0 = dynamic_cast<const CudaPropagator<T>*>(&background);
        if (!u0) unsupported("Born modelling with a background propagator of another backend or precision");
        require_same_batch(background);
        this->born_perturbation();  // throws when none was set
        f_.add_scalar_born_source(u0->f_, InjectionWeight{d_});
    }

    void reserve_bands(std::size_t count) override { f_.reserve_bands(count); }
    void store_band(std::size_t slot) override { f_.store_band(slot); }
    void load_band(std::size_t slot) override { f_.load_band(slot); }
    std::pair<int, const void*> bands_where() const { return f_.bands_where(); }

    void correlate(const Propagator& source, double w, ImagingCondition condition) override {
        const auto* src = dynamic_cast<const CudaPropagator<T>*>(&source);
        if (!src) unsupported("correlate with a propagator of another backend or precision");
        require_same_batch(source);
        f_.correlate(src->f_, w, condition);
    }
    std::pair<std::size_t, std::size_t> kept_where() const { return f_.kept_where(); }

    std::string name() const override { return sizeof(T) == 4 ? "cuda (fp32)" : "cuda (fp64)"; }

private:
    // The weight of a unit source density at padded point p (the one field's): the
    // window's volume sources (add_field) and the Born source.
    struct InjectionWeight {
        const Domain& d;
        double operator()(int, long p) const { return d.injection(p); }
    };
    // Whether padded point p lies on an edge plane (the R planes beside an inner face).
    bool on_edge(long p) const {
        const long iz = (p % long(box_.padded_size())) / box_.sz() - stencil::R;
        return (slab_->above() && iz < stencil::R) || (slab_->below() && iz >= box_.nz - stencil::R);
    }
    // Reorders inj's targets, those on edge planes first (each target's taps unchanged:
    // the same additions in the same order); returns how many are on edge planes.
    int edge_targets_first(kernels::Injection& inj) const {
        std::vector<std::size_t> order(inj.target.size());
        for (std::size_t t = 0; t < order.size(); ++t) order[t] = t;
        const auto first = std::stable_partition(order.begin(), order.end(),
                                                 [&](std::size_t t) { return on_edge(inj.target[t]); });
        kernels::Injection out;  // the taps reordered; the traces moved, not copied
        out.traces = std::move(inj.traces);
        out.nt = inj.nt;
        out.inv_vol = inj.inv_vol;
        out.offset.assign(1, 0);
        for (std::size_t t : order) {
            out.target.push_back(inj.target[t]);
            for (int k = inj.offset[t]; k < inj.offset[t + 1]; ++k) {
                out.source.push_back(inj.source[std::size_t(k)]);
                out.coef.push_back(inj.coef[std::size_t(k)]);
            }
            out.offset.push_back(int(out.source.size()));
        }
        inj = std::move(out);
        return int(first - order.begin());
    }
    // A z-slab's step (after the sampling and the mirror on stream_): the edge planes and
    // their sources on the high-priority stream, their copies to the neighbours started
    // there, the interior and its sources on stream_ meanwhile, joined before the end.
    // RTM_SLAB_OVERLAP=0: everything in turn on stream_ (benchmarks: the exchange's cost).
    void step_slab(int n) {
        const int nz = box_.nz, lo = slab_->above() ? stencil::R : 0, hi = slab_->below() ? nz - stencil::R : nz;
        cudaStream_t es = slab_overlap_ ? edge_ : stream_;
        if (slab_overlap_) {
            RTM_CUDA_CHECK(cudaEventRecord(fork_, stream_));
            RTM_CUDA_CHECK(cudaStreamWaitEvent(edge_, fork_, 0));
        }
        if (lo) kc::step_cuda(kernels::step_planes(args_, 0, lo), cfg_, es);
        if (hi < nz) kc::step_cuda(kernels::step_planes(args_, hi, nz), cfg_, es);
        inj_.add(w_.data(), n, es, 0, inj_edge_);
        slab_->send(w_.data() == base_[0] ? 0 : 1, es);
        if (slab_overlap_) RTM_CUDA_CHECK(cudaEventRecord(join_, edge_));
        kc::step_cuda(kernels::step_planes(args_, lo, hi), cfg_, stream_);
        inj_.add(w_.data(), n, stream_, inj_edge_);
        if (slab_overlap_) RTM_CUDA_CHECK(cudaStreamWaitEvent(stream_, join_, 0));
    }
    // Which exchange a group's slabs use, once per process.
    void log_exchange(const parallel::World& group, const std::string& why_not) const {
        static bool said = false;
        if (said || group.rank() != 0) return;
        said = true;
        if (why_not.empty())
            spdlog::info("z-slab ghost planes: device to device (CUDA IPC), the edge planes first and their copies hidden behind the interior");
        else
            spdlog::info("z-slab ghost planes: through the host and MPI ({})", why_not);
    }

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
    int device_ = 0;  // the GPU current when it was made (the rank's own: choose_backend)
    // The wavefields and what migration keeps of them (device_wavefields.h); u_ and w_
    // are its buffers (swapping them swaps its current and previous wavefields), stream_
    // its stream.
    kc::DeviceBuffer<T>& u_ = f_.cur;
    kc::DeviceBuffer<T>& w_ = f_.prev;
    cudaStream_t stream_ = f_.stream();
    kernels::StepArgs<T> args_;
    kc::LaunchConfig cfg_;
    kc::DeviceBuffer<T> vdt2_, damp_, a_[3], b_[3], psi_[3], zeta_[3];
    DeviceInjection inj_;
    DeviceReceivers<T> rec_;
    // A traces buffer given back by a fetch of receiver_traces_later, for the next one.
    struct SpareTraces {
        std::mutex mutex;
        kc::DeviceBuffer<T> buffer;
    };
    std::shared_ptr<SpareTraces> spare_ = std::make_shared<SpareTraces>();
    static constexpr int kTimed = 128;
    mutable Timing timing_[kTimed];
    int timing_next_ = 0;
    mutable double busy_ = 0;  // seconds of collected steps
    // A z-slab's exchange in the step (exchange_in_step): the edge planes' stream, its
    // fork and join events, the targets on edge planes (first), the two buffers as exported.
    cudaStream_t edge_ = nullptr;
    cudaEvent_t fork_ = nullptr, join_ = nullptr;
    int inj_edge_ = 0;
    bool slab_overlap_ = true;
    const void* base_[2] = {nullptr, nullptr};
    std::unique_ptr<CudaSlabExchange> slab_;  // after u_, w_: closed before they are freed
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
    domain.require_all("CUDA propagator");
    std::string why;
    int device = 0;  // the rank's own (choose_backend's): kept
    if (cudaGetDevice(&device) != cudaSuccess) cudaGetLastError();
    if (!cuda_device_available(&why, device)) fail("option propagation.device = gpu", why, "Set propagation.device to cpu or auto");
    if (domain.anisotropic()) return make_tti_cuda_propagator(domain, precision, batch);
    if (precision == Precision::Double) return std::make_unique<CudaPropagator<double>>(domain, batch);
    return std::make_unique<CudaPropagator<float>>(domain, batch);
}

}  // namespace rtm
