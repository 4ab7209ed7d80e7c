// The CPU backend: padded arrays in host memory, kernels/cpu for the step.
#include <chrono>
#include <utility>

#include "core/error.h"
#include "core/threads.h"

#include "kernels/cpu/inject_cpu.h"
#include "kernels/cpu/step_cpu.h"
#include "propagation/host_wavefields.h"
#include "propagation/stored_propagator.h"
#include "propagation/injection.h"
#include "propagation/propagator.h"
#include "propagation/tti_propagator.h"

namespace rtm {

namespace {

template <class T>
class CpuPropagator final : public StoredPropagator<HostWavefields<T>> {
    using Base = StoredPropagator<HostWavefields<T>>;
    using Base::f_;  // (members of a dependent base are named)
    using Base::require_same_batch;
    using Base::unsupported;

public:
    using Base::batch;
    CpuPropagator(const Domain& d, int batch) : StoredPropagator<HostWavefields<T>>(d, 1, batch), d_(d), box_(d.box()) {
        flush_denormals_to_zero();  // (core/threads.h) set by main already; here for other callers
        vdt2_ = converted<T>(d.vdt2());
        d.inverse_spacings(args_.inv_h2, args_.inv_h);
        args_.mem = kernels::cpml_memory(box_);
        for (int ax = 0; ax < 3; ++ax) {
            if (d.cpml(ax)) {
                a_[ax].assign(d.profile(ax).a.begin(), d.profile(ax).a.end());
                b_[ax].assign(d.profile(ax).b.begin(), d.profile(ax).b.end());
            }
            if (d.cpml(ax) && args_.mem.size[ax]) {  // (a z-slab between the z layers has no z memory)
                psi_[ax].assign(args_.mem.size[ax] * std::size_t(batch), T(0));
                zeta_[ax].assign(args_.mem.size[ax] * std::size_t(batch), T(0));
                f_.state_extra.push_back(&psi_[ax]);  // a state: u, u_prev and the C-PML memory
                f_.state_extra.push_back(&zeta_[ax]);
            }
        }
        if (!d.damping().empty()) {
            damp_ = converted<T>(d.damping());
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
        f_.reset();  // wavefields, C-PML memory, image
        std::fill(rec_traces_.begin(), rec_traces_.end(), 0.0);
    }

    void step(int n) override {
        const auto start = std::chrono::steady_clock::now();
        const auto& u_ = f_.cur;
        for (std::size_t r = 0; r < rec_.size(); ++r) {
            double s = 0;
            for (std::size_t k = 0; k < rec_[r].index.size(); ++k)
                s += rec_[r].weight[k] * double(u_[rec_[r].index[k]]);
            if (n < nt_) rec_traces_[r * nt_ + n] = s;
        }
        // The free-surface mirror of u[n] before it is read: sources injected after the
        // last step, add_field, recall and restore_band change u[n] after the kernel's own mirror.
        if (box_.free_surface)
            for (int m = 0; m < batch(); ++m) kernels::free_surface_cpu(box_, f_.cur.data() + m * box_.padded_size());
        args_.u = f_.cur.data();
        args_.w = f_.prev.data();
        kernels::step_cpu(args_);
        kernels::inject_cpu(inj_, n, f_.prev.data());
        f_.swap();
        busy_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    double busy_seconds() const override { return busy_; }

    std::vector<double> receiver_traces() const override { return rec_traces_; }


    void add_field(const std::vector<double>& f) override {
        f_.add_field(f, [&](int, long p) { return d_.injection(p); });
    }




    void correlate(const Propagator& source, double w, ImagingCondition condition) override {
        const auto* src = dynamic_cast<const CpuPropagator<T>*>(&source);
        if (!src) unsupported("correlate with a propagator of another backend or precision");
        require_same_batch(source);
        f_.correlate(src->f_, w, condition);
    }

    std::string name() const override {
        return sizeof(T) == 4 ? "cpu (fp32)" : "cpu (fp64)";
    }

    std::size_t plane_bytes() const override { return std::size_t(box_.sz()) * sizeof(T); }
    // Padded plane iz + R of each member starts at (iz + R) sz.
    void copy_planes_out(int iz0, int count, void* dst) const override {
        const std::size_t n = std::size_t(box_.sz()) * std::size_t(count), at = std::size_t(iz0 + stencil::R) * box_.sz();
        for (int m = 0; m < batch(); ++m) {
            const auto f = f_.cur.begin() + std::ptrdiff_t(m * box_.padded_size() + at);
            std::copy(f, f + std::ptrdiff_t(n), static_cast<T*>(dst) + m * n);
        }
    }
    void copy_planes_in(int iz0, int count, const void* src) override {
        const std::size_t n = std::size_t(box_.sz()) * std::size_t(count), at = std::size_t(iz0 + stencil::R) * box_.sz();
        for (int m = 0; m < batch(); ++m) {
            const T* b = static_cast<const T*>(src) + m * n;
            std::copy(b, b + n, f_.cur.begin() + std::ptrdiff_t(m * box_.padded_size() + at));
        }
    }

private:
    const Domain& d_;
    kernels::Box box_;
    kernels::StepArgs<T> args_;
    UninitVector<T> vdt2_, damp_;  // (converted on every core)
    std::vector<T> a_[3], b_[3], psi_[3], zeta_[3];
    std::vector<PointStencil> rec_;
    kernels::Injection inj_;
    std::vector<double> rec_traces_;
    int nt_ = 0;
    double busy_ = 0;        // seconds in step()
};

}  // namespace

std::unique_ptr<Propagator> make_cpu_propagator(const Domain& domain, Precision precision, int batch) {
    domain.require_all("CPU propagator");
    if (domain.anisotropic()) return make_tti_cpu_propagator(domain, precision, batch);
    if (precision == Precision::Double) return std::make_unique<CpuPropagator<double>>(domain, batch);
    return std::make_unique<CpuPropagator<float>>(domain, batch);
}

}  // namespace rtm
