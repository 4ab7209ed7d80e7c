// Batched migration on the GPU (CudaPropagator with several members: the window
// kernels' batch, the band's indices of every member) against shot-by-shot on the
// GPU, bit for bit: the same checks as test_batch.cpp's on the CPU
// (batch_migration_test.h). Each member's arithmetic is the same kernel code on the
// member's own arrays, so nothing may differ by even one rounding.
#include "batch_migration_test.h"
#include "gpu_test.h"

using namespace rtm;
using namespace rtm::test;

TEST_CASE("a batch's migration operations on the GPU act on each member exactly as on that member alone", "[gpu]") {
    if (!gpu_or_skip()) return;
    check_batch_ops([](const Domain& d, Precision p, int batch) { return make_cuda_propagator(d, p, batch); });
}

TEST_CASE("migrate_shots on the GPU: each shot of a batch gets its image alone bit for bit, every storage and condition",
          "[gpu]") {
    if (!gpu_or_skip()) return;
    const BatchSurvey sv(2);
    for (SourceStorage st : {SourceStorage::Snapshots, SourceStorage::Boundary, SourceStorage::Checkpoints})
        for (ImagingCondition c : {ImagingCondition::CrossCorrelation, ImagingCondition::InverseScattering,
                                   ImagingCondition::BornAdjoint}) {
            MigrationOptions opt = sv.opt;
            opt.propagation.backend.gpu = true;
            opt.storage = st;
            opt.condition = c;
            // As on the CPU (test_batch.cpp): about 8 states of one shot, 2 of the batch.
            if (st == SourceStorage::Checkpoints) opt.memory_budget = 8.5 * 2 * 4.0 * 128 * 69;
            INFO(storage_name(st) << ", condition " << int(c));
            const auto r = check_batch_equals_alone(sv, opt, 3);
            if (st == SourceStorage::Checkpoints) CHECK(r[0].recompute > 1.5);
        }
    // 3D, bfloat16 snapshots.
    const BatchSurvey sv3(3);
    MigrationOptions opt = sv3.opt;
    opt.propagation.backend.gpu = true;
    opt.storage = SourceStorage::Snapshots;
    opt.bf16_snapshots = true;
    check_batch_equals_alone(sv3, opt, 3);
}

TEST_CASE("migrate_shots on the GPU with snapshots in pinned host memory gives each shot's image alone", "[gpu]") {
    if (!gpu_or_skip()) return;
    // RTM_KEEP_HEADROOM_GB above the GPU's free memory puts every snapshot slot and the
    // band history in pinned host memory (cuda_propagator.cu): the staged copies then
    // move whole batches.
    const Headroom pinned("1e9");
    const BatchSurvey sv(2);
    MigrationOptions opt = sv.opt;
    opt.propagation.backend.gpu = true;
    opt.storage = SourceStorage::Snapshots;
    check_batch_equals_alone(sv, opt, 3);
    opt.storage = SourceStorage::Boundary;
    check_batch_equals_alone(sv, opt, 3);
}
