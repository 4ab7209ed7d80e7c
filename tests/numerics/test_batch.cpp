// A batch of shots (Propagator::batch, model_shots' and migrate_shots' batches) computes
// each member as if it ran alone: the same arithmetic on the member's own arrays, so
// equal bit for bit: the steps, the migration operations, whole migrations.
#include <cmath>

#include "batch_migration_test.h"
#include "support/catch.hpp"
#include "support/test_data.h"

using namespace rtm;
using namespace rtm::test;

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

TEST_CASE("a batch's migration operations act on each member exactly as on that member alone") {
    check_batch_ops([](const Domain& d, Precision p, int batch) { return make_cpu_propagator(d, p, batch); });
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

TEST_CASE("migrate_shots: each shot of a batch gets its image alone bit for bit, for every storage and condition") {
    const BatchSurvey sv(2);
    for (SourceStorage st : {SourceStorage::Snapshots, SourceStorage::Boundary, SourceStorage::Checkpoints})
        for (ImagingCondition c : {ImagingCondition::CrossCorrelation, ImagingCondition::InverseScattering,
                                   ImagingCondition::BornAdjoint}) {
            MigrationOptions opt = sv.opt;
            opt.storage = st;
            opt.condition = c;
            // Checkpoints: a budget of 8 states of one shot (a state: 2 padded fp32
            // arrays of 128 x 69 points, 91 x 61 computed, rows padded to 32 values: 71 kB),
            // 2 of the batch of three, far below the 30 or so snapshots: both schedules recompute.
            if (st == SourceStorage::Checkpoints) opt.memory_budget = 8.5 * 2 * 4.0 * 128 * 69;
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

TEST_CASE("a WindowCache builds a window's domain and propagators once for consecutive batches, and the images are "
          "those without it, for every storage") {
    const BatchSurvey sv(2);
    WindowCache cache;
    int built = 0;
    const BatchKey key = batch_key(sv.smooth, sv.shots[0], sv.opt);
    // What the cache hands out: one domain for one key, a new one for another.
    const auto make = [&] {
        ++built;
        DomainOptions o;
        o.dt = 1e-3;
        return std::make_shared<const Domain>(sv.smooth.grid(), sv.smooth.vp.data, o);
    };
    const auto a = cache.domain(key, make), b = cache.domain(key, make);
    CHECK(a == b);
    CHECK(built == 1);
    BatchKey other = key;
    std::get<2>(other) += 1;
    CHECK(cache.domain(other, make) != a);
    CHECK(built == 2);
    // Propagators: kept for one batch size; another size gets none (the batch makes them).
    WindowCache::Propagators p;
    p.members = 2;
    p.source = make_cpu_propagator(*a, Precision::Single, 2);
    Propagator* const kept = p.source.get();
    cache.give_back(std::move(p));
    CHECK(cache.take(2).source.get() == kept);
    CHECK_FALSE(cache.take(2).source);  // taken: not kept any more
    // Shots migrated one batch after another through one cache (the second shot reuses
    // the first's domain and propagators, with their snapshot slots, band history or
    // states) equal each shot alone, bit for bit: nothing of a shot stays in them.
    for (SourceStorage storage : {SourceStorage::Snapshots, SourceStorage::Boundary, SourceStorage::Checkpoints})
        for (ImagingCondition c : {ImagingCondition::CrossCorrelation, ImagingCondition::InverseScattering,
                                   ImagingCondition::BornAdjoint}) {
            MigrationOptions opt = sv.opt;
            opt.storage = storage;
            opt.condition = c;
            // Checkpoints: 8 states of one shot (see the batch test above), so it recomputes.
            if (storage == SourceStorage::Checkpoints) opt.memory_budget = 8.5 * 2 * 4.0 * 128 * 69;
            WindowCache job;
            for (int s = 0; s < 2; ++s) {
                INFO("storage " << storage_name(storage) << ", condition " << int(c) << ", shot " << s);
                const ShotMigration cached = std::move(migrate_shots(sv.smooth, {&sv.shots[s]}, sv.w, opt, &job).front());
                const ShotMigration alone = migrate_shot(sv.smooth, sv.shots[s], sv.w, opt);
                CHECK(cached.image == alone.image);
                CHECK(cached.illumination == alone.illumination);
                CHECK(cached.storage == alone.storage);
            }
        }
}
