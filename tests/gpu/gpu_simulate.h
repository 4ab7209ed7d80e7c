#pragma once
// simulate() of tests/numerics/simulate.h on a chosen backend (CPU or CUDA).
#include "propagation/backend.h"
#include "simulate.h"

namespace rtm::test {

struct Result {
    std::vector<double> traces;    // receivers x nt
    std::vector<double> wavefield; // u[nt] on the window
};

inline Result simulate_on(const Run& r, bool gpu) {
    Domain d(r.grid, velocity_field(r), r.domain);
    auto p = gpu ? make_cuda_propagator(d, r.precision) : make_cpu_propagator(d, r.precision);
    const auto w = ricker(r.f0, r.domain.dt, r.nt);
    p->set_sources({d.point(r.source.x, r.source.y, r.source.z, "source")},
                   {std::vector<double>(w.begin(), w.end())});
    std::vector<PointStencil> rec;
    for (const auto& q : r.receivers) rec.push_back(d.point(q.x, q.y, q.z, "receiver"));
    p->set_receivers(rec, r.nt);
    for (int n = 0; n < r.nt; ++n) p->step(n);
    return {p->receiver_traces(), p->wavefield()};
}

}  // namespace rtm::test
