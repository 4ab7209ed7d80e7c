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
// Snapshots (keep/recall) and the cross-correlation image stay on the device:
//   keep(bf16) packs the window's current wavefield (T, or bfloat16 converted on the
//   device) into a slot. Slots are allocated in chunks in device memory while the GPU
//   keeps RTM_KEEP_HEADROOM_GB (default 2) GB free after the chunk, else in pinned host
//   memory: the pack goes to one of two device staging buffers and a second stream
//   (copy_) copies it down, so the copy overlaps the next steps.
//   recall(slot) unpacks a slot into the window of the current wavefield; host slots
//   come up through a staging buffer on copy_, and the slot below is prefetched into
//   the other one (migration recalls in descending order).
//   correlate(source, w, condition) accumulates image and illumination (double, window
//   nodes; inverse scattering and the Born adjoint from both propagators' current and
//   previous wavefields, recall(slot, true) filling the previous one) on
//   this propagator's stream after the source's queued work (events both ways: the
//   source's next step must not overwrite what the correlation reads).
// Band history (reserve_bands / store_band / load_band, boundary-saving migration):
//   reserve_bands(count) allocates count slots of band_size() floats in device memory
//   when RTM_KEEP_HEADROOM_GB (as for keep) stays free after it, else in pinned host
//   memory; a later call that fits in the allocation reuses it. On the device,
//   store_band(slot) is one gather into the slot and load_band(slot) one scatter from
//   it: no copy over the bus, no host wait. In pinned host memory, store_band gathers
//   into staging buffer slot % kBandStages and copy_ copies it down (no host wait);
//   load_band scatters from that staging buffer (uploading the slot first unless the
//   buffer already holds it) and prefetches the kBandStages - 1 slots below on copy_
//   (migration loads in descending order; the last slots stored are still staged).
// States (reserve_states / store_state / load_state, checkpointing migration): slots of
//   u, u_prev and the C-PML memory, in device memory when RTM_KEEP_HEADROOM_GB stays free
//   after them, else in pinned host memory; stored and loaded by copies on the stream
//   (device to device, or over the bus: then the steps wait for them, a checkpoint being
//   rare next to the steps that recompute from it).
// z-slabs (propagation/slab_propagator.h): plane copies to and from the host
//   (copy_planes_out/in, for the host-staged exchange); exchange_in_step has each step
//   update the edge planes (kernels/step_planes.h) and inject their sources on a
//   high-priority stream, send them to the neighbours (propagation/cuda_slab_exchange.h)
//   and update the interior on stream_ meanwhile; window_continues lets the derivative
//   imaging conditions read the ghost planes beyond the slab's window.
// Busy time: a pair of timing events around each step's launches (a ring of kTimed;
// a pair is read when its slot comes round again, kTimed steps later, or by
// busy_seconds()), summed: the device time in propagation kernels.
// Every staging buffer is guarded by two events (last compute use on stream_, last
// copy on copy_) that the other stream waits on before touching it.
#include <cuda_runtime_api.h>
#include <spdlog/spdlog.h>

#include <algorithm>
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
#include "kernels/step_planes.h"
#include "parallel/world.h"
#include "propagation/backend.h"
#include "propagation/cuda_slab_exchange.h"
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
    CudaPropagator(const Domain& d, int batch) : Propagator(batch), d_(d), box_(d.box()) {
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
        RTM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
        u_.resize(n);
        w_.resize(n);
        u_.zero(stream_);
        w_.zero(stream_);
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
        // Pending copies into pinned memory must finish before it is freed.
        if (stream_) cudaStreamSynchronize(stream_);
        if (copy_) cudaStreamSynchronize(copy_);
        for (auto& st : stage_) {
            if (st.compute_done) cudaEventDestroy(st.compute_done);
            if (st.copy_done) cudaEventDestroy(st.copy_done);
        }
        for (auto& e : restore_done_)
            if (e) cudaEventDestroy(e);
        for (auto& st : bstage_) {
            if (st.compute_done) cudaEventDestroy(st.compute_done);
            if (st.copy_done) cudaEventDestroy(st.copy_done);
        }
        if (handoff_) cudaEventDestroy(handoff_);
        if (edge_) cudaStreamSynchronize(edge_);
        for (cudaEvent_t e : {fork_, join_})
            if (e) cudaEventDestroy(e);
        if (edge_) cudaStreamDestroy(edge_);
        for (auto& tm : timing_) {
            if (tm.start) cudaEventDestroy(tm.start);
            if (tm.stop) cudaEventDestroy(tm.stop);
        }
        if (copy_) cudaStreamDestroy(copy_);
        if (stream_) cudaStreamDestroy(stream_);
    }

    // The taps grouped by target point as CpuPropagator groups them (injection_of), so
    // that inject_cuda, one thread per point, adds them in the CPU's order.
    void set_sources(const std::vector<PointStencil>& where,
                     const std::vector<std::vector<double>>& traces) override {
        kernels::Injection inj = injection_of(d_, where, traces);
        inj_edge_ = slab_ ? edge_targets_first(inj) : 0;
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
        u_.zero(stream_);
        w_.zero(stream_);
        for (int ax = 0; ax < 3; ++ax) {
            psi_[ax].zero(stream_);
            zeta_[ax].zero(stream_);
        }
        rec_tr_.zero(stream_);
        image_.zero(stream_);
        illum_.zero(stream_);
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
        if (slab_) {
            step_slab(n);
        } else {
            kc::step_cuda(args_, cfg_, stream_);
            inject(0, int(inj_target_.size()), n, stream_);
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
        z_before_ = before;
        z_after_ = after;
        return true;
    }

    // The exchange inside step() (propagation/cuda_slab_exchange.h): one member, the
    // cuts R planes inside the inner faces clear of the layers' zones (step_planes),
    // before any sources are set (their targets are ordered edge planes first).
    bool exchange_in_step(const parallel::World& group) override {
        if (inj_target_.size())
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

    // --- States (see the file's header) ---
    std::vector<T*> state_arrays() {
        std::vector<T*> a{u_.data(), w_.data()};
        for (int ax = 0; ax < 3; ++ax)
            if (!psi_[ax].empty()) {
                a.push_back(psi_[ax].data());
                a.push_back(zeta_[ax].data());
            }
        return a;
    }
    std::size_t state_values() const {
        std::size_t arrays = 2;
        for (int ax = 0; ax < 3; ++ax) arrays += psi_[ax].empty() ? 0 : 2;
        return arrays * u_.size();
    }
    std::size_t state_bytes() const override { return state_values() * sizeof(T); }
    void reserve_states(std::size_t count) override {
        RTM_CUDA_CHECK(cudaStreamSynchronize(stream_));  // queued copies may use the old slots
        if (count <= state_capacity_) {  // reuse (a kept propagator's next shot)
            state_slots_ = count;
            return;
        }
        states_dev_.resize(0);
        states_host_ = kc::PinnedBuffer();
        const double bytes = double(count) * state_bytes();
        std::size_t free_b = 0, total_b = 0;
        RTM_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
        if (double(free_b) - headroom_bytes() >= bytes) states_dev_.resize(count * state_values());
        else states_host_ = kc::PinnedBuffer(count * state_bytes());
        state_slots_ = state_capacity_ = count;
    }
    void store_state(std::size_t slot) override { move_state(slot, true); }
    void load_state(std::size_t slot) override { move_state(slot, false); }
    void move_state(std::size_t slot, bool store) {
        if (slot >= state_slots_)
            fail(store ? "store_state" : "load_state",
                 "slot " + std::to_string(slot) + " beyond the " + std::to_string(state_slots_) + " reserved");
        const bool dev = !states_dev_.empty();
        T* p = (dev ? states_dev_.data() : static_cast<T*>(states_host_.data())) + slot * state_values();
        const std::size_t bytes = u_.size() * sizeof(T);
        for (T* a : state_arrays()) {
            RTM_CUDA_CHECK(cudaMemcpyAsync(store ? p : a, store ? a : p, bytes,
                                           dev ? cudaMemcpyDeviceToDevice
                                               : store ? cudaMemcpyDeviceToHost : cudaMemcpyHostToDevice,
                                           stream_));
            p += u_.size();
        }
    }
    // Where the states are (for the tests): 0 none, 1 device memory, 2 pinned host memory.
    int states_where() const { return !states_dev_.empty() ? 1 : states_host_.bytes() ? 2 : 0; }

    std::vector<double> receiver_traces() const override {
        RTM_CUDA_CHECK(cudaStreamSynchronize(stream_));
        const auto t = rec_tr_.download();  // nt x nrec
        std::vector<double> out(t.size());
        kernels::transpose_widen(t.data(), nt_, nrec_, out.data());  // on every core (kernels/cpu/transpose_cpu.h)
        return out;
    }

    std::vector<double> wavefield() const override { return window_of(u_); }
    std::vector<double> previous_wavefield() const override { return window_of(w_); }

    // One pass over every member's computed points on the stream (after the queued
    // steps); 4 bytes come back, no wavefield.
    bool finite() const override {
        if (nonfinite_.empty()) nonfinite_.resize(1);
        nonfinite_.zero(stream_);
        kc::nonfinite_cuda(box_, u_.data(), batch(), nonfinite_.data(), stream_);
        int flag = 0;
        RTM_CUDA_CHECK(cudaMemcpyAsync(&flag, nonfinite_.data(), sizeof flag, cudaMemcpyDeviceToHost, stream_));
        RTM_CUDA_CHECK(cudaStreamSynchronize(stream_));
        return flag == 0;
    }

    // u += injection * f on the window's nodes (f there, x fastest, member after member),
    // on the stream after the step just queued: f goes up as T (converted here), the
    // product is taken in double as the CPU does.
    void add_field(const std::vector<double>& f) override {
        const Grid& g = d_.window();
        if (f.size() != g.size() * batch())
            fail("add_field", "the field has " + std::to_string(f.size()) + " values but the window " +
                                  std::to_string(g.size()) + " nodes" +
                                  (batch() > 1 ? " for each of " + std::to_string(batch()) + " members" : ""));
        if (inj_.empty()) {  // injection coefficient per window node, once
            std::vector<T> c(g.size());
            for (int iz = 0; iz < g.nz; ++iz)
                for (int iy = 0; iy < g.ny; ++iy)
                    for (int ix = 0; ix < g.nx; ++ix) c[g.index(ix, iy, iz)] = T(injection(d_.index(ix, iy, iz)));
            inj_.upload(c);
            field_.resize(f.size());
        }
        field_host_.resize(f.size());
        for (std::size_t i = 0; i < f.size(); ++i) field_host_[i] = T(f[i]);
        // Pageable source: the copy is staged before it returns, so field_host_ may change after.
        RTM_CUDA_CHECK(cudaMemcpyAsync(field_.data(), field_host_.data(), f.size() * sizeof(T),
                                       cudaMemcpyHostToDevice, stream_));
        kc::add_window_cuda(box_, window_origin(), g.nx, g.ny, g.nz, inj_.data(), field_.data(), u_.data(), stream_,
                            batch());
    }

    void reverse_time() override { std::swap(u_, w_); }

    std::size_t band_size() const override { return d_.band().size() * batch(); }

    // The band is saved every step of a run: a gather into a device buffer, one
    // asynchronous copy into pinned host memory, and a host copy into the caller's
    // memory once the stream has got there. The caller owns dst and may read it on
    // return, so every save waits for the step before it (the GPU idles while the host
    // copies and queues the next step); migration uses store_band / load_band
    // instead, which keep the history on the propagator and never wait.
    void save_band(float* dst) const override {
        prepare_band();
        const std::size_t nb = band_idx_.size();
        if (!nb) return;
        kc::gather_cuda(u_.data(), band_idx_.data(), nb, band_buf_.data(), stream_);
        float* pinned = static_cast<float*>(band_out_.data());
        RTM_CUDA_CHECK(cudaMemcpyAsync(pinned, band_buf_.data(), nb * sizeof(float), cudaMemcpyDeviceToHost, stream_));
        RTM_CUDA_CHECK(cudaStreamSynchronize(stream_));
        std::memcpy(dst, pinned, nb * sizeof(float));
    }
    // The caller's band goes into one of kRestoreRing pinned buffers (reused only once
    // its last upload has finished), then up and scattered on the stream: no wait for
    // the queued steps.
    void restore_band(const float* src) override {
        prepare_band();
        const std::size_t nb = band_idx_.size();
        if (!nb) return;
        const int r = restore_next_;
        restore_next_ = (restore_next_ + 1) % kRestoreRing;
        RTM_CUDA_CHECK(cudaEventSynchronize(restore_done_[r]));
        float* pinned = static_cast<float*>(band_in_[r].data());
        std::memcpy(pinned, src, nb * sizeof(float));
        RTM_CUDA_CHECK(cudaMemcpyAsync(band_buf_.data(), pinned, nb * sizeof(float), cudaMemcpyHostToDevice, stream_));
        RTM_CUDA_CHECK(cudaEventRecord(restore_done_[r], stream_));
        kc::scatter_cuda(band_buf_.data(), band_idx_.data(), nb, u_.data(), stream_);
    }

    // --- Band history (see the file's header) ---
    void reserve_bands(std::size_t count) override {
        prepare_band();
        const std::size_t nb = band_idx_.size();
        for (auto& st : bstage_) st.slot = -1;
        if (count <= hist_capacity_ || nb == 0) {  // reuse (or nothing to hold)
            hist_slots_ = count;
            return;
        }
        // Queued gathers, scatters and copies may still use the old allocation.
        RTM_CUDA_CHECK(cudaStreamSynchronize(stream_));
        if (copy_) RTM_CUDA_CHECK(cudaStreamSynchronize(copy_));
        hist_dev_.resize(0);
        hist_host_ = kc::PinnedBuffer();
        hist_slots_ = hist_capacity_ = 0;
        const std::size_t bytes = count * nb * sizeof(float);
        std::size_t free_b = 0, total_b = 0;
        RTM_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
        if (double(free_b) - headroom_bytes() >= double(bytes)) {
            hist_dev_.resize(count * nb);
        } else {
            ensure_copy_stream();
            require_memory(kBandStages * nb * sizeof(float), "band history staging buffers");
            for (auto& st : bstage_) {
                st.buf.resize(nb);
                if (!st.compute_done) {
                    RTM_CUDA_CHECK(cudaEventCreateWithFlags(&st.compute_done, cudaEventDisableTiming));
                    RTM_CUDA_CHECK(cudaEventCreateWithFlags(&st.copy_done, cudaEventDisableTiming));
                }
            }
            hist_host_ = kc::PinnedBuffer(bytes);
        }
        hist_slots_ = hist_capacity_ = count;
    }

    void store_band(std::size_t slot) override {
        if (slot >= hist_slots_) fail("store_band", "slot " + std::to_string(slot) + " beyond the " + std::to_string(hist_slots_) + " reserved");
        const std::size_t nb = band_idx_.size();
        if (!nb) return;
        if (!hist_dev_.empty()) {
            kc::gather_cuda(u_.data(), band_idx_.data(), nb, hist_dev_.data() + slot * nb, stream_);
            return;
        }
        BandStage& st = bstage_[slot % kBandStages];
        RTM_CUDA_CHECK(cudaStreamWaitEvent(stream_, st.copy_done, 0));
        kc::gather_cuda(u_.data(), band_idx_.data(), nb, st.buf.data(), stream_);
        RTM_CUDA_CHECK(cudaEventRecord(st.compute_done, stream_));
        RTM_CUDA_CHECK(cudaStreamWaitEvent(copy_, st.compute_done, 0));
        RTM_CUDA_CHECK(cudaMemcpyAsync(host_band(slot), st.buf.data(), nb * sizeof(float), cudaMemcpyDeviceToHost,
                                       copy_));
        RTM_CUDA_CHECK(cudaEventRecord(st.copy_done, copy_));
        st.slot = long(slot);  // the staging buffer holds this slot's band too
    }

    void load_band(std::size_t slot) override {
        if (slot >= hist_slots_) fail("load_band", "slot " + std::to_string(slot) + " beyond the " + std::to_string(hist_slots_) + " reserved");
        const std::size_t nb = band_idx_.size();
        if (!nb) return;
        if (!hist_dev_.empty()) {
            kc::scatter_cuda(hist_dev_.data() + slot * nb, band_idx_.data(), nb, u_.data(), stream_);
            return;
        }
        BandStage& st = bstage_[slot % kBandStages];
        if (st.slot != long(slot)) upload_band(slot);
        RTM_CUDA_CHECK(cudaStreamWaitEvent(stream_, st.copy_done, 0));
        kc::scatter_cuda(st.buf.data(), band_idx_.data(), nb, u_.data(), stream_);
        RTM_CUDA_CHECK(cudaEventRecord(st.compute_done, stream_));
        // Prefetch the slots below into the other staging buffers.
        for (std::size_t j = 1; j < std::size_t(kBandStages) && j <= slot; ++j)
            if (bstage_[(slot - j) % kBandStages].slot != long(slot - j)) upload_band(slot - j);
    }

    // Where the band history is (for the bench and tests): 0 none, 1 device memory,
    // 2 pinned host memory; and the allocation's address.
    std::pair<int, const void*> bands_where() const {
        if (!hist_dev_.empty()) return {1, hist_dev_.data()};
        if (hist_host_.bytes()) return {2, hist_host_.data()};
        return {0, nullptr};
    }

    // --- Snapshots and cross-correlation (see the file's header) ---
    std::size_t keep(bool bf16) override {
        if (slots_.empty()) {
            if (bf16 != kept_bf16_) free_slots();  // slots of the other kind's size
            kept_bf16_ = bf16;
        } else if (kept_bf16_ != bf16)
            fail("keep", "snapshots of one propagator must all be of one kind (all bfloat16 or none)");
        if (slots_.size() == slot_capacity_) add_chunk();
        const std::size_t slot = slots_.size();
        const Slot& where = slot_at(slot);
        slots_.push_back(where);
        const Grid& g = d_.window();
        if (!where.host) {
            kc::pack_window_cuda(box_, window_origin(), g.nx, g.ny, g.nz, u_.data(), where.p, bf16, stream_, batch());
            return slot;
        }
        const int b = stage_next_;
        stage_next_ ^= 1;
        Stage& st = stage_[b];
        st.slot = -1;  // holds no slot worth reusing after this
        RTM_CUDA_CHECK(cudaStreamWaitEvent(stream_, st.copy_done, 0));
        kc::pack_window_cuda(box_, window_origin(), g.nx, g.ny, g.nz, u_.data(), st.buf.data(), bf16, stream_,
                             batch());
        RTM_CUDA_CHECK(cudaEventRecord(st.compute_done, stream_));
        RTM_CUDA_CHECK(cudaStreamWaitEvent(copy_, st.compute_done, 0));
        RTM_CUDA_CHECK(cudaMemcpyAsync(where.p, st.buf.data(), slot_bytes(), cudaMemcpyDeviceToHost, copy_));
        RTM_CUDA_CHECK(cudaEventRecord(st.copy_done, copy_));
        return slot;
    }

    void recall(std::size_t slot, bool previous) override {
        if (slot >= slots_.size())
            fail("recall", "slot " + std::to_string(slot) + " was never kept (" + std::to_string(slots_.size()) +
                               " kept)");
        const Grid& g = d_.window();
        const Slot& where = slots_[slot];
        T* dst = previous ? w_.data() : u_.data();
        if (!where.host) {
            kc::unpack_window_cuda(box_, window_origin(), g.nx, g.ny, g.nz, where.p, kept_bf16_, dst, stream_, batch());
            return;
        }
        int b = stage_[0].slot == long(slot) ? 0 : stage_[1].slot == long(slot) ? 1 : -1;
        if (b < 0) {
            b = stage_next_;
            stage_next_ ^= 1;
            upload(b, slot);
        }
        Stage& st = stage_[b];
        RTM_CUDA_CHECK(cudaStreamWaitEvent(stream_, st.copy_done, 0));
        kc::unpack_window_cuda(box_, window_origin(), g.nx, g.ny, g.nz, st.buf.data(), kept_bf16_, dst, stream_,
                               batch());
        RTM_CUDA_CHECK(cudaEventRecord(st.compute_done, stream_));
        st.slot = -1;
        // Prefetch the next slot down into the other buffer.
        if (slot > 0 && slots_[slot - 1].host) upload(b ^ 1, slot - 1);
    }

    // The slots' memory stays for the next shot's keep() calls (Propagator::clear_kept).
    void clear_kept() override {
        RTM_CUDA_CHECK(cudaStreamSynchronize(stream_));
        if (copy_) RTM_CUDA_CHECK(cudaStreamSynchronize(copy_));
        slots_.clear();
        for (auto& st : stage_) st.slot = -1;
    }
    void free_slots() {
        chunk_slots_.clear();
        chunks_.clear();
        pinned_chunks_.clear();
        slot_capacity_ = 0;
    }

    void correlate(const Propagator& source, double w, ImagingCondition condition) override {
        const auto* src = dynamic_cast<const CudaPropagator<T>*>(&source);
        if (!src) unsupported("correlate with a propagator of another backend or precision");
        require_same_batch(source);
        const Grid& g = d_.window();
        if (src->d_.window().size() != g.size())
            fail("correlate", "the source propagator's window differs from this one's");
        if (image_.empty()) {
            require_memory(2 * g.size() * batch() * sizeof(double), "image and illumination");
            image_.resize(g.size() * batch());
            illum_.resize(g.size() * batch());
            image_.zero(stream_);
            illum_.zero(stream_);
        }
        if (!handoff_) RTM_CUDA_CHECK(cudaEventCreateWithFlags(&handoff_, cudaEventDisableTiming));
        // After the source's queued work; the source's later work after this.
        if (src != this) {
            RTM_CUDA_CHECK(cudaEventRecord(handoff_, src->stream_));
            RTM_CUDA_CHECK(cudaStreamWaitEvent(stream_, handoff_, 0));
        }
        if (condition == ImagingCondition::CrossCorrelation) {
            kc::correlate_window_cuda(box_, window_origin(), g.nx, g.ny, g.nz, src->u_.data(), u_.data(), w,
                                      image_.data(), illum_.data(), stream_, batch());
        } else {
            if (v2_.empty()) {
                require_memory(g.size() * sizeof(double), "v^2 for the imaging condition");
                v2_.upload(d_.v2());
            }
            kc::WindowImaging wi;
            wi.origin = window_origin();
            wi.nx = g.nx;
            wi.ny = g.ny;
            wi.nz = g.nz;
            wi.h[0] = g.dx;
            wi.h[1] = g.dy;
            wi.h[2] = g.dz;
            wi.dt = d_.dt();
            wi.w = w;
            wi.born = condition == ImagingCondition::BornAdjoint;
            wi.z_before = z_before_;
            wi.z_after = z_after_;
            kc::image_window_cuda(box_, wi, src->u_.data(), src->w_.data(), u_.data(), w_.data(), v2_.data(),
                                  image_.data(), illum_.data(), stream_, batch());
        }
        if (src != this) {
            RTM_CUDA_CHECK(cudaEventRecord(handoff_, stream_));
            RTM_CUDA_CHECK(cudaStreamWaitEvent(src->stream_, handoff_, 0));
        }
    }

    std::vector<double> correlation(bool illumination) const override {
        const auto& f = illumination ? illum_ : image_;
        if (f.empty()) return std::vector<double>(d_.window().size() * batch(), 0.0);
        RTM_CUDA_CHECK(cudaStreamSynchronize(stream_));
        return f.download();
    }

    // Where the kept snapshots are (for the bench and tests): slots on the device, on the host.
    std::pair<std::size_t, std::size_t> kept_where() const {
        std::size_t dev = 0;
        for (const auto& s : slots_) dev += !s.host;
        return {dev, slots_.size() - dev};
    }

    std::string name() const override { return sizeof(T) == 4 ? "cuda (fp32)" : "cuda (fp64)"; }

private:
    // Injection of targets [t0, t1) into w at step n on stream s.
    void inject(int t0, int t1, int n, cudaStream_t s) {
        if (t1 > t0)
            kc::inject_cuda(w_.data(), t1 - t0, inj_target_.data() + t0, inj_offset_.data() + t0, inj_source_.data(),
                            inj_coef_.data(), src_tr_.data(), src_nt_, inv_vol_, n, s);
    }
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
        kernels::Injection out = inj;
        out.target.clear();
        out.offset.assign(1, 0);
        out.source.clear();
        out.coef.clear();
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
        inject(0, inj_edge_, n, es);
        slab_->send(w_.data() == base_[0] ? 0 : 1, es);
        if (slab_overlap_) RTM_CUDA_CHECK(cudaEventRecord(join_, edge_));
        kc::step_cuda(kernels::step_planes(args_, lo, hi), cfg_, stream_);
        inject(inj_edge_, int(inj_target_.size()), n, stream_);
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

    std::vector<double> window_of(const kc::DeviceBuffer<T>& f) const {
        RTM_CUDA_CHECK(cudaStreamSynchronize(stream_));
        const auto u = f.download();
        const Grid& g = d_.window();
        std::vector<double> out(g.size() * batch());  // member after member
        for (int m = 0; m < batch(); ++m)
            for (int iz = 0; iz < g.nz; ++iz)
                for (int iy = 0; iy < g.ny; ++iy)
                    for (int ix = 0; ix < g.nx; ++ix)
                        out[m * g.size() + g.index(ix, iy, iz)] =
                            double(u[m * box_.padded_size() + d_.index(ix, iy, iz)]);
        return out;
    }

    // Domain::injection at a batch member's point (its stencils are moved by boxes).
    double injection(long p) const { return d_.injection(p % long(box_.padded_size())); }

    // Computed-point coordinates of window node (0, 0, 0).
    kc::Index3 window_origin() const { return {box_.pml_lo[0], box_.pml_lo[1], box_.pml_lo[2]}; }

    // Band indices of every member (member m's moved by m padded boxes: one gather or
    // scatter moves the whole batch's band) go to the device on first use (8 B per band
    // node); pinned host buffers for the copies (one down, kRestoreRing up).
    void prepare_band() const {
        if (band_ready_) return;
        const auto& one = d_.band();
        std::vector<long> b;
        b.reserve(one.size() * batch());
        for (int m = 0; m < batch(); ++m)
            for (long p : one) b.push_back(p + long(m) * long(box_.padded_size()));
        require_memory(b.size() * (sizeof(long) + sizeof(float)), "edge band (indices and staging)");
        band_idx_.upload(b);
        band_buf_.resize(b.size());
        band_out_ = kc::PinnedBuffer(b.size() * sizeof(float));
        for (int r = 0; r < kRestoreRing; ++r) {
            band_in_[r] = kc::PinnedBuffer(b.size() * sizeof(float));
            if (!restore_done_[r]) RTM_CUDA_CHECK(cudaEventCreateWithFlags(&restore_done_[r], cudaEventDisableTiming));
        }
        band_ready_ = true;
    }

    // Snapshot storage: chunks of slots, each in device memory while RTM_KEEP_HEADROOM_GB
    // (default 2) GB stay free after it, else in pinned host memory.
    struct Slot {
        void* p = nullptr;
        bool host = false;
    };
    struct Stage {
        kc::DeviceBuffer<std::uint8_t> buf;
        cudaEvent_t compute_done = nullptr, copy_done = nullptr;
        long slot = -1;  // the host slot it holds (uploaded or being uploaded), -1: none
    };
    // A slot holds every member's window.
    std::size_t slot_bytes() const { return d_.window().size() * batch() * (kept_bf16_ ? 2 : sizeof(T)); }
    static double headroom_bytes() {
        const char* v = std::getenv("RTM_KEEP_HEADROOM_GB");
        return (v ? std::atof(v) : 2.0) * double(1 << 30);
    }
    void add_chunk() {
        const std::size_t sb = slot_bytes();
        std::size_t n = std::max<std::size_t>(1, std::min<std::size_t>(64, (std::size_t(256) << 20) / sb));
        std::size_t free_b = 0, total_b = 0;
        RTM_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
        const double room = double(free_b) - headroom_bytes();
        if (room < double(n * sb) && room >= double(sb)) n = std::size_t(room / sb);
        if (room >= double(n * sb)) {
            kc::DeviceBuffer<std::uint8_t> c(n * sb);
            for (std::size_t i = 0; i < n; ++i) chunk_slots_.push_back({c.data() + i * sb, false});
            chunks_.push_back(std::move(c));
        } else {
            ensure_copy_stream();
            if (!stage_[0].compute_done) {
                for (auto& st : stage_) {
                    RTM_CUDA_CHECK(cudaEventCreateWithFlags(&st.compute_done, cudaEventDisableTiming));
                    RTM_CUDA_CHECK(cudaEventCreateWithFlags(&st.copy_done, cudaEventDisableTiming));
                }
            }
            // Staging for this kind of snapshot (bf16 slots are half the size of fp32
            // ones; after clear_kept the kind may change). Nothing is in flight here:
            // clear_kept synchronised, or the slots so far were all of this size.
            for (auto& st : stage_)
                if (st.buf.size() < sb) {
                    RTM_CUDA_CHECK(cudaStreamSynchronize(copy_));
                    RTM_CUDA_CHECK(cudaStreamSynchronize(stream_));
                    st.buf.resize(sb);
                }
            kc::PinnedBuffer c(n * sb);
            for (std::size_t i = 0; i < n; ++i)
                chunk_slots_.push_back({static_cast<std::uint8_t*>(c.data()) + i * sb, true});
            pinned_chunks_.push_back(std::move(c));
        }
        slot_capacity_ += n;
    }
    const Slot& slot_at(std::size_t i) const { return chunk_slots_[i]; }
    void ensure_copy_stream() {
        if (!copy_) RTM_CUDA_CHECK(cudaStreamCreateWithFlags(&copy_, cudaStreamNonBlocking));
    }
    float* host_band(std::size_t slot) {
        return static_cast<float*>(hist_host_.data()) + slot * band_idx_.size();
    }
    // Host band slot -> its staging buffer on copy_, after the stream's last use of it.
    void upload_band(std::size_t slot) {
        BandStage& st = bstage_[slot % kBandStages];
        RTM_CUDA_CHECK(cudaStreamWaitEvent(copy_, st.compute_done, 0));
        RTM_CUDA_CHECK(cudaMemcpyAsync(st.buf.data(), host_band(slot), band_idx_.size() * sizeof(float),
                                       cudaMemcpyHostToDevice, copy_));
        RTM_CUDA_CHECK(cudaEventRecord(st.copy_done, copy_));
        st.slot = long(slot);
    }
    // Host slot -> staging buffer b on copy_, after the stream's last use of b.
    void upload(int b, std::size_t slot) {
        Stage& st = stage_[b];
        RTM_CUDA_CHECK(cudaStreamWaitEvent(copy_, st.compute_done, 0));
        RTM_CUDA_CHECK(cudaMemcpyAsync(st.buf.data(), slots_[slot].p, slot_bytes(), cudaMemcpyHostToDevice, copy_));
        RTM_CUDA_CHECK(cudaEventRecord(st.copy_done, copy_));
        st.slot = long(slot);
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

    // A clear error, with the sizes, when an allocation would not fit.
    void require_memory(std::size_t bytes, const char* what) const {
        std::size_t free_b = 0, total_b = 0;
        RTM_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
        if (bytes + (64u << 20) > free_b) {
            std::ostringstream os;
            os.precision(3);
            os << "the " << what << " of this domain (" << box_.nx << " x " << box_.ny << " x " << box_.nz
               << " points with absorbing layers, " << (sizeof(T) == 4 ? "fp32" : "fp64") << ") need "
               << bytes / double(1 << 30) << " GiB but the GPU has " << free_b / double(1 << 30) << " GiB free of "
               << total_b / double(1 << 30) << " GiB";
            fail("GPU memory", os.str(), "Use a smaller window or aperture, coarser grid, fp32, or propagation.device = cpu");
        }
    }

    const Domain& d_;
    kernels::Box box_;
    kernels::StepArgs<T> args_;
    kc::LaunchConfig cfg_;
    cudaStream_t stream_ = nullptr;
    kc::DeviceBuffer<T> u_, w_, vdt2_, damp_, a_[3], b_[3], psi_[3], zeta_[3];
    kc::DeviceBuffer<T> inj_, field_;  // add_field: coefficients and the field, window nodes
    std::vector<T> field_host_;
    mutable kc::DeviceBuffer<long> band_idx_;
    mutable kc::DeviceBuffer<float> band_buf_;
    mutable bool band_ready_ = false;
    static constexpr int kRestoreRing = 4;
    mutable kc::PinnedBuffer band_out_, band_in_[kRestoreRing];
    mutable cudaEvent_t restore_done_[kRestoreRing] = {};
    int restore_next_ = 0;
    // Band history: device memory or pinned host memory (one of them), slots reserved
    // and slots the allocation holds; staging buffers for the pinned-host case.
    struct BandStage {
        kc::DeviceBuffer<float> buf;
        cudaEvent_t compute_done = nullptr, copy_done = nullptr;
        long slot = -1;  // the slot whose band it holds (or is being copied up), -1: none
    };
    static constexpr int kBandStages = 4;
    kc::DeviceBuffer<float> hist_dev_;
    kc::PinnedBuffer hist_host_;
    std::size_t hist_slots_ = 0, hist_capacity_ = 0;
    BandStage bstage_[kBandStages];
    // Snapshots: slots in order, the chunks that hold them, two staging buffers for host slots.
    std::vector<Slot> slots_, chunk_slots_;
    std::vector<kc::DeviceBuffer<std::uint8_t>> chunks_;
    std::vector<kc::PinnedBuffer> pinned_chunks_;
    std::size_t slot_capacity_ = 0;
    bool kept_bf16_ = false;
    Stage stage_[2];
    int stage_next_ = 0;
    cudaStream_t copy_ = nullptr;
    cudaEvent_t handoff_ = nullptr;
    kc::DeviceBuffer<double> image_, illum_, v2_;  // v2_: v^2 on the window (imaging conditions)
    kc::DeviceBuffer<long> inj_target_, rec_idx_;
    kc::DeviceBuffer<int> inj_offset_, inj_source_, rec_off_;
    kc::DeviceBuffer<double> inj_coef_, src_tr_, rec_w_;
    kc::DeviceBuffer<T> rec_tr_;
    int src_nt_ = 0, nrec_ = 0, nt_ = 0;
    double inv_vol_ = 1;
    mutable kc::DeviceBuffer<int> nonfinite_;  // finite()'s flag
    kc::DeviceBuffer<T> states_dev_;  // checkpoints: device memory or pinned host memory
    kc::PinnedBuffer states_host_;
    std::size_t state_slots_ = 0, state_capacity_ = 0;
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
    int z_before_ = 0, z_after_ = 0;  // window_continues
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
    std::string why;
    int device = 0;  // the rank's own (choose_backend's): kept
    if (cudaGetDevice(&device) != cudaSuccess) cudaGetLastError();
    if (!cuda_device_available(&why, device)) fail("option propagation.device = gpu", why, "Set propagation.device to cpu or auto");
    if (domain.anisotropic()) return make_tti_cuda_propagator(domain, precision, batch);
    if (precision == Precision::Double) return std::make_unique<CudaPropagator<double>>(domain, batch);
    return std::make_unique<CudaPropagator<float>>(domain, batch);
}

}  // namespace rtm
