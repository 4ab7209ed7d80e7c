#pragma once
// The wavefields of a CUDA propagator and what migration keeps of them, one mechanism
// for both CUDA propagators: the isotropic one (one field, u) and the VTI/TTI one (two,
// p and q). The GPU twin of host_wavefields.h, with the same layout: a wavefield is
// `fields` x `batch` padded boxes, field after field and member after member within a
// field, so that every storage operation moves all the boxes (p and q both) in the
// launches that moved a batch's members, and imaging reads the mean of the fields (u,
// or (p + q) / 2 = B^T u). Moved out of cuda_propagator.cu (its CudaPropagator used it
// all); its header describes the mechanisms:
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
//   source's next step must not overwrite what the correlation reads). With two fields
//   the means (p + q) / 2 go to scratch fields first (mean_pq_cuda), then the same kernels;
//   the born-adjoint image of two fields reads the source's diag(H, V) (p, q) instead
//   (anisotropic_operator_cuda, in double on the window, with the owner's `axis`).
// Born modelling of two fields (set_born_perturbation, add_born_source): dm v^2 and W
//   stay in device memory; each call forms the background's diag(H, V) on the window and
//   adds W g to the current fields, after the background's queued work (events both ways).
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
//   cur, prev and state_extra (the C-PML memory), in device memory when
//   RTM_KEEP_HEADROOM_GB stays free after them, else in pinned host memory; stored and
//   loaded by copies on the stream (device to device, or over the bus: then the steps
//   wait for them, a checkpoint being rare next to the steps that recompute from it).
// Every staging buffer is guarded by two events (last compute use on stream, last
// copy on copy_) that the other stream waits on before touching it.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/default_init.h"
#include "core/error.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/field_ops_cuda.h"
#include "kernels/cuda/tti_cuda.h"
#include "kernels/cuda/tti_window_cuda.h"
#include "propagation/domain.h"
#include "propagation/propagator.h"

namespace rtm {

namespace kc = kernels::cuda;

// A clear error, with the sizes, when `bytes` more of device memory would not fit
// (domain: box's points; T: the propagation's precision).
template <class T>
void require_device_memory(const kernels::Box& box, std::size_t bytes, const char* what) {
    std::size_t free_b = 0, total_b = 0;
    RTM_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    if (bytes + (64u << 20) > free_b) {
        std::ostringstream os;
        os.precision(3);
        os << "the " << what << " of this domain (" << box.nx << " x " << box.ny << " x " << box.nz
           << " points with absorbing layers, " << (sizeof(T) == 4 ? "fp32" : "fp64") << ") need "
           << bytes / double(1 << 30) << " GiB but the GPU has " << free_b / double(1 << 30) << " GiB free of "
           << total_b / double(1 << 30) << " GiB";
        fail("GPU memory", os.str(),
             std::string("Run the shot over several GPUs (parallel.ranks-per-shot under mpirun: each holds its z-slab), "
                         "or use a smaller window or aperture, a coarser grid") +
                 (sizeof(T) == 4 ? "" : ", fp32") + ", or propagation.device = cpu");
    }
}

template <class T>
class DeviceWavefields {
public:
    using Buffer = kc::DeviceBuffer<T>;

    // Makes the streams; allocate() makes the fields (after the owner's memory check).
    DeviceWavefields(const Domain& d, int fields, int batch)
        : d_(d), box_(d.box()), fields_(fields), batch_(batch) {
        RTM_CUDA_CHECK(cudaGetDevice(&device_));
        RTM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    }
    DeviceWavefields(const DeviceWavefields&) = delete;
    DeviceWavefields& operator=(const DeviceWavefields&) = delete;
    ~DeviceWavefields() {
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
        if (copy_) cudaStreamDestroy(copy_);
        if (stream_) cudaStreamDestroy(stream_);
    }

    cudaStream_t stream() const { return stream_; }
    void allocate() {
        const std::size_t n = box_.padded_size() * boxes();
        cur.resize(n);
        prev.resize(n);
        cur.zero(stream_);
        prev.zero(stream_);
    }

    Buffer cur, prev;  // u[n] and u[n-1]
    // A z-slab's ghost planes that hold the field beyond the window (the owner's
    // Propagator::window_continues), read by correlate's derivatives; 0: zero there.
    int z_before = 0, z_after = 0;
    // More arrays a checkpoint state holds (the C-PML memory), registered by the owner.
    std::vector<Buffer*> state_extra;
    // Two fields, TTI: the symmetry axis (the owner's padded arrays), which the window
    // operator of the Born source and the born-adjoint image reads; null: VTI.
    const T* axis[3] = {nullptr, nullptr, nullptr};

    // Field f of member 0 (the others follow at a stride of one padded box).
    T* field(Buffer& a, int f) { return a.data() + std::size_t(f) * batch_ * box_.padded_size(); }
    const T* field(const Buffer& a, int f) const { return a.data() + std::size_t(f) * batch_ * box_.padded_size(); }

    void reset() {
        cur.zero(stream_);
        prev.zero(stream_);
        for (auto* a : state_extra) a->zero(stream_);
        image_.zero(stream_);
        illum_.zero(stream_);
    }
    void swap() { std::swap(cur, prev); }

    // The imaged field (the mean of the fields) of a on the window's nodes, member after member.
    std::vector<double> window_of(const Buffer& f) const {
        RTM_CUDA_CHECK(cudaStreamSynchronize(stream_));
        const auto u = f.download();
        const Grid& g = d_.window();
        const std::size_t box = box_.padded_size(), other = std::size_t(batch_) * box;
        std::vector<double> out(g.size() * batch_);  // member after member
        for (int m = 0; m < batch_; ++m)
            for (int iz = 0; iz < g.nz; ++iz)
                for (int iy = 0; iy < g.ny; ++iy)
                    for (int ix = 0; ix < g.nx; ++ix) {
                        const std::size_t i = m * box + d_.index(ix, iy, iz);
                        out[m * g.size() + g.index(ix, iy, iz)] =
                            fields_ == 1 ? double(u[i]) : 0.5 * (double(u[i]) + double(u[i + other]));
                    }
        return out;
    }

    // One pass over every box's computed points on the stream (after the queued
    // steps); 4 bytes come back, no wavefield.
    bool finite() const {
        if (nonfinite_.empty()) nonfinite_.resize(1);
        nonfinite_.zero(stream_);
        kc::nonfinite_cuda(box_, cur.data(), int(boxes()), nonfinite_.data(), stream_);
        int flag = 0;
        RTM_CUDA_CHECK(cudaMemcpyAsync(&flag, nonfinite_.data(), sizeof flag, cudaMemcpyDeviceToHost, stream_));
        RTM_CUDA_CHECK(cudaStreamSynchronize(stream_));
        return flag == 0;
    }

    // cur += coef(field, p) * f on the window's nodes (f there, x fastest, member after
    // member), on the stream after the step just queued: f goes up as T (converted here),
    // the product is taken in double as the CPU does; coef (the weight of a unit source
    // density on that field at padded point p) is taken once.
    template <class Coef>
    void add_field(const std::vector<double>& f, const Coef& coef) {
        const Grid& g = d_.window();
        if (f.size() != g.size() * batch_)
            fail("add_field", "the field has " + std::to_string(f.size()) + " values but the window " +
                                  std::to_string(g.size()) + " nodes" +
                                  (batch_ > 1 ? " for each of " + std::to_string(batch_) + " members" : ""));
        if (inj_.empty()) window_table(inj_, fields_, coef);  // coefficient per field and window node, once
        if (field_.size() != f.size()) field_.resize(f.size());
        field_host_.resize(f.size());
        for (std::size_t i = 0; i < f.size(); ++i) field_host_[i] = T(f[i]);
        // Pageable source: the copy is staged before it returns, so field_host_ may change after.
        RTM_CUDA_CHECK(cudaMemcpyAsync(field_.data(), field_host_.data(), f.size() * sizeof(T),
                                       cudaMemcpyHostToDevice, stream_));
        for (int k = 0; k < fields_; ++k)
            kc::add_window_cuda(box_, window_origin(), g.nx, g.ny, g.nz, inj_.data() + k * g.size(), field_.data(),
                                field(cur, k), stream_, batch_);
    }

    // --- The edge band (see the header) ---
    std::size_t band_size() const { return d_.band().size() * boxes(); }

    // The band is saved every step of a run: a gather into a device buffer, one
    // asynchronous copy into pinned host memory, and a host copy into the caller's
    // memory once the stream has got there. The caller owns dst and may read it on
    // return, so every save waits for the step before it (the GPU idles while the host
    // copies and queues the next step); migration uses store_band / load_band
    // instead, which keep the history on the propagator and never wait.
    void save_band(float* dst) const {
        prepare_band();
        const std::size_t nb = band_idx_.size();
        if (!nb) return;
        kc::gather_cuda(cur.data(), band_idx_.data(), nb, band_buf_.data(), stream_);
        float* pinned = static_cast<float*>(band_out_.data());
        RTM_CUDA_CHECK(cudaMemcpyAsync(pinned, band_buf_.data(), nb * sizeof(float), cudaMemcpyDeviceToHost, stream_));
        RTM_CUDA_CHECK(cudaStreamSynchronize(stream_));
        std::memcpy(dst, pinned, nb * sizeof(float));
    }
    // The caller's band goes into one of kRestoreRing pinned buffers (reused only once
    // its last upload has finished), then up and scattered on the stream: no wait for
    // the queued steps.
    void restore_band(const float* src) {
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
        kc::scatter_cuda(band_buf_.data(), band_idx_.data(), nb, cur.data(), stream_);
    }

    void reserve_bands(std::size_t count) {
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
            require_device_memory<T>(box_, kBandStages * nb * sizeof(float), "band history staging buffers");
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

    void store_band(std::size_t slot) {
        if (slot >= hist_slots_) fail("store_band", "slot " + std::to_string(slot) + " beyond the " + std::to_string(hist_slots_) + " reserved");
        const std::size_t nb = band_idx_.size();
        if (!nb) return;
        if (!hist_dev_.empty()) {
            kc::gather_cuda(cur.data(), band_idx_.data(), nb, hist_dev_.data() + slot * nb, stream_);
            return;
        }
        BandStage& st = bstage_[slot % kBandStages];
        RTM_CUDA_CHECK(cudaStreamWaitEvent(stream_, st.copy_done, 0));
        kc::gather_cuda(cur.data(), band_idx_.data(), nb, st.buf.data(), stream_);
        RTM_CUDA_CHECK(cudaEventRecord(st.compute_done, stream_));
        RTM_CUDA_CHECK(cudaStreamWaitEvent(copy_, st.compute_done, 0));
        RTM_CUDA_CHECK(cudaMemcpyAsync(host_band(slot), st.buf.data(), nb * sizeof(float), cudaMemcpyDeviceToHost,
                                       copy_));
        RTM_CUDA_CHECK(cudaEventRecord(st.copy_done, copy_));
        st.slot = long(slot);  // the staging buffer holds this slot's band too
    }

    void load_band(std::size_t slot) {
        if (slot >= hist_slots_) fail("load_band", "slot " + std::to_string(slot) + " beyond the " + std::to_string(hist_slots_) + " reserved");
        const std::size_t nb = band_idx_.size();
        if (!nb) return;
        if (!hist_dev_.empty()) {
            kc::scatter_cuda(hist_dev_.data() + slot * nb, band_idx_.data(), nb, cur.data(), stream_);
            return;
        }
        BandStage& st = bstage_[slot % kBandStages];
        if (st.slot != long(slot)) upload_band(slot);
        RTM_CUDA_CHECK(cudaStreamWaitEvent(stream_, st.copy_done, 0));
        kc::scatter_cuda(st.buf.data(), band_idx_.data(), nb, cur.data(), stream_);
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

    // --- States (see the header) ---
    // A state's arrays and their lengths: cur and prev, then the C-PML memory (kept near
    // the layers only, kernels::CpmlMemory: shorter arrays).
    std::vector<std::pair<T*, std::size_t>> state_arrays() {
        std::vector<std::pair<T*, std::size_t>> a{{cur.data(), cur.size()}, {prev.data(), prev.size()}};
        for (auto* x : state_extra) a.push_back({x->data(), x->size()});
        return a;
    }
    std::size_t state_values() const {
        std::size_t n = cur.size() + prev.size();
        for (auto* x : state_extra) n += x->size();
        return n;
    }
    std::size_t state_bytes() const { return state_values() * sizeof(T); }
    void reserve_states(std::size_t count) {
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
    void move_state(std::size_t slot, bool store) {
        if (slot >= state_slots_)
            fail(store ? "store_state" : "load_state",
                 "slot " + std::to_string(slot) + " beyond the " + std::to_string(state_slots_) + " reserved");
        const bool dev = !states_dev_.empty();
        T* p = (dev ? states_dev_.data() : static_cast<T*>(states_host_.data())) + slot * state_values();
        for (auto [a, n] : state_arrays()) {
            RTM_CUDA_CHECK(cudaMemcpyAsync(store ? p : a, store ? a : p, n * sizeof(T),
                                           dev ? cudaMemcpyDeviceToDevice
                                               : store ? cudaMemcpyDeviceToHost : cudaMemcpyHostToDevice,
                                           stream_));
            p += n;
        }
    }
    // Where the states are (for the tests): 0 none, 1 device memory, 2 pinned host memory.
    int states_where() const { return !states_dev_.empty() ? 1 : states_host_.bytes() ? 2 : 0; }

    // --- Snapshots and cross-correlation (see the header) ---
    void reserve_kept(std::size_t, bool) {}  // (slots come in chunks as keep() needs them)
    void reserve_imaging(ImagingCondition condition) {
        require_image();
        if (fields_ == 2 && condition == ImagingCondition::BornAdjoint) require_window_operator();
        if (condition != ImagingCondition::CrossCorrelation) require_v2();
    }
    std::size_t keep(bool bf16) {
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
        const int nb = int(boxes());
        if (!where.host) {
            kc::pack_window_cuda(box_, window_origin(), g.nx, g.ny, g.nz, cur.data(), where.p, bf16, stream_, nb);
            return slot;
        }
        const int b = stage_next_;
        stage_next_ ^= 1;
        Stage& st = stage_[b];
        st.slot = -1;  // holds no slot worth reusing after this
        RTM_CUDA_CHECK(cudaStreamWaitEvent(stream_, st.copy_done, 0));
        kc::pack_window_cuda(box_, window_origin(), g.nx, g.ny, g.nz, cur.data(), st.buf.data(), bf16, stream_, nb);
        RTM_CUDA_CHECK(cudaEventRecord(st.compute_done, stream_));
        RTM_CUDA_CHECK(cudaStreamWaitEvent(copy_, st.compute_done, 0));
        RTM_CUDA_CHECK(cudaMemcpyAsync(where.p, st.buf.data(), slot_bytes(), cudaMemcpyDeviceToHost, copy_));
        RTM_CUDA_CHECK(cudaEventRecord(st.copy_done, copy_));
        return slot;
    }

    void recall(std::size_t slot, bool previous) {
        if (slot >= slots_.size())
            fail("recall", "slot " + std::to_string(slot) + " was never kept (" + std::to_string(slots_.size()) +
                               " kept)");
        const Grid& g = d_.window();
        const Slot& where = slots_[slot];
        T* dst = previous ? prev.data() : cur.data();
        const int nb = int(boxes());
        if (!where.host) {
            kc::unpack_window_cuda(box_, window_origin(), g.nx, g.ny, g.nz, where.p, kept_bf16_, dst, stream_, nb);
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
        kc::unpack_window_cuda(box_, window_origin(), g.nx, g.ny, g.nz, st.buf.data(), kept_bf16_, dst, stream_, nb);
        RTM_CUDA_CHECK(cudaEventRecord(st.compute_done, stream_));
        st.slot = -1;
        // Prefetch the next slot down into the other buffer.
        if (slot > 0 && slots_[slot - 1].host) upload(b ^ 1, slot - 1);
    }

    // The slots' memory stays for the next keep() calls (a propagator kept for the next shot).
    void clear_kept() {
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

    void correlate(const DeviceWavefields& src, double w, ImagingCondition condition) {
        const Grid& g = d_.window();
        if (src.d_.window().size() != g.size())
            fail("correlate", "the source propagator's window differs from this one's");
        require_image();
        after(src, [&] { image(src, w, condition); });
    }

    const Domain& domain() const { return d_; }

    // Born modelling (StoredPropagator::set_born_perturbation, add_born_source): dm v^2
    // on the window, every member, kept on the device.
    void set_born_perturbation(const std::vector<double>& dm_v2) {
        RTM_CUDA_CHECK(cudaSetDevice(device_));
        require_device_memory<T>(box_, dm_v2.size() * sizeof(double), "Born perturbation");
        born_dm_v2_.upload(dm_v2, stream_);
    }
    // One field (isotropic): cur += coef(0, p) g on the window, g = -dm_v2 Lap u0 of the
    // background's current field, formed on the device (born_source_window_cuda: the
    // host path of Propagator::add_born_source downloaded u0 and uploaded g every step).
    // coef(field, p): add_field's weight of a unit source density, taken once.
    template <class Coef>
    void add_scalar_born_source(const DeviceWavefields& background, const Coef& coef) {
        const Grid& g = d_.window();
        if (inj_.empty()) window_table(inj_, fields_, coef);
        after(background, [&] {
            const double h[3] = {g.dx, g.dy, g.dz};
            kc::born_source_window_cuda(box_, window_origin(), g.nx, g.ny, g.nz, h, born_dm_v2_.data(),
                                        background.field(background.cur, 0), inj_.data(), field(cur, 0), stream_,
                                        batch_);
        });
    }
    // cur += W g on the window, g = -dm_v2 diag(H, V) (p0, q0) of the background's current
    // fields; coef(k, j, p): W_kj / (1 + k) at padded point p, taken once (in double).
    template <class Coef>
    void add_born_source(const DeviceWavefields& background, const Coef& coef) {
        const Grid& g = d_.window();
        if (born_w_.empty()) {
            require_device_memory<T>(box_, 3 * g.size() * sizeof(double), "Born source coefficients W");
            const int kj[3][2] = {{0, 0}, {0, 1}, {1, 1}};  // W_pp, W_pq, W_qq
            window_table(born_w_, 3, [&](int e, long p) { return coef(kj[e][0], kj[e][1], p); });
        }
        after(background, [&] {
            const std::size_t ps = box_.padded_size();
            for (int m = 0; m < batch_; ++m) {
                const double* op = window_operator(background, m);
                kc::born_source_tti_cuda(box_, window_origin(), g.nx, g.ny, g.nz, born_dm_v2_.data() + m * g.size(), op,
                                         op + g.size(), born_w_.data(), field(cur, 0) + m * ps, field(cur, 1) + m * ps,
                                         stream_);
            }
        });
    }

private:
    // Queues fn's work on this stream after `src`'s queued work, and src's later work after
    // fn's (src's next step must not overwrite what fn reads).
    template <class Fn>
    void after(const DeviceWavefields& src, const Fn& fn) {
        if (!handoff_) RTM_CUDA_CHECK(cudaEventCreateWithFlags(&handoff_, cudaEventDisableTiming));
        if (&src != this) {
            RTM_CUDA_CHECK(cudaEventRecord(handoff_, src.stream_));
            RTM_CUDA_CHECK(cudaStreamWaitEvent(stream_, handoff_, 0));
        }
        fn();
        if (&src != this) {
            RTM_CUDA_CHECK(cudaEventRecord(handoff_, stream_));
            RTM_CUDA_CHECK(cudaStreamWaitEvent(src.stream_, handoff_, 0));
        }
    }

    // diag(H, V) (p, q) of member m of `of`'s current fields on the window, into scratch
    // (hp, then vq; queued on this stream): where it is returned.
    const double* window_operator(const DeviceWavefields& of, int m) {
        const Grid& g = d_.window();
        const std::size_t ws = g.size(), ps = box_.padded_size();
        require_window_operator();
        const double h[3] = {g.dx, g.dy, g.dz};
        kc::anisotropic_operator_cuda(box_, window_origin(), g.nx, g.ny, g.nz, h, of.field(of.cur, 0) + m * ps,
                                      of.field(of.cur, 1) + m * ps, axis, op_.data(), op_.data() + ws,
                                      op_.data() + 2 * ws, stream_);
        return op_.data();
    }

    // correlate's work, on this stream (after the source's).
    void image(const DeviceWavefields& src, double w, ImagingCondition condition) {
        const Grid& g = d_.window();
        if (fields_ == 2 && condition == ImagingCondition::BornAdjoint) {
            // Not the mean: the transpose of the Born source W g reads H p_s and V q_s
            // (host_wavefields.h). Over the window only: a z-slab's ghost planes would
            // need 2 R planes (TTI), which SlabPropagator refuses before it gets here.
            if (z_before || z_after)
                fail("correlate", "the VTI/TTI born-adjoint image reads no ghost planes", "Internal error");
            require_v2();
            const std::size_t ws = g.size(), ps = box_.padded_size();
            for (int m = 0; m < batch_; ++m) {
                const double* op = window_operator(src, m);
                kc::born_adjoint_tti_cuda(box_, window_origin(), g.nx, g.ny, g.nz, w, v2_.data(), op, op + ws,
                                          field(cur, 0) + m * ps, field(cur, 1) + m * ps,
                                          src.field(src.cur, 0) + m * ps, src.field(src.cur, 1) + m * ps,
                                          image_.data() + m * ws, illum_.data() + m * ws, stream_);
            }
            return;
        }
        const bool cc = condition == ImagingCondition::CrossCorrelation;
        // The imaged fields: the wavefields themselves, or their means in scratch fields.
        const T *us = src.cur.data(), *usp = src.prev.data(), *u = cur.data(), *up = prev.data();
        if (fields_ == 2) {
            const std::size_t n = std::size_t(batch_) * box_.padded_size();
            if (mean_.empty()) {
                require_device_memory<T>(box_, (cc ? 2 : 4) * n * sizeof(T), "scratch fields (p + q) / 2 for imaging");
                mean_.resize((cc ? 2 : 4) * n);
            } else if (!cc && mean_.size() < 4 * n) {
                mean_.resize(4 * n);
            }
            T* m = mean_.data();
            const T* from[4] = {us, u, usp, up};
            const T** to[4] = {&us, &u, &usp, &up};
            for (int k = 0; k < (cc ? 2 : 4); ++k) {
                kc::mean_pq_cuda(from[k], from[k] + n, m + k * n, n, stream_);
                *to[k] = m + k * n;
            }
        }
        if (cc) {
            kc::correlate_window_cuda(box_, window_origin(), g.nx, g.ny, g.nz, us, u, w, image_.data(), illum_.data(),
                                      stream_, batch_);
        } else {
            require_v2();
            kc::WindowImaging wi;
            wi.origin = window_origin();
            wi.nx = g.nx;
            wi.ny = g.ny;
            wi.nz = g.nz;
            wi.h[0] = g.dx;
            wi.h[1] = g.dy;
            wi.h[2] = g.dz;
            wi.dt = d_.dt();
            wi.z_before = z_before;
            wi.z_after = z_after;
            wi.w = w;
            wi.born = condition == ImagingCondition::BornAdjoint;
            kc::image_window_cuda(box_, wi, us, usp, u, up, v2_.data(), image_.data(), illum_.data(), stream_, batch_);
        }
    }
    // buf = value(e, p) for entries e = 0 .. entries - 1 (entry after entry) at the window's
    // nodes (x fastest), p their padded points: a table the window kernels read.
    template <class U, class Value>
    void window_table(kc::DeviceBuffer<U>& buf, int entries, const Value& value) {
        const Grid& g = d_.window();
        std::vector<U> c(g.size() * std::size_t(entries));
        for (int e = 0; e < entries; ++e)
            for (int iz = 0; iz < g.nz; ++iz)
                for (int iy = 0; iy < g.ny; ++iy)
                    for (int ix = 0; ix < g.nx; ++ix)
                        c[e * g.size() + g.index(ix, iy, iz)] = U(value(e, d_.index(ix, iy, iz)));
        buf.upload(c, stream_);
    }
    void require_v2() {
        if (v2_.empty()) {
            require_device_memory<T>(box_, d_.window().size() * sizeof(double), "v^2 for the imaging condition");
            v2_.upload(d_.v2(), stream_);
        }
    }
    void require_image() {
        if (!image_.empty()) return;
        const std::size_t n = d_.window().size() * std::size_t(batch_);
        require_device_memory<T>(box_, 2 * n * sizeof(double), "image and illumination");
        image_.resize(n);
        illum_.resize(n);
        image_.zero(stream_);
        illum_.zero(stream_);
    }
    // The window operator's scratch: hp, vq, and for TTI the six fluxes (window nodes, double).
    void require_window_operator() {
        const std::size_t need = (axis[0] ? 8 : 2) * d_.window().size();
        if (op_.size() >= need) return;
        require_device_memory<T>(box_, need * sizeof(double), "window operator diag(H, V) and its fluxes");
        op_.resize(need);
    }

public:

    std::vector<double> correlation(bool illumination) const {
        const auto& f = illumination ? illum_ : image_;
        if (f.empty()) return std::vector<double>(d_.window().size() * batch_, 0.0);
        RTM_CUDA_CHECK(cudaStreamSynchronize(stream_));
        return f.download();
    }
    // Member m's (window nodes): the stream's work done first.
    UninitVector<double> member_correlation(bool illumination, int m) const {
        const auto& f = illumination ? illum_ : image_;
        const std::size_t n = d_.window().size();
        if (f.empty()) return filled(n, 0.0);
        UninitVector<double> out(n);
        kc::download_staged(f.data() + m * n, n * sizeof(double), out.data(), stream_);
        return out;
    }

    // Where the kept snapshots are (for the bench and tests): slots on the device, on the host.
    std::pair<std::size_t, std::size_t> kept_where() const {
        std::size_t dev = 0;
        for (const auto& s : slots_) dev += !s.host;
        return {dev, slots_.size() - dev};
    }

    // Computed-point coordinates of window node (0, 0, 0).
    kc::Index3 window_origin() const { return {box_.pml_lo[0], box_.pml_lo[1], box_.pml_lo[2]}; }

private:
    std::size_t boxes() const { return std::size_t(fields_) * batch_; }

    // Band indices of every box (box k's moved by k padded boxes: one gather or scatter
    // moves the whole batch's band, both fields) go to the device on first use (8 B per
    // band node); pinned host buffers for the copies (one down, kRestoreRing up).
    void prepare_band() const {
        if (band_ready_) return;
        const auto& one = d_.band();
        std::vector<long> b;
        b.reserve(one.size() * boxes());
        for (std::size_t k = 0; k < boxes(); ++k)
            for (long p : one) b.push_back(p + long(k) * long(box_.padded_size()));
        require_device_memory<T>(box_, b.size() * (sizeof(long) + sizeof(float)), "edge band (indices and staging)");
        band_idx_.upload(b, stream_);
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
    // A slot holds every box's window.
    std::size_t slot_bytes() const { return d_.window().size() * boxes() * (kept_bf16_ ? 2 : sizeof(T)); }
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

    const Domain& d_;
    int device_ = 0;  // the GPU current when these were made (the rank's own)
    kernels::Box box_;
    int fields_, batch_;
    cudaStream_t stream_ = nullptr;
    Buffer inj_, field_;  // add_field: coefficients (field after field) and the field, window nodes
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
    // Two fields' Born operators: dm v^2 (every member), W (W_pp, W_pq, W_qq), and the
    // window operator's scratch (hp, vq, then six fluxes for TTI), window nodes.
    kc::DeviceBuffer<double> born_dm_v2_, born_w_, op_;
    Buffer mean_;                             // (p + q) / 2 of the imaged fields (two fields)
    mutable kc::DeviceBuffer<int> nonfinite_;      // finite()'s flag
    Buffer states_dev_;  // checkpoints: device memory or pinned host memory
    kc::PinnedBuffer states_host_;
    std::size_t state_slots_ = 0, state_capacity_ = 0;
};

}  // namespace rtm
