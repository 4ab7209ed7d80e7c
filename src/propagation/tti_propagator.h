#pragma once
// Propagators of anisotropic domains (Domain::anisotropic(): pseudo-acoustic VTI/TTI).
// make_cpu_propagator and make_cuda_propagator hand such domains here.
#include <memory>
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

// What a unit source density adds to field 0 (p) or 1 (q) at padded point i: W B / (1 + k)
// = ((W_pp + W_pq) / 2, (W_pq + W_qq) / 2) / (1 + k) (the sources' taps, add_field).
double tti_injection_weight(const Domain& d, int field, long i);

// What both backends' TTI propagators share: the field receivers and imaging see.
// Both hold p and q in one array per time level (p of every member, then q), so
// that the isotropic propagators' storage for migration (band, states, snapshots)
// moves both fields as it moves the members of a batch (host_wavefields.h on the CPU).
class TtiPropagator : public Propagator {
protected:
    using Propagator::Propagator;

    // (p + q) / 2 on the window's nodes, member after member (padded arrays of `batch`
    // members): what receivers record and imaging reads.
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
