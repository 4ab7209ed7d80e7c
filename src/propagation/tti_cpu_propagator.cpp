// The CPU backend for anisotropic domains (pseudo-acoustic VTI/TTI, physics/anisotropy.h):
// two wavefields p and q in host memory, kernels/cpu/tti_cpu for the step.
//
// Sources inject W B s (B = (1/2, 1/2)): s enters where L u does, as in the isotropic
// update (v dt)^2 (Lap u + s); receivers record B^T u = (p + q) / 2. With epsilon = delta
// = 0, W B = (v dt)^2 (1, 1) and p = q = the isotropic wavefield. This pairing is what
// keeps the adjoint exact: the adjoint state times W obeys this same step run backwards,
// injecting the data through W B and imaging with B^T (docs/anisotropy.md).
#include <chrono>
#include <functional>
#include <algorithm>
#include <tuple>
#include <utility>

#include "core/error.h"
#include "imaging/field_ops.h"
#include "kernels/cpu/inject_cpu.h"
#include "kernels/cpu/step_cpu.h"
#include "kernels/cpu/tti_cpu.h"
#include "propagation/host_wavefields.h"
#include "propagation/stored_propagator.h"
#include "propagation/propagator.h"
#include "propagation/tti_propagator.h"

namespace rtm {

namespace {

template <class T>
class TtiCpuPropagator final : public StoredPropagator<HostWavefields<T>> {
    using Base = StoredPropagator<HostWavefields<T>>;
    using Base::f_;  // (members of a dependent base are named)
    using Base::require_same_batch;
    using Base::unsupported;

public:
    using Base::batch;
    TtiCpuPropagator(const Domain& d, int batch) : StoredPropagator<HostWavefields<T>>(d, 2, batch), d_(d), box_(d.box()) {
        if (!d.anisotropic()) fail("TTI propagator", "the domain is isotropic", "Use make_cpu_propagator");
        const TtiCoefficients& c = d.tti();
        cpp_ = converted<T>(c.cpp);
        cpq_ = converted<T>(c.cpq);
        cqq_ = converted<T>(d.vdt2());
        damp_ = converted<T>(d.damping());
        args_.box = box_;
        d.inverse_spacings(args_.inv_h2, args_.inv_h);
        args_.cpp = cpp_.data();
        args_.cpq = cpq_.data();
        args_.cqq = cqq_.data();
        args_.damp = damp_.empty() ? nullptr : damp_.data();
        if (c.tilted) {
            for (int ax = 0; ax < 3; ++ax) {
                axis_[ax] = converted<T>(c.axis[ax]);
                args_.axis[ax] = axis_[ax].data();
            }
            for (int k = 0; k < 6; ++k) {
                flux_[k].assign(box_.padded_size(), T(0));  // the halo stays zero
                args_.flux[k] = flux_[k].data();
            }
        }
        args_.batch = batch;
    }

    void set_sources(const std::vector<PointStencil>& where, const std::vector<std::vector<double>>& traces) override {
        std::tie(inj_p_, inj_q_) = tti_injection(d_, where, traces);
    }
    void set_receivers(const std::vector<PointStencil>& where, int nt) override {
        rec_ = where;
        nt_ = nt;
        rec_traces_.assign(where.size() * std::size_t(nt), 0.0);
    }

    void reset() override {
        f_.reset();  // p, q at both time levels, the image
        std::fill(rec_traces_.begin(), rec_traces_.end(), 0.0);
    }

    void step(int n) override {
        const auto start = std::chrono::steady_clock::now();
        T *p = f_.field(f_.cur, 0), *q = f_.field(f_.cur, 1);
        for (std::size_t r = 0; r < rec_.size(); ++r) {
            double s = 0;
            for (std::size_t k = 0; k < rec_[r].index.size(); ++k) {
                const long i = rec_[r].index[k];
                s += rec_[r].weight[k] * 0.5 * (double(p[i]) + double(q[i]));
            }
            if (n < nt_) rec_traces_[r * nt_ + n] = s;
        }
        // The free-surface mirror of u[n] before it is read (as the isotropic step: sources,
        // add_field, recall and restore_band change u[n] after the kernel's own mirror).
        if (box_.free_surface)
            for (int m = 0; m < batch(); ++m)
                for (T* f : {p, q}) kernels::free_surface_cpu(box_, f + m * box_.padded_size());
        args_.p = p;
        args_.q = q;
        args_.wp = f_.field(f_.prev, 0);
        args_.wq = f_.field(f_.prev, 1);
        kernels::tti_step_cpu(args_, between_);
        kernels::inject_cpu(inj_p_, n, args_.wp);
        kernels::inject_cpu(inj_q_, n, args_.wq);
        f_.swap();
        busy_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    double busy_seconds() const override { return busy_; }

    std::vector<double> receiver_traces() const override { return rec_traces_; }

    // The fields receivers and imaging see, (p + q) / 2 (HostWavefields::imaged).

    // Migration's operations (Propagator; the backward pass is this step run backwards,
    // docs/anisotropy.md "The exact adjoint"): every storage moves p and q both.
    void add_field(const std::vector<double>& f) override {
        f_.add_field(f, [&](int field, long p) { return tti_injection_weight(d_, field, p); });
    }
    // W g, g = -dm v^2 (H p0, V q0) (docs/anisotropy.md "Born modelling"), W / (1 + k)
    // in a damping layer as every source.
    void add_born_source(const Propagator& background) override {
        const Grid& window = d_.window();
        const auto* u0 = dynamic_cast<const TtiCpuPropagator<T>*>(&background);
        if (!u0) unsupported("Born modelling with a background propagator of another backend, precision or physics");
        require_same_batch(background);
        const std::size_t ws = window.size();
        const std::vector<double>& dm_v2 = this->born_perturbation();
        std::vector<double> g(2 * ws * batch());  // g_p of every member, then g_q
        for (int m = 0; m < batch(); ++m) {
            const auto [hp, vq] = imaging::anisotropic_operator(u0->f_.field_window(u0->f_.cur, 0, m),
                                                                u0->f_.field_window(u0->f_.cur, 1, m), window,
                                                                f_.window_axis());
            for (std::size_t i = 0; i < ws; ++i) {
                g[m * ws + i] = -dm_v2[m * ws + i] * hp[i];
                g[(batch() + m) * ws + i] = -dm_v2[m * ws + i] * vq[i];
            }
        }
        f_.add_fields(g, [&](int k, int j, long p) { return tti_w(d_, k, j, p); });
    }
    void correlate(const Propagator& source, double w, ImagingCondition condition) override {
        const auto* src = dynamic_cast<const TtiCpuPropagator<T>*>(&source);
        if (!src) unsupported("correlate with a propagator of another backend, precision or physics");
        require_same_batch(source);
        f_.correlate(src->f_, w, condition);
    }

    // z-slabs: a plane is p's then q's (each member's count planes of p, then of q). The
    // intermediate fields are pass 1's z fluxes (TTI), one member's at a time: pass 2
    // differentiates each flux along its own axis only, so across a z face it reads
    // flux[2] (p's) and flux[5] (q's) and no other (a third of the six's bytes).
    std::size_t plane_bytes() const override { return 2 * std::size_t(box_.sz()) * sizeof(T); }
    void copy_planes_out(int iz0, int count, void* dst) const override {
        T* out = static_cast<T*>(dst);
        for (int m = 0; m < batch(); ++m)
            for (int k = 0; k < 2; ++k) out = copy_out(f_.field(f_.cur, k) + m * box_.padded_size(), iz0, count, out);
    }
    void copy_planes_in(int iz0, int count, const void* src) override {
        const T* in = static_cast<const T*>(src);
        for (int m = 0; m < batch(); ++m)
            for (int k = 0; k < 2; ++k) in = copy_in(in, iz0, count, f_.field(f_.cur, k) + m * box_.padded_size());
    }
    std::size_t intermediate_plane_bytes() const override {
        return d_.tti().tilted ? 2 * std::size_t(box_.sz()) * sizeof(T) : 0;
    }
    void copy_intermediate_out(int iz0, int count, void* dst) const override {
        T* out = copy_out(flux_[2].data(), iz0, count, static_cast<T*>(dst));
        copy_out(flux_[5].data(), iz0, count, out);
    }
    void copy_intermediate_in(int iz0, int count, const void* src) override {
        const T* in = copy_in(static_cast<const T*>(src), iz0, count, flux_[2].data());
        copy_in(in, iz0, count, flux_[5].data());
    }
    void set_between_passes(std::function<void(int)> between) override { between_ = std::move(between); }

    std::string name() const override {
        return std::string(d_.tti().tilted ? "cpu TTI" : "cpu VTI") + (sizeof(T) == 4 ? " (fp32)" : " (fp64)");
    }

private:
    // Planes iz0 .. iz0 + count - 1 (computed-plane numbers, halo -R..-1 included) of the
    // padded array a, to out / from in; returns the pointer past them.
    T* copy_out(const T* a, int iz0, int count, T* out) const {
        const std::size_t n = std::size_t(box_.sz()) * std::size_t(count);
        const T* from = a + std::size_t(iz0 + stencil::R) * box_.sz();
        return std::copy(from, from + n, out);
    }
    const T* copy_in(const T* in, int iz0, int count, T* a) const {
        const std::size_t n = std::size_t(box_.sz()) * std::size_t(count);
        std::copy(in, in + n, a + std::size_t(iz0 + stencil::R) * box_.sz());
        return in + n;
    }

    double busy_ = 0;  // seconds in step()
    std::function<void(int)> between_;  // set_between_passes
    const Domain& d_;
    kernels::Box box_;
    kernels::TtiStepArgs<T> args_;
    UninitVector<T> cpp_, cpq_, cqq_, damp_, axis_[3];
    std::vector<T> flux_[6];
    kernels::Injection inj_p_, inj_q_;
    std::vector<PointStencil> rec_;
    std::vector<double> rec_traces_;
    int nt_ = 0;
};

}  // namespace

double tti_injection_weight(const Domain& d, int field, long i) {
    const auto& c = d.tti();
    const double damp = d.damping().empty() ? 1.0 : 1 + d.damping()[i];
    return 0.5 * (field == 0 ? c.cpp[i] + c.cpq[i] : c.cpq[i] + d.vdt2()[i]) / damp;
}

double tti_w(const Domain& d, int k, int j, long i) {
    const auto& c = d.tti();
    const double damp = d.damping().empty() ? 1.0 : 1 + d.damping()[i];
    return (k != j ? c.cpq[i] : k == 0 ? c.cpp[i] : d.vdt2()[i]) / damp;
}

std::pair<kernels::Injection, kernels::Injection> tti_injection(const Domain& d, const std::vector<PointStencil>& where,
                                                                const std::vector<std::vector<double>>& traces) {
    if (traces.size() != where.size())
        fail("set_sources", std::to_string(where.size()) + " sources but " + std::to_string(traces.size()) + " traces");
    const long box = long(d.box().padded_size());
    std::vector<std::vector<long>> index;
    std::vector<std::vector<double>> cp, cq;
    for (const auto& s : where) {
        index.push_back(s.index);
        cp.emplace_back();
        cq.emplace_back();
        for (std::size_t k = 0; k < s.index.size(); ++k) {
            const long i = s.index[k] % box;
            cp.back().push_back(tti_injection_weight(d, 0, i) * s.weight[k]);
            cq.back().push_back(tti_injection_weight(d, 1, i) * s.weight[k]);
        }
    }
    return {kernels::Injection::group(index, cp, traces, 1.0 / d.cell_volume()),
            kernels::Injection::group(index, cq, traces, 1.0 / d.cell_volume())};
}

std::unique_ptr<Propagator> make_tti_cpu_propagator(const Domain& domain, Precision precision, int batch) {
    if (precision == Precision::Double) return std::make_unique<TtiCpuPropagator<double>>(domain, batch);
    return std::make_unique<TtiCpuPropagator<float>>(domain, batch);
}

}  // namespace rtm
