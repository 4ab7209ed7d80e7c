#pragma once
// Propagators of anisotropic domains (Domain::anisotropic(): pseudo-acoustic VTI/TTI).
// make_cpu_propagator and make_cuda_propagator hand such domains here.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cpu/inject_cpu.h"
#include "propagation/propagator.h"

namespace rtm {

std::unique_ptr<Propagator> make_tti_cpu_propagator(const Domain& domain, Precision precision, int batch = 1);
// The CUDA backend's (tti_cuda_propagator.cu; built with CUDA only).
std::unique_ptr<Propagator> make_tti_cuda_propagator(const Domain& domain, Precision precision, int batch = 1);

// What both backends inject: the sources' taps on p and on q, W B s = (v dt)^2 ((1 + 2 eps
// + b) / 2, (b + 1) / 2) s per tap, divided by 1 + k in a damping layer (as
// Domain::injection), times the tap's weight, grouped by target point (Injection::group).
std::pair<kernels::Injection, kernels::Injection> tti_injection(const Domain& d, const std::vector<PointStencil>& where,
                                                                const std::vector<std::vector<double>>& traces);

// Migration is not implemented for anisotropic media yet: the error both backends give.
[[noreturn]] void tti_no_migration(const std::string& backend);

// What both backends' TTI propagators share: the migration operations, refused by name
// (tti_no_migration) rather than with the base class's "use the CPU", and the field
// receivers see.
class TtiPropagator : public Propagator {
public:
    std::vector<double> previous_wavefield() const override { tti_no_migration(name()); }
    void add_field(const std::vector<double>&) override { tti_no_migration(name()); }
    void reverse_time() override { tti_no_migration(name()); }
    std::size_t band_size() const override { tti_no_migration(name()); }
    void save_band(float*) const override { tti_no_migration(name()); }
    void restore_band(const float*) override { tti_no_migration(name()); }
    void reserve_bands(std::size_t) override { tti_no_migration(name()); }
    void store_band(std::size_t) override { tti_no_migration(name()); }
    void load_band(std::size_t) override { tti_no_migration(name()); }
    std::size_t keep(bool) override { tti_no_migration(name()); }
    void recall(std::size_t, bool) override { tti_no_migration(name()); }
    void clear_kept() override { tti_no_migration(name()); }
    void correlate(const Propagator&, double, ImagingCondition) override { tti_no_migration(name()); }
    std::vector<double> correlation(bool) const override { tti_no_migration(name()); }

protected:
    using Propagator::Propagator;

    // (p + q) / 2 on the window's nodes, member after member (padded arrays of `batch`
    // members): what receivers record.
    template <class T>
    static std::vector<double> window_mean(const Domain& d, const T* p, const T* q, int batch) {
        const Grid& g = d.window();
        const std::size_t box = d.box().padded_size();
        std::vector<double> out(g.size() * std::size_t(batch));
        for (int m = 0; m < batch; ++m)
            for (int iz = 0; iz < g.nz; ++iz)
                for (int iy = 0; iy < g.ny; ++iy)
                    for (int ix = 0; ix < g.nx; ++ix) {
                        const std::size_t i = m * box + d.index(ix, iy, iz);
                        out[m * g.size() + g.index(ix, iy, iz)] = 0.5 * (double(p[i]) + double(q[i]));
                    }
        return out;
    }
};

}  // namespace rtm
