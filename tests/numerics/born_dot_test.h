#pragma once
// The dot-product test of Born modelling F (born_shot) and born-adjoint migration F^T
// (migrate_shot), shared by the CPU and GPU tests: random dm and d, record interval
// and step chosen by the caller (they differ: the resampling and the time-dispersion
// transforms are inside both operators, and migration must use their exact transposes).
#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>

#include "migration_fixture.h"
#include "support/catch.hpp"

namespace rtm::test {

struct DotTest {
    double lhs = 0, rhs = 0;  // <F dm, d>, <dm, F^T d>
    double scale = 0;         // |F dm| |d| + |dm| |F^T d|
    int steps = 0;
    // |lhs - rhs| / scale: if F dm and F^T d are computed with relative errors e1 and
    // e2 (in the L2 norm), |lhs - rhs| <= e1 |F dm| |d| + e2 |dm| |F^T d| (Cauchy-Schwarz):
    // the mismatch over scale is at most the operators' relative error, whatever
    // cancellation the random d brings into the sums.
    double error() const { return std::abs(lhs - rhs) / scale; }
    // The mismatch against the larger product, and the sums' cancellation factors:
    // independent relative errors of rms eps in the terms a_i of a sum move it by
    // eps sqrt(sum a_i^2) in rms, eps rms of itself with rms = sqrt(sum a_i^2) / |sum a_i|;
    // by at most eps kappa of itself, kappa = sum |a_i| / |sum a_i|, were they all aligned.
    double kappa_lhs = 0, kappa_rhs = 0, rms_lhs = 0, rms_rhs = 0;
    double mismatch() const { return std::abs(lhs - rhs) / std::max(std::abs(lhs), std::abs(rhs)); }
};

// 2D: 61 x 41 nodes at 10 m, a velocity that varies in x and z, Ricker 15 Hz (f_max
// 37.5 Hz, 4.8 points per wavelength), receivers every 20 m; 3D: 17 x 17 x 15 at 20 m,
// Ricker 8 Hz (4.5 points), receivers every 40 m in x and y. Records of 0.35 s at
// record_dt; the step is propagation.dt (the caller's).
// memory_budget: MigrationOptions::memory_budget (0: auto). dress: changes the model
// before both operators run (e.g. gives it anisotropy).
inline DotTest born_dot_test(int ndim, double record_dt, const PropagationOptions& p, SourceStorage storage,
                             bool d_is_Fdm = false, double memory_budget = 0,
                             const std::function<void(Model&)>& dress = {}) {
    const bool is3d = ndim == 3;
    Model m = is3d ? make_model(17, 17, 15, 20, [](double x, double y, double z) {
        return 1800 + 0.6 * z + 100 * std::sin(x / 80) + 60 * std::cos(y / 70);
    })
                         : make_model(61, 1, 41, 10, [](double x, double, double z) {
                               return 1800 + 0.6 * z + 100 * std::sin(x / 80);
                           });
    if (dress) dress(m);
    MigrationOptions opt;
    opt.aperture = -1;
    opt.propagation = p;
    opt.propagation.pml_cells = 15;
    opt.condition = ImagingCondition::BornAdjoint;
    opt.storage = storage;
    opt.memory_budget = memory_budget;
    const Wavelet w = ricker_wavelet(is3d ? 8 : 15);
    const ShotGather geo = is3d ? shot_geometry(m, 163.7, 147.1, 40, 0.35, record_dt)
                                : shot_geometry(m, 303.7, 0, 20, 0.35, record_dt);

    std::mt19937 rng(7);
    std::normal_distribution<double> gauss;
    Volume dm(m.grid());
    for (auto& x : dm.data) x = float(gauss(rng) * 1e-8);
    ShotGather d = geo;
    d.data.resize(geo.ntraces() * geo.nt);
    for (auto& x : d.data) x = float(gauss(rng));

    const ShotGather Fdm = born_shot(m, dm, geo, w, opt);
    if (d_is_Fdm) d = Fdm;
    const ShotMigration Ftd = migrate_shot(m, d, w, opt);
    DotTest t;
    double fdm2 = 0, d2 = 0, dm2 = 0, ftd2 = 0, abs_lhs = 0, abs_rhs = 0, sq_lhs = 0, sq_rhs = 0;
    for (std::size_t i = 0; i < d.data.size(); ++i) {
        const double a = double(Fdm.data[i]) * d.data[i];
        t.lhs += a;
        abs_lhs += std::abs(a);
        sq_lhs += a * a;
        fdm2 += double(Fdm.data[i]) * Fdm.data[i];
        d2 += double(d.data[i]) * d.data[i];
    }
    for (std::size_t i = 0; i < dm.data.size(); ++i) {
        const double a = double(dm.data[i]) * Ftd.image[i];
        t.rhs += a;
        abs_rhs += std::abs(a);
        sq_rhs += a * a;
        dm2 += double(dm.data[i]) * dm.data[i];
        ftd2 += Ftd.image[i] * Ftd.image[i];
    }
    t.scale = std::sqrt(fdm2 * d2) + std::sqrt(dm2 * ftd2);
    t.kappa_lhs = abs_lhs / std::abs(t.lhs);
    t.kappa_rhs = abs_rhs / std::abs(t.rhs);
    t.rms_lhs = std::sqrt(sq_lhs) / std::abs(t.lhs);
    t.rms_rhs = std::sqrt(sq_rhs) / std::abs(t.rhs);
    t.steps = Ftd.steps;
    return t;
}

// Gives a dot-test model (the `dress` above) anisotropy varying in space: epsilon >=
// delta everywhere (no node changed by the stability rule), a tilt of 10-50 degrees
// and, in 3D, an azimuth of 15-75 degrees (Model holds radians).
inline void tilted_anisotropy(Model& m) {
    const Grid& g = m.grid();
    for (const char* name : {"epsilon", "delta", "theta", "phi"})
        if (g.ny > 1 || std::string(name) != "phi") m.extra[name] = Volume(g);
    for (int iz = 0; iz < g.nz; ++iz)
        for (int iy = 0; iy < g.ny; ++iy)
            for (int ix = 0; ix < g.nx; ++ix) {
                const double x = ix * g.dx, y = iy * g.dy, z = iz * g.dz;
                m.extra["epsilon"].at(ix, iy, iz) = float(0.2 + 0.08 * std::sin((x - z) / 110));
                m.extra["delta"].at(ix, iy, iz) = float(0.08 + 0.03 * std::cos(x / 90));
                m.extra["theta"].at(ix, iy, iz) = float((30 + 20 * std::sin((x + z) / 130)) * M_PI / 180);
                if (g.ny > 1) m.extra["phi"].at(ix, iy, iz) = float((45 + 30 * std::cos((y - x) / 100)) * M_PI / 180);
            }
}

}  // namespace rtm::test
