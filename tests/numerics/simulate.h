#pragma once
// Small propagation runs for the numerics tests: a velocity function on a grid,
// one source with a Ricker wavelet, receivers anywhere, traces back in double.
#include <cmath>
#include <functional>
#include <optional>
#include <vector>

#include "core/survey.h"
#include "physics/wavelet.h"
#include "propagation/backend.h"

namespace rtm::test {

struct Run {
    Grid grid;                                    // window (local coordinates)
    std::function<double(double, double, double)> velocity = [](double, double, double) { return 2000.0; };
    DomainOptions domain;                         // dt, pml_cells, free_surface, f_dominant
    int nt = 0;
    double f0 = 10;                               // Ricker peak frequency
    Position source;                              // local coordinates
    std::optional<Position> mirror_source;        // a second source with the wavelet negated (image method)
    std::vector<Position> receivers;              // local coordinates
    Precision precision = Precision::Double;
};

inline std::vector<float> velocity_field(const Run& r) {
    std::vector<float> v(r.grid.size());
    for (int iz = 0; iz < r.grid.nz; ++iz)
        for (int iy = 0; iy < r.grid.ny; ++iy)
            for (int ix = 0; ix < r.grid.nx; ++ix)
                v[r.grid.index(ix, iy, iz)] = float(
                    r.velocity(ix * r.grid.dx, iy * r.grid.dy, r.grid.z0 + iz * r.grid.dz));
    return v;
}

struct Result {
    std::vector<double> traces;    // receivers x nt
    std::vector<double> wavefield; // u[snapshot] on the window
};

// The run on the CPU or the GPU; snapshot: the step after which the wavefield is kept
// (default: the last).
inline Result simulate_on(const Run& r, bool gpu, int snapshot = -1) {
    Domain d(r.grid, velocity_field(r), r.domain);
    auto p = gpu ? make_cuda_propagator(d, r.precision) : make_cpu_propagator(d, r.precision);
    const auto w = ricker(r.f0, r.domain.dt, r.nt);
    const std::vector<double> wav(w.begin(), w.end());
    if (r.mirror_source) {
        std::vector<double> neg(wav.size());
        for (std::size_t i = 0; i < wav.size(); ++i) neg[i] = -wav[i];
        const Position& q = *r.mirror_source;
        p->set_sources({d.point(r.source.x, r.source.y, r.source.z, "source"), d.point(q.x, q.y, q.z, "source")},
                       {wav, neg});
    } else {
        p->set_sources({d.point(r.source.x, r.source.y, r.source.z, "source")}, {wav});
    }
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

// Receivers x nt traces of the run on the CPU.
inline std::vector<double> simulate(const Run& r) { return simulate_on(r, false).traces; }

// ||a - b|| / ||b|| over n samples.
inline double rel_l2(const double* a, const double* b, std::size_t n) {
    double num = 0, den = 0;
    for (std::size_t i = 0; i < n; ++i) {
        num += (a[i] - b[i]) * (a[i] - b[i]);
        den += b[i] * b[i];
    }
    return std::sqrt(num / den);
}

}  // namespace rtm::test
