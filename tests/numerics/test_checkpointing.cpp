// Migration under a memory budget far below its snapshots: the source wavefield kept
// by checkpoints (memory_plan.h, checkpoint_schedule.h) gives the image of the
// unconstrained run bit for bit, for every imaging condition in 2D and 3D, and the
// Born dot test still holds.
#include <cmath>
#include <random>

#include "born_dot_test.h"
#include "migration_fixture.h"
#include "parallel/slab_layout.h"
#include "pipeline/checkpoint_schedule.h"
#include "pipeline/memory_plan.h"
#include "support/catch.hpp"
#include "support/test_data.h"

using namespace rtm;
using namespace rtm::test;

namespace {

// Source steps of a checkpointed shot: Griewank's count for M states and c checkpoints,
// `every` time steps per state, and the e steps to the first state each time it is
// rebuilt from rest (at the start and at every restore of slot 0).
long expected_source_steps(int M, int c, int every, int e) {
    long rebuilds = 0;
    for (const auto& a : checkpoint_schedule(M, c)) rebuilds += a.kind == CheckpointAction::Restore && a.slot == 0;
    return e * (1 + rebuilds) + long(every) * checkpoint_forward_steps(M, c);
}

const char* condition_name(ImagingCondition c) {
    return c == ImagingCondition::CrossCorrelation    ? "cross-correlation"
           : c == ImagingCondition::InverseScattering ? "inverse scattering"
                                                      : "born-adjoint";
}

// One checkpoint of a migration of d in m: the plan's state (memory_plan.h) on the
// shot's damping domain, which must be what the propagator's state_bytes() holds.
double state_bytes(const Model& m, const ShotGather& d, const Wavelet& w, const MigrationOptions& opt) {
    PropagationOptions p = opt.propagation;
    p.boundary = Boundary::Damping;
    const TimeAxis ta = time_axis(m, d, w, p);
    const ShotWindow win = shot_window(m, d, opt.aperture);
    const Domain dom(win.grid, win.vp, domain_options(p, ta.dt, w));
    const MemoryNeeds n = memory_needs(dom, ta.nt, 1, 1, 0, p.precision, false, ImagingCondition::CrossCorrelation);
    const double bytes = n.padded_points * n.value_bytes * n.state_arrays;
    CHECK(make_cpu_propagator(dom, p.precision)->state_bytes() == std::size_t(bytes));
    return bytes;
}

// A model with structure, data scattered by two points of dm (Born), and migrations of
// it with every condition, imaging every step (the most snapshots): snapshots
// (unconstrained) against Auto under a budget of two stored states, far below the snapshots
// (10 damping cells in 2D, 5 in 3D, keep the padded grid, which a state holds twice,
// near the window; only the equality of the images counts here, not the absorption).
void check_checkpointed_migration(int ndim) {
    const bool is3d = ndim == 3;
    const Model m = is3d ? make_model(25, 23, 21, 20, [](double x, double y, double z) {
        return 1800 + 0.6 * z + 80 * std::sin(x / 90) + 50 * std::cos(y / 70);
    })
                         : make_model(81, 1, 51, 10, [](double x, double, double z) { return 1800 + z + 40 * std::sin(x / 70); });
    Volume dm(m.grid());
    if (is3d) {
        dm.at(12, 11, 14) = 1e-8f;
        dm.at(7, 15, 8) = -1e-8f;
    } else {
        dm.at(40, 0, 30) = 1e-8f;
        dm.at(25, 0, 20) = -1e-8f;
    }
    const Wavelet w = ricker_wavelet(is3d ? 8 : 15);
    MigrationOptions opt;
    opt.aperture = -1;
    opt.propagation.pml_cells = is3d ? 5 : 10;
    opt.image_every = 1;
    // (3D: a 0.5 s record, so that the snapshots are many states: a state's padded rows
    // of 32 values hold 64 values for this small grid's 25 + 10 columns.)
    const ShotGather geo = is3d ? shot_geometry(m, 243.7, 221.1, 40, 0.5, 0.002) : shot_geometry(m, 400, 0, 10, 0.3, 0.002);
    const ShotGather d = born_shot(m, dm, geo, w, opt);
    const double state = state_bytes(m, d, w, opt);
    const int c = 2;
    for (auto cond : {ImagingCondition::CrossCorrelation, ImagingCondition::InverseScattering, ImagingCondition::BornAdjoint}) {
        opt.condition = cond;
        opt.storage = SourceStorage::Snapshots;
        opt.memory_budget = 0;
        const ShotMigration snap = migrate_shot(m, d, w, opt);
        opt.storage = SourceStorage::Auto;
        opt.memory_budget = c * state;
        const ShotMigration ck = migrate_shot(m, d, w, opt);
        const int M = cond == ImagingCondition::BornAdjoint ? ck.steps - 1 : ck.steps;  // imaging states
        const long e = cond == ImagingCondition::InverseScattering ? 1 : 0;
        INFO(ndim << "D, " << condition_name(cond) << ": " << M << " imaging states, one checkpoint " << state / 1e3
                  << " kB, snapshots " << snap.bytes_kept / 1e3 << " kB; checkpointed with " << ck.checkpoints
                  << " states (" << ck.bytes_kept / 1e3 << " kB): " << ck.source_steps << " source steps for "
                  << ck.steps << ", recomputation factor " << ck.recompute);
        REQUIRE(snap.storage == SourceStorage::Snapshots);
        REQUIRE(ck.storage == SourceStorage::Checkpoints);
        CHECK(snap.bytes_kept > 6 * ck.bytes_kept);
        CHECK(ck.checkpoints == c + 1);  // c stored, the first rebuilt from rest
        CHECK(ck.bytes_kept == c * state);
        CHECK(ck.source_steps == expected_source_steps(M, c + 1, 1, int(e)));
        CHECK(ck.recompute > 1);
        // States are kept in the propagation's precision and the steps repeat exactly,
        // so the source wavefield at every imaging step is the snapshot's, bit for bit.
        CHECK(ck.image == snap.image);
        CHECK(ck.illumination == snap.illumination);
        double peak = 0;
        for (double x : snap.image) peak = std::max(peak, std::abs(x));
        CHECK(peak > 0);
    }
}

}  // namespace

TEST_CASE("checkpointed migration under a budget of two states gives the snapshots' image bit for bit (2D, every condition)") {
    check_checkpointed_migration(2);
}

TEST_CASE("checkpointed migration under a budget of two states gives the snapshots' image bit for bit (3D, every condition)") {
    check_checkpointed_migration(3);
}

TEST_CASE("Born modelling and checkpointed migration are adjoint (dot-product test, three states stored)") {
    PropagationOptions p;
    p.precision = Precision::Double;
    p.dt = 0.001;
    // Three states of the 2D dot test's domain (61 x 41 nodes, 15 damping cells and the
    // stencil's halo of 4 on every side: 99 x 79 points, rows padded to a multiple of 32
    // (kernels::Box::sy): 128 x 79, u and u_prev in double).
    const double state = 128.0 * 79 * 2 * 8;
    const DotTest ck = born_dot_test(2, 0.004, p, SourceStorage::Checkpoints, false, 3 * state);
    const DotTest snap = born_dot_test(2, 0.004, p, SourceStorage::Snapshots);
    WARN("dot test with three states stored: mismatch " << ck.error() << " (snapshots " << snap.error() << ")");
    // The bound of test_adjoint.cpp for double precision (the fp32 storage of F dm's
    // traces, 2^-24 relative): the checkpointed F^T d is the snapshots' bit for bit.
    CHECK(ck.error() < 1e-7);
    CHECK(ck.rhs == snap.rhs);
}

TEST_CASE("a budget below one checkpoint is refused naming migration.memory-budget and each way's size") {
    const Model m = make_model(41, 1, 31, 10, [](double, double, double) { return 2000.0; });
    const Wavelet w = ricker_wavelet(15);
    MigrationOptions opt;
    opt.aperture = -1;
    opt.memory_budget = 1e4;  // 10 kB: one state of the 89 x 79 padded points in fp32 is 56 kB
    const ShotGather geo = shot_geometry(m, 200, 0, 10, 0.3, 0.002);
    ShotGather d = geo;
    d.data.assign(geo.ntraces() * geo.nt, 0.f);
    const std::string err = error_of([&] { migrate_shot(m, d, w, opt); });
    INFO(err);
    CHECK(contains(err, "migration.memory-budget"));
    CHECK(contains(err, "one checkpoint"));
    CHECK(contains(err, "snapshots would take"));
}

TEST_CASE("the memory plan takes snapshots, then the band, then checkpoints as the budget shrinks") {
    MemoryNeeds n;
    n.window_points = 1000 * 500;   // 2D window
    n.padded_points = 1048 * 548;
    n.band_points = 2 * 4 * 1500;   // R = 4 nodes deep along the edge (approximately)
    n.steps = 4000;
    n.states = 400;                 // k = 10
    n.state_every = 10;
    n.value_bytes = 4;
    // Snapshots 400 x 0.5 M x 4 B = 0.8 GB; band 4001 x 12000 x 4 B = 0.19 GB; one
    // state 2 x 0.574 M x 4 B = 4.59 MB.
    const MemoryPlan a = plan_memory(n, SourceStorage::Auto, 1e9, "shot 1");
    CHECK(a.storage == SourceStorage::Snapshots);
    CHECK(a.bytes_kept == 400.0 * 500000 * 4);
    CHECK(a.recompute == 1);
    const MemoryPlan b = plan_memory(n, SourceStorage::Auto, 0.5e9, "shot 1");
    CHECK(b.storage == SourceStorage::Boundary);
    CHECK(b.bytes_kept == 4001.0 * 12000 * 4);
    CHECK(b.forward_steps == 2 * 4000 - 1);
    const MemoryPlan c = plan_memory(n, SourceStorage::Auto, 0.1e9, "shot 1");
    CHECK(c.storage == SourceStorage::Checkpoints);
    CHECK(c.state_bytes == 2.0 * 1048 * 548 * 4);
    CHECK(c.checkpoints == int(0.1e9 / c.state_bytes) + 1);  // 21 stored and the first, rebuilt
    CHECK(c.bytes_kept == (c.checkpoints - 1) * c.state_bytes);
    CHECK(c.forward_steps == 10 * checkpoint_forward_steps(400, c.checkpoints));
    CHECK(c.recompute == double(c.forward_steps) / 4000);
    // Inverse scattering's states start one step in: rebuilding the first costs a step
    // each time.
    n.first_state = 1;
    const MemoryPlan c1 = plan_memory(n, SourceStorage::Auto, 0.1e9, "shot 1");
    CHECK(c1.forward_steps == expected_source_steps(400, c1.checkpoints, 10, 1));
    n.first_state = 0;
    // A generous budget with checkpoints asked for: one per state, one sweep.
    const MemoryPlan d = plan_memory(n, SourceStorage::Checkpoints, 1e12, "shot 1");
    CHECK(d.checkpoints == 400);
    CHECK(d.forward_steps == 10 * 399);
    // Snapshots asked for over the budget: refused, naming the option and the sizes.
    const std::string err = error_of([&] { plan_memory(n, SourceStorage::Snapshots, 0.1e9, "shot 1"); });
    CHECK(contains(err, "migration.memory-budget"));
    CHECK(contains(err, "shot 1"));
    CHECK(contains(err, "snapshots would take 0.8 GB"));
}

TEST_CASE("a migrated shot's time in propagation steps is positive and within its wall time, and its point updates count every source and receiver step") {
    const Model m = make_model(61, 1, 41, 10, [](double, double, double z) { return 1800 + z; });
    const Wavelet w = ricker_wavelet(15);
    MigrationOptions opt;
    opt.aperture = -1;
    const ShotGather geo = shot_geometry(m, 300, 0, 20, 0.3, 0.002);
    ShotGather d = geo;
    d.data.assign(geo.ntraces() * geo.nt, 1.f);
    for (auto storage : {SourceStorage::Snapshots, SourceStorage::Boundary}) {
        opt.storage = storage;
        const ShotMigration r = migrate_shot(m, d, w, opt);
        INFO(storage_name(storage) << ": " << r.seconds << " s, " << r.busy_seconds << " s in steps, " << r.source_steps
                                   << " source steps for " << r.steps);
        CHECK(r.busy_seconds > 0);
        CHECK(r.busy_seconds <= r.seconds);
        CHECK(r.source_steps == (storage == SourceStorage::Snapshots ? r.steps : 2 * r.steps - 1));
        // Computed points: the window and 20 damping cells on every side (the default).
        CHECK(r.point_updates == double(61 + 40) * (41 + 40) * (r.source_steps + r.steps));
    }
}

TEST_CASE("a rank of a z-slab group plans for its slab's share: padded planes with halos, window planes, band faces") {
    // A window of 100 planes of 1000 nodes between 20-plane layers (140 planes, 148 with
    // the 2 R halo planes); one rank holds all of it.
    MemoryNeeds whole;
    whole.window_points = 100 * 1000.0;
    whole.padded_points = 148 * 1200.0;
    whole.band_points = 2 * 4 * 1000.0 + 92 * 320.0;  // top and bottom faces (R = 4 planes) and the sides
    CHECK(slab_share(whole, 100, 1000, 20, 20, false, 4, 1).padded_points == whole.padded_points);
    // Two slabs: the largest holds at most half the planes plus one layer plane's work
    // imbalance, its 2 R halo planes, and of the band its share of the sides and one face.
    const MemoryNeeds half = slab_share(whole, 100, 1000, 20, 20, false, 4, 2);
    int largest = 0, window_planes = 0;
    for (const auto& s : parallel::slab_layout(140, 20, 20, false, 2)) {
        largest = std::max(largest, s.planes());
        window_planes = std::max(window_planes, std::min(s.z1, 120) - std::max(s.z0, 20));
    }
    CHECK(half.padded_points == Approx(whole.padded_points * (largest + 8) / 148.0));
    CHECK(half.window_points == window_planes * 1000.0);
    CHECK(half.window_points < whole.window_points);
    CHECK(half.band_points <= whole.band_points * window_planes / 100.0 + 4 * 1000.0);
    CHECK(half.band_points < whole.band_points);
    // The rest of the needs (steps, states, precision) are the shot's.
    CHECK(half.states == whole.states);
}
