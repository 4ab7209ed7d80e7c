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
        const double h[3] = {d.window().dx, d.window().dy, d.window().dz};
        for (int ax = 0; ax < 3; ++ax) {
            const bool used = box_.ndim == 3 || ax != 1;
            args_.inv_h2[ax] = used ? T(1 / (h[ax] * h[ax])) : T(0);
            args_.inv_h[ax] = used ? T(1 / h[ax]) : T(0);
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
        const Grid& g = d_.window();
        std::vector<double> out(g.size() * batch());
        for (int m = 0; m < batch(); ++m)
            for (int iz = 0; iz < g.nz; ++iz)
                for (int iy = 0; iy < g.ny; ++iy)
                    for (int ix = 0; ix < g.nx; ++ix)
                        out[m * g.size() + g.index(ix, iy, iz)] =
                            double(f[m * box_.padded_size() + d_.index(ix, iy, iz)]);
        return out;
    }

    void add_field(const std::vector<double>& f) override {
        single_member("add_field");
        const Grid& g = d_.window();
        if (f.size() != g.size())
            fail("add_field", "the field has " + std::to_string(f.size()) + " values but the window " +
                                  std::to_string(g.size()) + " nodes");
        for (int iz = 0; iz < g.nz; ++iz)
            for (int iy = 0; iy < g.ny; ++iy)
                for (int ix = 0; ix < g.nx; ++ix) {
                    const double v = f[g.index(ix, iy, iz)];
                    if (v == 0) continue;
                    const long p = d_.index(ix, iy, iz);
                    u_[p] += T(d_.injection(p) * v);
                }
    }

    void reverse_time() override { std::swap(u_, w_); }

    std::size_t band_size() const override { return d_.band().size(); }
    void save_band(float* dst) const override {
        single_member("save_band");
        const auto& b = d_.band();
        for (std::size_t i = 0; i < b.size(); ++i) dst[i] = float(u_[b[i]]);
    }
    void restore_band(const float* src) override {
        single_member("restore_band");
        const auto& b = d_.band();
        for (std::size_t i = 0; i < b.size(); ++i) u_[b[i]] = T(src[i]);
    }

    // A state: u, u_prev and the C-PML memory, one after another in a slot.
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
        single_member("reserve_states");
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

    std::size_t keep(bool bf16) override {
        single_member("keep");
        if ((bf16 && !kept_.empty()) || (!bf16 && !kept16_.empty()))
            fail("keep", "snapshots of one propagator must all be of one kind (all bfloat16 or none)");
        const auto& idx = window_index();
        if (bf16) {
            for (long p : idx) kept16_.push_back(to_bf16(float(u_[p])));
            return kept16_.size() / idx.size() - 1;
        }
        for (long p : idx) kept_.push_back(u_[p]);
        return kept_.size() / idx.size() - 1;
    }
    void reserve_kept(std::size_t count, bool bf16) override {
        const std::size_t values = count * window_index().size();
        if (bf16) kept16_.reserve(values);
        else kept_.reserve(values);
    }
    void recall(std::size_t slot, bool previous) override {
        const auto& idx = window_index();
        const std::size_t kept = (kept16_.empty() ? kept_.size() : kept16_.size()) / idx.size();
        if (slot >= kept)
            fail("recall", "slot " + std::to_string(slot) + " was never kept (" + std::to_string(kept) + " kept)");
        const std::size_t off = slot * idx.size();
        auto& f = previous ? w_ : u_;
        for (std::size_t i = 0; i < idx.size(); ++i)
            f[idx[i]] = kept16_.empty() ? kept_[off + i] : T(from_bf16(kept16_[off + i]));
    }
    void clear_kept() override {
        std::vector<T>().swap(kept_);
        std::vector<std::uint16_t>().swap(kept16_);
    }

    void correlate(const Propagator& source, double w, ImagingCondition condition) override {
        const auto* src = dynamic_cast<const CpuPropagator<T>*>(&source);
        if (!src) unsupported("correlate with a propagator of another backend or precision");
        single_member("correlate");
        src->single_member("correlate");
        const auto& idx = window_index();
        if (image_.empty()) {
            image_.assign(idx.size(), 0.0);
            illum_.assign(idx.size(), 0.0);
        }
        const Grid& g = d_.window();
        const auto& v2 = d_.v2();
        const double dt = d_.dt();
        switch (condition) {
            case ImagingCondition::CrossCorrelation:
                for (std::size_t i = 0; i < idx.size(); ++i) image_[i] += w * double(src->u_[idx[i]]) * double(u_[idx[i]]);
                break;
            case ImagingCondition::InverseScattering: {
                const auto us = src->window_of(src->u_), usp = src->window_of(src->w_);
                const auto l = window_of(u_), lp = window_of(w_);
                const auto gg = imaging::grad_dot(us, l, g);
                for (std::size_t i = 0; i < idx.size(); ++i) {
                    const double srate = (us[i] - usp[i]) / dt, lrate = (l[i] - lp[i]) / dt;
                    image_[i] += w * (srate * lrate / v2[i] - gg[i]);
                }
                break;
            }
            case ImagingCondition::BornAdjoint: {
                const auto lap = imaging::laplacian(src->window_of(src->u_), g);
                for (std::size_t i = 0; i < idx.size(); ++i) image_[i] -= w * (v2[i] * lap[i] * double(u_[idx[i]]));
                break;
            }
        }
        for (std::size_t i = 0; i < idx.size(); ++i) {
            const double s = src->u_[idx[i]];
            illum_[i] += w * s * s;
        }
    }
    std::vector<double> correlation(bool illumination) const override {
        const auto& v = illumination ? illum_ : image_;
        return v.empty() ? std::vector<double>(d_.window().size(), 0.0) : v;
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
