#pragma once
// Batched migration against shot-by-shot migration, bit for bit, shared by the CPU
// (test_batch.cpp) and GPU tests: the propagators' migration operations on a batch,
// and migrate_shots against migrate_shot.
#include <cmath>
#include <functional>
#include <memory>

#include "migration_fixture.h"
#include "simulate.h"
#include "support/catch.hpp"

namespace rtm::test {

// The small model of the batch tests: 41 x 37 nodes (33 in y in 3D) at 10 m.
inline Run batch_run(int ndim, bool free_surface, Boundary boundary) {
    Run r;
    r.grid.nx = 41;
    r.grid.ny = ndim == 3 ? 33 : 1;
    r.grid.nz = 37;
    r.grid.dx = r.grid.dy = r.grid.dz = 10;
    r.velocity = [](double x, double, double z) { return 1800 + 1.5 * z + 0.4 * x; };
    r.domain.dt = 0.0012;
    r.domain.pml_cells = 8;
    r.domain.free_surface = free_surface;
    r.domain.boundary = boundary;
    r.nt = 150;
    r.precision = Precision::Single;
    return r;
}

// f on the window of member m: a smooth bump, different for each member.
inline std::vector<double> member_field(const Grid& g, int m) {
    std::vector<double> f(g.size());
    for (std::size_t i = 0; i < f.size(); ++i) f[i] = 1e-3 * std::sin(0.013 * double(i) * (m + 1) + m);
    return f;
}

inline std::vector<double> concat(const std::vector<std::vector<double>>& parts) {
    std::vector<double> out;
    for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
    return out;
}


// The migration operations of a batch of three (make(d, precision, batch) makes the
// propagators) against each member alone, bit for bit: steps and add_field, save_band,
// keep/recall (fp and bfloat16), states, the band history with restore_band and
// reverse_time, correlate with every condition. Damping layers, 2D and 3D, fp32 and fp64.
inline void check_batch_ops(const std::function<std::unique_ptr<Propagator>(const Domain&, Precision, int)>& make) {
    for (int ndim : {2, 3})
        for (Precision prec : {Precision::Single, Precision::Double}) {
            INFO(ndim << "D, " << (prec == Precision::Single ? "fp32" : "fp64"));
            Run r = batch_run(ndim, false, Boundary::Damping);
            r.precision = prec;
            Domain d(r.grid, velocity_field(r), r.domain);
            const Grid& g = d.window();
            const auto w = ricker(15, r.domain.dt, r.nt);
            const std::vector<double> wavelet(w.begin(), w.end());
            const double y = ndim == 3 ? 163.1 : 0;
            const Position src[3] = {{101.3, y, 12.7}, {207.9, y, 3.1}, {322.4, y, 251.6}};
            const Position rec = {55.5, y, 21.2};
            // Each member m as a source propagator s[m] and a receiver propagator l[m]
            // (index 3: the batch of all three); both run the same operations.
            std::vector<std::unique_ptr<Propagator>> s, l;
            for (int m = 0; m <= 3; ++m) {
                const int B = m == 3 ? 3 : 1;
                s.push_back(make(d, prec, B));
                l.push_back(make(d, prec, B));
                std::vector<PointStencil> ss, ls;
                for (int k = 0; k < B; ++k) {
                    const int shot = m == 3 ? k : m;
                    const Position p = src[shot];
                    ss.push_back(member_stencil(d.point(p.x, p.y, p.z, "source"), d.box(), k));
                    ls.push_back(member_stencil(d.point(rec.x, rec.y, rec.z + 10 * shot, "receiver"), d.box(), k));
                }
                s[m]->set_sources(ss, std::vector<std::vector<double>>(B, wavelet));
                l[m]->set_sources(ls, std::vector<std::vector<double>>(B, wavelet));
                s[m]->set_receivers({}, r.nt);
                l[m]->set_receivers({}, r.nt);
            }
            // Each part of the batch's result of op (a field: member after member)
            // against the members' parts one after another.
            using Parts = std::vector<std::vector<double>>;
            auto same = [&](const char* what, const std::function<Parts(Propagator&, Propagator&, int)>& op) {
                std::vector<Parts> alone;
                for (int m = 0; m < 3; ++m) alone.push_back(op(*s[m], *l[m], m));
                const Parts together = op(*s[3], *l[3], -1);
                for (std::size_t p = 0; p < together.size(); ++p) {
                    INFO(what << ", part " << p);
                    double peak = 0;
                    for (double v : together[p]) peak = std::max(peak, std::abs(v));
                    CHECK(peak > 0);
                    const bool equal = together[p] == concat({alone[0][p], alone[1][p], alone[2][p]});
                    CHECK(equal);  // (not the vectors: too long to print)
                }
            };
            auto steps = [](Propagator& p, int from, int to) {
                for (int n = from; n < to; ++n) p.step(n);
            };
            auto field = [&](int m) { return m >= 0 ? member_field(g, m) : concat({member_field(g, 0), member_field(g, 1), member_field(g, 2)}); };
            same("steps and add_field", [&](Propagator& a, Propagator& b, int m) {
                steps(a, 0, 60);
                steps(b, 0, 60);
                a.add_field(field(m));
                steps(a, 60, 70);
                return Parts{a.wavefield()};
            });
            same("save_band", [&](Propagator& a, Propagator&, int) {
                std::vector<float> band(a.band_size());
                a.save_band(band.data());
                return Parts{std::vector<double>(band.begin(), band.end())};
            });
            same("keep and recall (fp and bfloat16)", [&](Propagator& a, Propagator&, int) {
                a.keep(false);
                steps(a, 70, 75);
                a.recall(0, true);
                const auto prev = a.previous_wavefield();
                a.clear_kept();
                a.keep(true);
                steps(a, 75, 78);
                a.recall(0);
                return Parts{prev, a.wavefield()};
            });
            same("states", [&](Propagator& a, Propagator&, int) {
                a.reserve_states(2);
                a.store_state(1);
                steps(a, 78, 83);
                const auto ahead = a.wavefield();
                a.load_state(1);
                steps(a, 78, 80);
                return Parts{ahead, a.wavefield(), a.previous_wavefield()};
            });
            same("band history, restore_band and reverse_time", [&](Propagator& a, Propagator&, int) {
                a.reserve_bands(2);
                a.store_band(1);
                steps(a, 80, 82);
                a.load_band(1);
                std::vector<float> band(a.band_size(), 0.25f);
                a.restore_band(band.data());
                a.reverse_time();
                steps(a, 82, 85);
                return Parts{a.wavefield()};
            });
            same("correlate, every condition", [&](Propagator& a, Propagator& b, int) {
                steps(b, 60, 85);
                for (ImagingCondition c : {ImagingCondition::CrossCorrelation, ImagingCondition::InverseScattering,
                                           ImagingCondition::BornAdjoint})
                    b.correlate(a, 0.5, c);
                return Parts{b.correlation(false), b.correlation(true)};
            });
        }
}


// Three shots over the whole model (aperture -1: one window, so one batch), recorded
// on a model with a reflector, migrated in a smooth one.
struct BatchSurvey {
    Model truth, smooth;
    std::vector<ShotGather> shots;
    Wavelet w = ricker_wavelet(15);
    MigrationOptions opt;
    explicit BatchSurvey(int ndim) {
        const bool is3d = ndim == 3;
        const int ny = is3d ? 17 : 1;
        truth = make_model(is3d ? 31 : 71, ny, is3d ? 25 : 41, 10,
                           [](double, double, double z) { return z < 200 ? 1800.0 : 2300.0; });
        smooth = make_model(is3d ? 31 : 71, ny, is3d ? 25 : 41, 10, [](double, double, double z) { return 1800 + z; });
        opt.propagation.pml_cells = is3d ? 5 : 10;
        opt.aperture = -1;
        std::vector<ShotGather> geo;
        for (int s = 0; s < 3; ++s) {
            geo.push_back(shot_geometry(truth, 60.0 + 90.7 * s, is3d ? 80 : 0, 20, 0.35, 0.002));
            geo.back().id = 11 + s;
        }
        shots = model_shots(truth, geo, w, opt.propagation);
    }
    std::vector<const ShotGather*> all() const { return {&shots[0], &shots[1], &shots[2]}; }
};

inline std::vector<ShotMigration> check_batch_equals_alone(const BatchSurvey& sv, const MigrationOptions& opt,
                                                   int expect_together) {
    const auto batch = sv.all();
    const auto together = migrate_shots(sv.smooth, batch, sv.w, opt);
    REQUIRE(together.size() == 3);
    for (int s = 0; s < 3; ++s) {
        INFO("shot " << s);
        const ShotMigration alone = migrate_shot(sv.smooth, sv.shots[s], sv.w, opt);
        double peak = 0;
        for (double v : alone.image) peak = std::max(peak, std::abs(v));
        CHECK(peak > 0);
        CHECK(together[s].storage == alone.storage);
        CHECK(together[s].image == alone.image);
        CHECK(together[s].illumination == alone.illumination);
        CHECK(together[s].batch == (s < 3 - 3 % expect_together ? expect_together : 3 % expect_together));
    }
    return together;
}


}  // namespace rtm::test
