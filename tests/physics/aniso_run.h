#pragma once
// Small anisotropic propagation runs: vp and the anisotropy volumes as functions of
// position, one Ricker source, receivers anywhere, traces and the final wavefield back.
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "physics/wavelet.h"
#include "propagation/backend.h"

namespace rtm::test {

using Field = std::function<double(double x, double y, double z)>;

constexpr double kEps = 0x1p-52;  // double's unit roundoff times 2

inline Field constant(double v) {
    return [v](double, double, double) { return v; };
}

struct AnisoRun {
    Grid grid;                                   // window (local coordinates)
    Field vp = [](double, double, double) { return 2000.0; };
    std::map<std::string, Field> extra;          // "epsilon", "delta", "theta", "phi" (radians); none: isotropic
    DomainOptions domain;                        // dt, pml_cells; boundary Damping for anisotropy
    int nt = 0;
    double f0 = 10;
    Position source;
    std::vector<std::pair<Position, double>> more_sources;  // further sources: where, the wavelet's factor
    std::vector<Position> receivers;
    Precision precision = Precision::Double;

    AnisoRun() { domain.boundary = Boundary::Damping; }
};

inline std::vector<float> sample(const Grid& g, const Field& f) {
    std::vector<float> v(g.size());
    for (int iz = 0; iz < g.nz; ++iz)
        for (int iy = 0; iy < g.ny; ++iy)
            for (int ix = 0; ix < g.nx; ++ix) v[g.index(ix, iy, iz)] = float(f(ix * g.dx, iy * g.dy, g.z0 + iz * g.dz));
    return v;
}

struct AnisoResult {
    std::vector<double> traces;     // receivers x nt
    std::vector<double> wavefield;  // (p + q) / 2 (or u) on the window after the last step
    double early_max = 0;           // largest |wavefield| checked in the first `early` steps
    double late_max = 0;            // and from step `late` on
    bool finite = true;             // every checked wavefield
};

// Runs r; every `check_every` steps (0: never) the wavefield is checked: finite, and its
// largest magnitude folded into early_max (steps 1..early) or late_max (steps > late).
inline AnisoResult run(const AnisoRun& r, int check_every = 0, int early = 0, int late = 0) {
    AnisotropyFields extra;
    for (const auto& [name, f] : r.extra) extra[name] = sample(r.grid, f);
    Domain d(r.grid, sample(r.grid, r.vp), r.domain, extra);
    auto p = make_cpu_propagator(d, r.precision);
    const auto w = ricker(r.f0, r.domain.dt, r.nt);
    std::vector<PointStencil> sources{d.point(r.source.x, r.source.y, r.source.z, "source")};
    std::vector<std::vector<double>> wavelets{std::vector<double>(w.begin(), w.end())};
    for (const auto& [at, factor] : r.more_sources) {
        sources.push_back(d.point(at.x, at.y, at.z, "source"));
        wavelets.emplace_back();
        for (double x : w) wavelets.back().push_back(factor * x);
    }
    p->set_sources(sources, wavelets);
    std::vector<PointStencil> rec;
    for (const auto& q : r.receivers) rec.push_back(d.point(q.x, q.y, q.z, "receiver"));
    p->set_receivers(rec, r.nt);
    AnisoResult out;
    for (int n = 0; n < r.nt; ++n) {
        p->step(n);
        if (check_every > 0 && (n + 1) % check_every == 0) {
            double m = 0;
            for (double x : p->wavefield()) {
                if (!std::isfinite(x)) out.finite = false;
                m = std::max(m, std::abs(x));
            }
            if (n < early) out.early_max = std::max(out.early_max, m);
            if (n >= late) out.late_max = std::max(out.late_max, m);
            if (!out.finite) break;
        }
    }
    out.traces = p->receiver_traces();
    out.wavefield = p->wavefield();
    return out;
}

// The model of a run as rtm::Model, for the CFL limit.
inline Model model_of(const AnisoRun& r) {
    Model m;
    m.vp = Volume(r.grid);
    m.vp.data = sample(r.grid, r.vp);
    for (const auto& [name, f] : r.extra) {
        Volume v(r.grid);
        v.data = sample(r.grid, f);
        m.extra[name] = std::move(v);
    }
    return m;
}

}  // namespace rtm::test
