// Checkpointing migration on the GPU: the checkpointed image is the GPU snapshots'
// image bit for bit (every condition, 2D and 3D, states in device memory and in pinned
// host memory), and the propagation time the backend reports lies within the shot's
// wall time.
#include <cstdlib>

#include "gpu_test.h"
#include "migration_fixture.h"
#include "pipeline/checkpoint_schedule.h"

using namespace rtm;
using namespace rtm::test;

namespace {

void check_gpu_checkpointing(int ndim, bool host) {
    const bool is3d = ndim == 3;
    const Model m = is3d ? make_model(25, 23, 21, 20, [](double x, double y, double z) {
        return 1800 + 0.6 * z + 80 * std::sin(x / 90) + 50 * std::cos(y / 70);
    })
                         : make_model(81, 1, 51, 10, [](double x, double, double z) { return 1800 + z + 40 * std::sin(x / 70); });
    Volume dm(m.grid());
    if (is3d) dm.at(12, 11, 14) = 1e-8f;
    else dm.at(40, 0, 30) = 1e-8f;
    const Wavelet w = ricker_wavelet(is3d ? 8 : 15);
    MigrationOptions opt;
    opt.aperture = -1;
    opt.propagation.pml_cells = is3d ? 5 : 10;
    opt.image_every = 1;
    const ShotGather geo = is3d ? shot_geometry(m, 243.7, 221.1, 40, 0.3, 0.002) : shot_geometry(m, 400, 0, 10, 0.3, 0.002);
    const ShotGather d = born_shot(m, dm, geo, w, opt);  // on the CPU
    opt.propagation.backend.gpu = true;
    // One state: u and u_prev on the padded grid in fp32 (memory_plan.h), as the CUDA
    // propagator holds it.
    PropagationOptions p = opt.propagation;
    p.boundary = Boundary::Damping;
    const TimeAxis ta = time_axis(m, d, w, p);
    const ShotWindow win = shot_window(m, d, opt.aperture);
    const Domain dom(win.grid, win.vp, domain_options(p, ta.dt, w));
    const MemoryNeeds n = memory_needs(dom, ta.nt, 1, 1, 0, p.precision, false, ImagingCondition::CrossCorrelation);
    const double state = n.padded_points * n.value_bytes * n.state_arrays;
    {
        auto prop = make_cuda_propagator(dom, p.precision);
        CHECK(prop->state_bytes() == std::size_t(state));
        Headroom hr(host ? "1e9" : nullptr);
        prop->reserve_states(2);
        CHECK(cuda_states_where(*prop) == (host ? 2 : 1));
    }
    Headroom hr(host ? "1e9" : nullptr);
    for (auto cond : {ImagingCondition::CrossCorrelation, ImagingCondition::InverseScattering, ImagingCondition::BornAdjoint}) {
        opt.condition = cond;
        opt.storage = SourceStorage::Snapshots;
        opt.memory_budget = 0;
        const ShotMigration snap = migrate_shot(m, d, w, opt);
        opt.storage = SourceStorage::Auto;
        opt.memory_budget = 2 * state;
        const ShotMigration ck = migrate_shot(m, d, w, opt);
        const int M = cond == ImagingCondition::BornAdjoint ? ck.steps - 1 : ck.steps;
        const long e = cond == ImagingCondition::InverseScattering ? 1 : 0;
        INFO(ndim << "D, condition " << int(cond) << (host ? ", states in pinned host memory" : ", states in device memory")
                  << ": snapshots " << snap.bytes_kept / 1e3 << " kB in " << snap.seconds << " s; " << ck.checkpoints
                  << " checkpoints " << ck.bytes_kept / 1e3 << " kB, recomputation factor " << ck.recompute << ", "
                  << ck.seconds << " s (" << ck.busy_seconds << " s in steps)");
        REQUIRE(ck.storage == SourceStorage::Checkpoints);
        CHECK(ck.checkpoints == 3);  // 2 stored, the first rebuilt from rest
        long rebuilds = 0;
        for (const auto& a : checkpoint_schedule(M, 3)) rebuilds += a.kind == CheckpointAction::Restore && a.slot == 0;
        CHECK(ck.source_steps == e * (1 + rebuilds) + checkpoint_forward_steps(M, 3));
        // States are copied exactly and the GPU's steps are deterministic
        // (test_determinism.cpp): the source wavefield at every imaging step is the
        // snapshot's, bit for bit, and so is every image.
        CHECK(ck.image == snap.image);
        CHECK(ck.illumination == snap.illumination);
        // The device time between the events around each step lies within the wall time.
        CHECK(ck.busy_seconds > 0);
        CHECK(ck.busy_seconds <= ck.seconds);
    }
}

}  // namespace

TEST_CASE("checkpointed migration on the GPU gives the GPU snapshots' image bit for bit (every condition, states on "
          "the device and in pinned host memory)",
          "[gpu]") {
    if (!gpu_or_skip()) return;
    for (int ndim : {2, 3})
        for (bool host : {false, true}) check_gpu_checkpointing(ndim, host);
}
