// A batch of shots (Propagator::batch, model_shots' and migrate_shots' batches) computes
// each member as if it ran alone: the same arithmetic on the member's own arrays, so
// equal bit for bit: the steps, the migration operations, whole migrations.
#include <cmath>

#include "migration_fixture.h"
#include "simulate.h"
#include "support/catch.hpp"
#include "support/test_data.h"

using namespace rtm;
using namespace rtm::test;

namespace {

Run batch_run(int ndim, bool free_surface, Boundary boundary) {
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

}  // namespace

TEST_CASE("a batch of three shots gives each shot's traces and wavefield exactly as alone") {
    for (int ndim : {2, 3})
        for (bool fs : {false, true})
            for (Boundary bnd : {Boundary::Cpml, Boundary::Damping}) {
                const Run r = batch_run(ndim, fs, bnd);
                Domain d(r.grid, velocity_field(r), r.domain);
                const auto w = ricker(15, r.domain.dt, r.nt);
                const std::vector<double> wavelet(w.begin(), w.end());
                const double y = ndim == 3 ? 163.1 : 0;
                const Position src[3] = {{101.3, y, 12.7}, {207.9, y, 3.1}, {322.4, y, 251.6}};
                const Position rec[2] = {{55.5, y, 21.2}, {388.8, y, 140.3}};

                auto batch = make_cpu_propagator(d, r.precision, 3);
                std::vector<PointStencil> srcs, recs;
                for (int m = 0; m < 3; ++m) {
                    srcs.push_back(member_stencil(d.point(src[m].x, src[m].y, src[m].z, "source"), d.box(), m));
                    for (int k = m; k < 2; ++k)  // members with 2, 1 and 0 receivers
                        recs.push_back(member_stencil(d.point(rec[k].x, rec[k].y, rec[k].z, "receiver"), d.box(), m));
                }
                batch->set_sources(srcs, {wavelet, wavelet, wavelet});
                batch->set_receivers(recs, r.nt);
                for (int n = 0; n < r.nt; ++n) batch->step(n);
                const auto traces = batch->receiver_traces();
                const auto field = batch->wavefield();
                REQUIRE(traces.size() == 3 * std::size_t(r.nt));
                REQUIRE(field.size() == 3 * r.grid.size());

                std::size_t r0 = 0;
                for (int m = 0; m < 3; ++m) {
                    auto alone = make_cpu_propagator(d, r.precision);
                    alone->set_sources({d.point(src[m].x, src[m].y, src[m].z, "source")}, {wavelet});
                    std::vector<PointStencil> own;
                    for (int k = m; k < 2; ++k) own.push_back(d.point(rec[k].x, rec[k].y, rec[k].z, "receiver"));
                    alone->set_receivers(own, r.nt);
                    for (int n = 0; n < r.nt; ++n) alone->step(n);
                    const auto t = alone->receiver_traces();
                    const auto f = alone->wavefield();
                    INFO(ndim << "D, free surface " << fs << ", " << (bnd == Boundary::Cpml ? "C-PML" : "damping")
                              << ", member " << m);
                    double peak = 0;
                    for (double v : f) peak = std::max(peak, std::abs(v));
                    CHECK(peak > 0);
                    CHECK(std::equal(t.begin(), t.end(), traces.begin() + r0 * r.nt));
                    CHECK(std::equal(f.begin(), f.end(), field.begin() + m * r.grid.size()));
                    r0 += own.size();
                }
            }
}

TEST_CASE("model_shots in batches (3 + 2 shots) equals shot-by-shot modelling") {
    const Model m = make_model(61, 1, 41, 10, [](double x, double, double z) { return 1700 + z + 0.3 * x; });
    std::vector<ShotGather> geo;
    for (int s = 0; s < 5; ++s) {
        geo.push_back(shot_geometry(m, 50.0 + 110.3 * s, 0, 20, 0.3, 0.002));
        geo.back().id = s + 1;
    }
    PropagationOptions p;
    p.pml_cells = 10;
    p.batch = 1;
    const auto one = model_shots(m, geo, ricker_wavelet(15), p);
    p.batch = 3;
    const auto three = model_shots(m, geo, ricker_wavelet(15), p);
    REQUIRE(one.size() == 5);
    REQUIRE(three.size() == 5);
    for (int s = 0; s < 5; ++s) {
        INFO("shot " << s);
        CHECK(three[s].id == s + 1);
        CHECK(three[s].data == one[s].data);
    }
    CHECK(modelling_batch(p, 5, 1e4, 1e5) == 3);
    p.batch = 0;
    CHECK(modelling_batch(p, 5, 1e4, 1e5) == 1);  // the CPU: automatic is one shot at a time
    p.backend.gpu = true;
    CHECK(modelling_batch(p, 5000, 1e6, 1e5) == int(kBatchPoints / 1e6));
    CHECK(modelling_batch(p, 5, 1e4, 1e5) == 5);
    // Many receivers and steps: the traces' size caps the batch (and never below 1).
    CHECK(modelling_batch(p, 5000, 1e4, 1e7) == int(kBatchSamples / 1e7));
    CHECK(modelling_batch(p, 5000, 1e4, 1e12) == 1);
}

namespace {

// f on the window of member m: a smooth bump, different for each member.
std::vector<double> member_field(const Grid& g, int m) {
    std::vector<double> f(g.size());
    for (std::size_t i = 0; i < f.size(); ++i) f[i] = 1e-3 * std::sin(0.013 * double(i) * (m + 1) + m);
    return f;
}

std::vector<double> concat(const std::vector<std::vector<double>>& parts) {
    std::vector<double> out;
    for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
    return out;
}

}  // namespace

TEST_CASE("a batch's migration operations act on each member exactly as on that member alone") {
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
                s.push_back(make_cpu_propagator(d, prec, B));
                l.push_back(make_cpu_propagator(d, prec, B));
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

TEST_CASE("a batch refuses to image against a source propagator of another batch size") {
    const Run r = batch_run(2, false, Boundary::Damping);
    Domain d(r.grid, velocity_field(r), r.domain);
    auto three = make_cpu_propagator(d, r.precision, 3), two = make_cpu_propagator(d, r.precision, 2);
    const std::string err = error_of([&] { three->correlate(*two, 1.0); });
    CHECK_THAT(err, Catch::Matchers::Contains("batch of 2") && Catch::Matchers::Contains("this one 3"));
    CHECK_THAT(error_of([&] { three->add_field(std::vector<double>(d.window().size(), 1.0)); }),
               Catch::Matchers::Contains("for each of 3 members"));
}

namespace {

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

std::vector<ShotMigration> check_batch_equals_alone(const BatchSurvey& sv, const MigrationOptions& opt,
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

}  // namespace

TEST_CASE("migrate_shots: each shot of a batch gets its image alone bit for bit, for every storage and condition") {
    const BatchSurvey sv(2);
    for (SourceStorage st : {SourceStorage::Snapshots, SourceStorage::Boundary, SourceStorage::Checkpoints})
        for (ImagingCondition c : {ImagingCondition::CrossCorrelation, ImagingCondition::InverseScattering,
                                   ImagingCondition::BornAdjoint}) {
            MigrationOptions opt = sv.opt;
            opt.storage = st;
            opt.condition = c;
            // Checkpoints: a budget of 8 states of one shot (a state: 2 padded fp32
            // arrays of 104 x 69 points, 91 x 61 computed, 57 kB), 2 of the batch of
            // three, far below the 30 or so snapshots: both schedules recompute.
            if (st == SourceStorage::Checkpoints) opt.memory_budget = 8.5 * 2 * 4.0 * 104 * 69;
            INFO(storage_name(st) << ", condition " << int(c));
            const auto r = check_batch_equals_alone(sv, opt, 3);
            if (st == SourceStorage::Checkpoints) CHECK(r[0].recompute > 1.5);
        }
}

TEST_CASE("migrate_shots in 3D and with bfloat16 snapshots gives each shot's image alone bit for bit") {
    const BatchSurvey sv(3);
    MigrationOptions opt = sv.opt;
    opt.storage = SourceStorage::Snapshots;
    opt.bf16_snapshots = true;
    check_batch_equals_alone(sv, opt, 3);
    opt.storage = SourceStorage::Boundary;
    check_batch_equals_alone(sv, opt, 3);
}

TEST_CASE("migrate_shots runs a batch whose snapshots exceed the budget in parts that keep snapshots") {
    const BatchSurvey sv(2);
    MigrationOptions opt = sv.opt;
    opt.storage = SourceStorage::Auto;
    const ShotMigration one = migrate_shot(sv.smooth, sv.shots[0], sv.w, opt);
    REQUIRE(one.storage == SourceStorage::Snapshots);
    // Room for the snapshots of two shots, not three: parts of 2 and 1, all by snapshots
    // (the whole batch at once would have fallen back to the boundary band).
    opt.memory_budget = 2.5 * one.bytes_kept;
    check_batch_equals_alone(sv, opt, 2);
}

TEST_CASE("migrate_shots refuses shots of different windows or sampling, naming the shot") {
    BatchSurvey sv(2);
    CHECK(batch_key(sv.smooth, sv.shots[0], sv.opt) == batch_key(sv.smooth, sv.shots[1], sv.opt));
    // Shot 12 without its far receivers: a window of its own.
    ShotGather near = sv.shots[1];
    near.receivers.resize(10);
    near.data.resize(10 * std::size_t(near.nt));
    MigrationOptions opt = sv.opt;
    opt.aperture = 100;
    CHECK(batch_key(sv.smooth, sv.shots[0], opt) != batch_key(sv.smooth, near, opt));
    CHECK_THAT(error_of([&] { migrate_shots(sv.smooth, {&sv.shots[0], &near}, sv.w, opt); }),
               Catch::Matchers::Contains("shot 12") && Catch::Matchers::Contains("differs from shot 11"));
    // Another sample interval: another time axis.
    ShotGather slow = sv.shots[1];
    slow.dt *= 2;
    CHECK_THAT(error_of([&] { migrate_shots(sv.smooth, {&sv.shots[0], &slow}, sv.w, sv.opt); }),
               Catch::Matchers::Contains("shot 12") && Catch::Matchers::Contains("record sampling"));
}
