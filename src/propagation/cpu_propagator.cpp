// The CPU backend: padded arrays in host memory, kernels/cpu for the step.
#include <chrono>
#include <cstdint>
#include <utility>

#include "core/bfloat16.h"
#include "core/error.h"
#include "core/threads.h"

#include "imaging/field_ops.h"
#include "kernels/cpu/inject_cpu.h"
#include "kernels/cpu/step_cpu.h"
#include "propagation/injection.h"
#include "propagation/propagator.h"
#include "propagation/tti_propagator.h"

namespace rtm {

namespace {

template <class T>
class CpuPropagator final : public Propagator {
public:
    CpuPropagator(const Domain& d, int batch) : Propagator(batch), d_(d), box_(d.box()) {
        flush_denormals_to_zero();  // (core/threads.h) set by main already; here for other callers
        const std::size_t n = box_.padded_size() * std::size_t(batch);
        u_.assign(n, T(0));
        w_.assign(n, T(0));
        vdt2_.assign(d.vdt2().begin(), d.vdt2().end());
        d.inverse_spacings(args_.inv_h2, args_.inv_h);
        for (int ax = 0; ax < 3; ++ax) {
            if (d.cpml(ax)) {
                a_[ax].assign(d.profile(ax).a.begin(), d.profile(ax).a.end());
                b_[ax].assign(d.profile(ax).b.begin(), d.profile(ax).b.end());
                psi_[ax].assign(n, T(0));
                zeta_[ax].assign(n, T(0));
            }
        }
        if (!d.damping().empty()) {
            damp_.assign(d.damping().begin(), d.damping().end());
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
    }

    void set_sources(const std::vector<PointStencil>& where,
                     const std::vector<std::vector<double>>& traces) override {
        inj_ = injection_of(d_, where, traces);
    }
    void set_receivers(const std::vector<PointStencil>& where, int nt) override {
        rec_ = where;
        nt_ = nt;
        rec_traces_.assign(where.size() * std::size_t(nt), 0.0);
    }

    void reset() override {
        std::fill(u_.begin(), u_.end(), T(0));
        std::fill(w_.begin(), w_.end(), T(0));
        for (int ax = 0; ax < 3; ++ax) {
            std::fill(psi_[ax].begin(), psi_[ax].end(), T(0));
            std::fill(zeta_[ax].begin(), zeta_[ax].end(), T(0));
        }
        std::fill(rec_traces_.begin(), rec_traces_.end(), 0.0);
        image_.assign(image_.size(), 0.0);
        illum_.assign(illum_.size(), 0.0);
    }

    void step(int n) override {
        const auto start = std::chrono::steady_clock::now();
        for (std::size_t r = 0; r < rec_.size(); ++r) {
            double s = 0;
            for (std::size_t k = 0; k < rec_[r].index.size(); ++k)
                s += rec_[r].weight[k] * double(u_[rec_[r].index[k]]);
            if (n < nt_) rec_traces_[r * nt_ + n] = s;
        }
        // The free-surface mirror of u[n] before it is read: sources injected after the
        // last step, add_field, recall and restore_band change u[n] after the kernel's own mirror.
        if (box_.free_surface)
            for (int m = 0; m < batch(); ++m) kernels::free_surface_cpu(box_, u_.data() + m * box_.padded_size());
        args_.u = u_.data();
        args_.w = w_.data();
        kernels::step_cpu(args_);
        kernels::inject_cpu(inj_, n, w_.data());
        std::swap(u_, w_);
        busy_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    double busy_seconds() const override { return busy_; }

    std::vector<double> receiver_traces() const override { return rec_traces_; }

    std::vector<double> wavefield() const override { return window_of(u_); }
    std::vector<double> previous_wavefield() const override { return window_of(w_); }

    // Padded indices of the window's nodes, in window order (x fastest).
    const std::vector<long>& window_index() const {
        if (window_idx_.empty()) {
            const Grid& g = d_.window();
            window_idx_.reserve(g.size());
            for (int iz = 0; iz < g.nz; ++iz)
                for (int iy = 0; iy < g.ny; ++iy)
                    for (int ix = 0; ix < g.nx; ++ix) window_idx_.push_back(d_.index(ix, iy, iz));
        }
        return window_idx_;
    }

    // The window's nodes of every member, member after member.
    std::vector<double> window_of(const std::vector<T>& f) const {
        const auto& idx = window_index();
        std::vector<double> out(idx.size() * batch());
        for (int m = 0; m < batch(); ++m) {
            const T* fm = f.data() + member_offset(m);
            double* o = out.data() + m * idx.size();
            for (std::size_t i = 0; i < idx.size(); ++i) o[i] = double(fm[idx[i]]);
        }
        return out;
    }
    // Member m's arrays start this many values into u_, w_ and the C-PML memory.
    std::size_t member_offset(int m) const { return std::size_t(m) * box_.padded_size(); }

    void add_field(const std::vector<double>& f) override {
        const auto& idx = window_index();
        if (f.size() != idx.size() * batch())
            fail("add_field", "the field has " + std::to_string(f.size()) + " values but the window " +
                                  std::to_string(idx.size()) + " nodes" +
                                  (batch() > 1 ? " for each of " + std::to_string(batch()) + " members" : ""));
        for (int m = 0; m < batch(); ++m) {
            T* um = u_.data() + member_offset(m);
            const double* fm = f.data() + m * idx.size();
            for (std::size_t i = 0; i < idx.size(); ++i) {
                const double v = fm[i];
                if (v == 0) continue;
                um[idx[i]] += T(d_.injection(idx[i]) * v);
            }
        }
    }

    void reverse_time() override { std::swap(u_, w_); }

    std::size_t band_size() const override { return d_.band().size() * batch(); }
    void save_band(float* dst) const override {
        const auto& b = d_.band();
        for (int m = 0; m < batch(); ++m) {
            const T* um = u_.data() + member_offset(m);
            float* dm = dst + m * b.size();
            for (std::size_t i = 0; i < b.size(); ++i) dm[i] = float(um[b[i]]);
        }
    }
    void restore_band(const float* src) override {
        const auto& b = d_.band();
        for (int m = 0; m < batch(); ++m) {
            T* um = u_.data() + member_offset(m);
            const float* sm = src + m * b.size();
            for (std::size_t i = 0; i < b.size(); ++i) um[b[i]] = T(sm[i]);
        }
    }

    // A state: u, u_prev and the C-PML memory (every member's), one after another in a slot.
    std::vector<std::vector<T>*> state_arrays() {
        std::vector<std::vector<T>*> a{&u_, &w_};
        for (int ax = 0; ax < 3; ++ax)
            if (!psi_[ax].empty()) {
                a.push_back(&psi_[ax]);
                a.push_back(&zeta_[ax]);
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
        states_.resize(count * state_values());
        state_slots_ = count;
    }
    void store_state(std::size_t slot) override { move_state(slot, true); }
    void load_state(std::size_t slot) override { move_state(slot, false); }
    void move_state(std::size_t slot, bool store) {
        if (slot >= state_slots_)
            fail(store ? "store_state" : "load_state",
                 "slot " + std::to_string(slot) + " beyond the " + std::to_string(state_slots_) + " reserved");
        T* p = states_.data() + slot * state_values();
        for (auto* a : state_arrays()) {
            if (store) std::copy(a->begin(), a->end(), p);
            else std::copy(p, p + a->size(), a->begin());
            p += a->size();
        }
    }

    // A slot: the window of every member, member after member.
    std::size_t slot_values() const { return window_index().size() * batch(); }
    std::size_t keep(bool bf16) override {
        if ((bf16 && !kept_.empty()) || (!bf16 && !kept16_.empty()))
            fail("keep", "snapshots of one propagator must all be of one kind (all bfloat16 or none)");
        const auto& idx = window_index();
        for (int m = 0; m < batch(); ++m) {
            const T* um = u_.data() + member_offset(m);
            if (bf16)
                for (long p : idx) kept16_.push_back(to_bf16(float(um[p])));
            else
                for (long p : idx) kept_.push_back(um[p]);
        }
        return (bf16 ? kept16_.size() : kept_.size()) / slot_values() - 1;
    }
    void reserve_kept(std::size_t count, bool bf16) override {
        const std::size_t values = count * slot_values();
        if (bf16) kept16_.reserve(values);
        else kept_.reserve(values);
    }
    void recall(std::size_t slot, bool previous) override {
        const auto& idx = window_index();
        const std::size_t kept = (kept16_.empty() ? kept_.size() : kept16_.size()) / slot_values();
        if (slot >= kept)
            fail("recall", "slot " + std::to_string(slot) + " was never kept (" + std::to_string(kept) + " kept)");
        auto& f = previous ? w_ : u_;
        for (int m = 0; m < batch(); ++m) {
            T* fm = f.data() + member_offset(m);
            const std::size_t off = slot * slot_values() + m * idx.size();
            for (std::size_t i = 0; i < idx.size(); ++i)
                fm[idx[i]] = kept16_.empty() ? kept_[off + i] : T(from_bf16(kept16_[off + i]));
        }
    }
    void clear_kept() override {  // the memory stays for the next shot's (Propagator::clear_kept)
        kept_.clear();
        kept16_.clear();
    }

    // Member after member, each with exactly the arithmetic of a batch of one.
    void correlate(const Propagator& source, double w, ImagingCondition condition) override {
        const auto* src = dynamic_cast<const CpuPropagator<T>*>(&source);
        if (!src) unsupported("correlate with a propagator of another backend or precision");
        require_same_batch(source);
        const auto& idx = window_index();
        const std::size_t ws = idx.size();
        if (image_.empty()) {
            image_.assign(ws * batch(), 0.0);
            illum_.assign(ws * batch(), 0.0);
        }
        const Grid& g = d_.window();
        const auto& v2 = d_.v2();
        const double dt = d_.dt();
        for (int m = 0; m < batch(); ++m) {
            const T* us = src->u_.data() + member_offset(m);
            const T* u = u_.data() + member_offset(m);
            double* image = image_.data() + m * ws;
            double* illum = illum_.data() + m * ws;
            switch (condition) {
                case ImagingCondition::CrossCorrelation:
                    for (std::size_t i = 0; i < ws; ++i) image[i] += w * double(us[idx[i]]) * double(u[idx[i]]);
                    break;
                case ImagingCondition::InverseScattering: {
                    const auto s_now = src->member_window(src->u_, m), s_prev = src->member_window(src->w_, m);
                    const auto l = member_window(u_, m), lp = member_window(w_, m);
                    const auto gg = imaging::grad_dot(s_now, l, g);
                    for (std::size_t i = 0; i < ws; ++i) {
                        const double srate = (s_now[i] - s_prev[i]) / dt, lrate = (l[i] - lp[i]) / dt;
                        image[i] += w * (srate * lrate / v2[i] - gg[i]);
                    }
                    break;
                }
                case ImagingCondition::BornAdjoint: {
                    const auto lap = imaging::laplacian(src->member_window(src->u_, m), g);
                    for (std::size_t i = 0; i < ws; ++i) image[i] -= w * (v2[i] * lap[i] * double(u[idx[i]]));
                    break;
                }
            }
            for (std::size_t i = 0; i < ws; ++i) {
                const double s = us[idx[i]];
                illum[i] += w * s * s;
            }
        }
    }
    // Member m's window of f.
    std::vector<double> member_window(const std::vector<T>& f, int m) const {
        const auto& idx = window_index();
        const T* fm = f.data() + member_offset(m);
        std::vector<double> out(idx.size());
        for (std::size_t i = 0; i < idx.size(); ++i) out[i] = double(fm[idx[i]]);
        return out;
    }
    std::vector<double> correlation(bool illumination) const override {
        const auto& v = illumination ? illum_ : image_;
        return v.empty() ? std::vector<double>(d_.window().size() * batch(), 0.0) : v;
    }

    std::string name() const override {
        return sizeof(T) == 4 ? "cpu (fp32)" : "cpu (fp64)";
    }

    std::size_t plane_bytes() const override { return std::size_t(box_.sz()) * sizeof(T); }
    // Padded plane iz + R of each member starts at (iz + R) sz.
    void copy_planes_out(int iz0, int count, void* dst) const override {
        const std::size_t n = std::size_t(box_.sz()) * std::size_t(count), at = std::size_t(iz0 + stencil::R) * box_.sz();
        for (int m = 0; m < batch(); ++m) {
            const auto f = u_.begin() + std::ptrdiff_t(m * box_.padded_size() + at);
            std::copy(f, f + std::ptrdiff_t(n), static_cast<T*>(dst) + m * n);
        }
    }
    void copy_planes_in(int iz0, int count, const void* src) override {
        const std::size_t n = std::size_t(box_.sz()) * std::size_t(count), at = std::size_t(iz0 + stencil::R) * box_.sz();
        for (int m = 0; m < batch(); ++m) {
            const T* b = static_cast<const T*>(src) + m * n;
            std::copy(b, b + n, u_.begin() + std::ptrdiff_t(m * box_.padded_size() + at));
        }
    }

private:
    const Domain& d_;
    kernels::Box box_;
    kernels::StepArgs<T> args_;
    std::vector<T> u_, w_, vdt2_, damp_, a_[3], b_[3], psi_[3], zeta_[3];
    std::vector<PointStencil> rec_;
    kernels::Injection inj_;
    std::vector<double> rec_traces_;
    int nt_ = 0;
    std::vector<T> kept_;                 // snapshots, window after window
    std::vector<std::uint16_t> kept16_;   // or in bfloat16
    std::vector<double> image_, illum_;   // cross-correlation accumulators (window)
    mutable std::vector<long> window_idx_;
    std::vector<T> states_;  // checkpoints, state after state
    std::size_t state_slots_ = 0;
    double busy_ = 0;        // seconds in step()
};

}  // namespace

std::unique_ptr<Propagator> make_cpu_propagator(const Domain& domain, Precision precision, int batch) {
    if (domain.anisotropic()) return make_tti_cpu_propagator(domain, precision, batch);
    if (precision == Precision::Double) return std::make_unique<CpuPropagator<double>>(domain, batch);
    return std::make_unique<CpuPropagator<float>>(domain, batch);
}

}  // namespace rtm
