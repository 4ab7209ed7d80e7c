#pragma once
// simulate() of tests/numerics/simulate.h on a chosen backend (CPU or CUDA).
#include "propagation/backend.h"
#include "simulate.h"

namespace rtm::test {

struct Result {
    std::vector<double> traces;    // receivers x nt
    std::vector<double> wavefield; // u[snapshot] on the window
};

// snapshot: the step after which the wavefield is kept (default: the last).
inline Result simulate_on(const Run& r, bool gpu, int snapshot = -1) {
    Domain d(r.grid, velocity_field(r), r.domain);
    auto p = gpu ? make_cuda_propagator(d, r.precision) : make_cpu_propagator(d, r.precision);
    const auto w = ricker(r.f0, r.domain.dt, r.nt);
    p->set_sources({d.point(r.source.x, r.source.y, r.source.z, "source")},
                   {std::vector<double>(w.begin(), w.end())});
    std::vector<PointStencil> rec;
    for (const auto& q : r.receivers) rec.push_back(d.point(q.x, q.y, q.z, "receiver"));
    p->set_receivers(rec, r.nt);
    Result out;
    for (int n = 0; n < r.nt; ++n) {
        p->step(n);
        if (n == snapshot) out.wavefield = p->wavefield();
    }
    out.traces = p->receiver_traces();
    if (snapshot < 0) out.wavefield = p->wavefield();
    return out;
}

}  // namespace rtm::test
