// One shot over several GPU ranks in z-slabs (propagation/slab_propagator.h,
// propagation/cuda_slab_exchange.h): `mpirun -np G rtm model|migrate
// --parallel.ranks-per-shot G --propagation.device gpu` against one GPU rank, byte for
// byte (the plane copies themselves: test_propagator.cpp). Ranks take GPU
// node-rank mod the GPUs: on a one-GPU machine they share it (CUDA IPC within one device),
// on two, ranks 0 and 1 of a group talk over NVLink (peer copies). Exact equality holds
// by construction, not by tolerance: every point takes the same kernel code path on its
// slab as in the whole box (Domain::cpml, kernels/step_planes.h), sources add their taps
// in the same order and each receiver is sampled by one slab; any difference is a bug.
#include <filesystem>
#include <string>

#include "app/run_rtm.h"
#include "gpu_test.h"
#include "parallel/slab_layout.h"
#include "support/test_data.h"

using namespace rtm;
using namespace rtm::test;
namespace fs = std::filesystem;

#ifndef RTM_MPIEXEC
TEST_CASE("GPU z-slabs under mpirun (this build has no MPI)", "[gpu]") { skip("rtm was built without MPI"); }
#else
namespace {

const std::string kVp = (source_dir() / "velocity_models" / "layers2d_vp.segy").string();
const std::string kSmooth = (source_dir() / "velocity_models" / "layers2d_vp_smooth.segy").string();
const std::string kDome = (source_dir() / "velocity_models" / "dome3d_vp.segy").string();


// Depth (m) of the first plane of slab k of G (model nz samples at dz, pml cells).
double face_depth(int nz, double dz, int pml, bool free_surface, int G, int k) {
    const int lo = free_surface ? 0 : pml;
    return (parallel::slab_layout(nz + lo + pml, lo, pml, free_surface, G)[std::size_t(k)].z0 - lo) * dz;
}

// layers2d: 3 shots, the source half a cell above the face `source_at`, the receivers a
// third of a cell below `receivers_at` (their stencils straddle the faces).
std::string model_2d(double source_at, double receivers_at, const std::string& extra, int batch = 1,
                     const std::string& seconds = "0.5") {
    return "model --model.vp " + kVp + " --acquisition.source-x0 800 --acquisition.source-dx 1200 --acquisition.source-nx 3"
           " --acquisition.source-depth " + std::to_string(source_at - 5) +
           " --acquisition.receiver-x0 0 --acquisition.receiver-dx 25 --acquisition.receiver-nx 161"
           " --acquisition.receiver-depth " + std::to_string(receivers_at + 10.0 / 3) +
           " --acquisition.record-length " + seconds + " --acquisition.record-dt 0.004 --wavelet.ricker-f0 10"
           " --propagation.device gpu --propagation.batch " + std::to_string(batch) + " " + extra;
}

// dome3d (81 x 61 x 61 at 25 m), 8 absorbing cells, one shot on the face of 2 slabs.
std::string model_3d() {
    const double face = face_depth(61, 25, 8, false, 2, 1);
    return "model --model.vp " + kDome + " --propagation.pml 8" +
           " --acquisition.source-x0 1000 --acquisition.source-y0 750 --acquisition.source-depth " +
           std::to_string(face - 12.5) +
           " --acquisition.receiver-x0 0 --acquisition.receiver-dx 250 --acquisition.receiver-nx 9"
           " --acquisition.receiver-y0 250 --acquisition.receiver-dy 500 --acquisition.receiver-ny 3"
           " --acquisition.receiver-depth " + std::to_string(face + 8) +
           " --acquisition.record-length 0.3 --wavelet.ricker-f0 8 --propagation.device gpu";
}

// One GPU rank, then `ranks` ranks in groups of `per_shot` (env: variables for mpirun,
// one_env for the one rank); both outputs (`output` + dir/one, dir/many) must be the
// same bytes.
void check_same(const std::string& args, int ranks, int per_shot, const fs::path& dir, const std::string& output,
                const std::vector<std::string>& files, const std::string& env = "", const std::string& says = "",
                const std::string& one_env = "") {
    const Result one = run_rtm(args + " " + output + " " + (dir / "one").string(), one_env);
    INFO(one.output);
    REQUIRE(one.status == 0);
    const Result many = mpi_rtm(ranks, args + " --parallel.ranks-per-shot " + std::to_string(per_shot) + " " + output +
                                           " " + (dir / "many").string(), env);
    INFO(many.output);
    REQUIRE(many.status == 0);
    CHECK(test::contains(many.output, "over the " + std::to_string(per_shot) + " ranks of a shot group"));
    if (!says.empty()) CHECK(test::contains(many.output, says));
    for (const auto& f : files) {
        INFO(f);
        const auto a = bytes_of(f.empty() ? dir / "one" : dir / "one" / f), b = bytes_of(f.empty() ? dir / "many" : dir / "many" / f);
        CHECK(a.size() > 3600);
        CHECK(a == b);
    }
}

const std::string kInStep = "device to device (CUDA IPC)";

}  // namespace

TEST_CASE("GPU z-slabs, 2 ranks: rtm model's gathers are one GPU's, byte for byte (free surface, C-PML, exchange in the step)", "[gpu]") {
    if (!gpu_or_skip()) return;
    const double face = face_depth(151, 10, 20, true, 2, 1);
    check_same(model_2d(face, face, "--propagation.free-surface true"), 2, 2, scratch("gpu-slabs-model2"),
               "--output.shots", {""}, "", kInStep);
}

TEST_CASE("GPU z-slabs, 3 ranks: rtm model's gathers are one GPU's, byte for byte (C-PML all round, device and host exchange)", "[gpu]") {
    if (!gpu_or_skip()) return;
    const auto args = model_2d(face_depth(151, 10, 20, false, 3, 1), face_depth(151, 10, 20, false, 3, 2), "");
    check_same(args, 3, 3, scratch("gpu-slabs-model3"), "--output.shots", {""}, "", kInStep);
    // The host-staged exchange (MPI), as across nodes: the same bytes.
    check_same(args, 3, 3, scratch("gpu-slabs-model3-host"), "--output.shots", {""}, "RTM_SLAB_EXCHANGE=host ",
               "through the host and MPI (RTM_SLAB_EXCHANGE=host)");
    // Batches of 2 shots: a batch exchanges through the host.
    const auto batched = model_2d(face_depth(151, 10, 20, false, 2, 1), face_depth(151, 10, 20, false, 2, 1), "", 2);
    check_same(batched, 2, 2, scratch("gpu-slabs-model-batch"), "--output.shots", {""}, "",
               "a batch of 2 shots");
}

TEST_CASE("GPU z-slabs, 2 ranks: rtm model of a 3D model is one GPU's, byte for byte", "[gpu]") {
    if (!gpu_or_skip()) return;
    check_same(model_3d(), 2, 2, scratch("gpu-slabs-model3d"), "--output.shots", {""}, "", kInStep);
}

// Anisotropic slabs on GPU ranks: p and q exchanged through the host, and a tilted
// model's pass-1 z fluxes between the passes, so a slab steps with the two-pass kernel
// (SWiC has no pass between): the same sums as one GPU's two-pass step
// (RTM_TTI_KERNEL=two-pass), so byte for byte again. VTI has one pass and no choice.
namespace {
const std::string kTti = " --model.epsilon 0.2 --model.delta 0.1 --model.theta 30";
const std::string kTwoPass = "RTM_TTI_KERNEL=two-pass ";
}  // namespace

TEST_CASE("GPU z-slabs: TTI and VTI gathers are one GPU's, byte for byte (2D TTI over 2 and 3 ranks, VTI and TTI "
          "with a free surface, 3D TTI with an azimuth)", "[gpu]") {
    if (!gpu_or_skip()) return;
    const double face = face_depth(151, 10, 20, false, 2, 1);
    check_same(model_2d(face, face, kTti), 2, 2, scratch("gpu-slabs-tti2"), "--output.shots", {""}, "",
               "cuda TTI two-pass", kTwoPass);
    check_same(model_2d(face_depth(151, 10, 20, false, 3, 1), face_depth(151, 10, 20, false, 3, 2), kTti, 2), 3, 3,
               scratch("gpu-slabs-tti3"), "--output.shots", {""}, "", "cuda TTI two-pass", kTwoPass);
    const double fs_face = face_depth(151, 10, 20, true, 2, 1);
    check_same(model_2d(fs_face, fs_face, "--model.epsilon 0.2 --model.delta 0.1 --propagation.free-surface true"), 2, 2,
               scratch("gpu-slabs-vti"), "--output.shots", {""}, "", "cuda VTI");
    // TTI under a free surface (the top slab mirrors pass 1's z fluxes): the source 45 m below
    // it, so that the direct wave and its ghost reach the receivers on the face in 0.8 s.
    check_same(model_2d(50, fs_face, kTti + " --propagation.free-surface true", 1, "0.8"), 2, 2,
               scratch("gpu-slabs-tti-fs"), "--output.shots", {""}, "", "cuda TTI two-pass", kTwoPass);
    check_same(model_3d() + " --model.epsilon 0.15 --model.delta 0.05 --model.theta 25 --model.phi 40", 2, 2,
               scratch("gpu-slabs-tti3d"), "--output.shots", {""}, "", "cuda TTI two-pass", kTwoPass);
}

namespace {

// Three 2D shots modelled once (on the GPU), migrated by one GPU rank and by G.
void check_migration(const std::string& name, int ranks, const std::string& options, const std::string& one_env = "") {
    static const fs::path shots = [] {
        const auto dir = scratch("gpu-slabs-shots");
        const double face = face_depth(151, 10, 20, false, 2, 1);
        const auto r = run_rtm(model_2d(face, face, "--output.shots " + (dir / "shots.sgy").string()));
        INFO(r.output);
        REQUIRE(r.status == 0);
        return dir / "shots.sgy";
    }();
    const std::string args = "migrate --model.vp " + kSmooth + " --data.shots " + shots.string() +
                             " --wavelet.ricker-f0 10 --migration.aperture 600 --propagation.device gpu"
                             " --propagation.batch 1 " + options;
    check_same(args, ranks, ranks, scratch("gpu-slabs-migrate-" + name), "--output.job", {"image.sgy", "illumination.sgy"},
               "", "", one_env);
}

}  // namespace

TEST_CASE("GPU z-slabs, 2 ranks: a TTI migration's image is one GPU's, byte for byte (inverse scattering, boundary band)",
          "[gpu]") {
    if (!gpu_or_skip()) return;
    check_migration("tti-is", 2, kTti + " --migration.condition inverse-scattering --migration.storage boundary", kTwoPass);
}

TEST_CASE("GPU z-slabs, 2 ranks: rtm migrate's image is one GPU's, byte for byte (cross-correlation, snapshots)", "[gpu]") {
    if (!gpu_or_skip()) return;
    check_migration("cc", 2, "--migration.storage snapshots");
}

TEST_CASE("GPU z-slabs, 3 ranks: rtm migrate's image is one GPU's, byte for byte (inverse scattering, boundary band)", "[gpu]") {
    if (!gpu_or_skip()) return;
    check_migration("is", 3, "--migration.condition inverse-scattering --migration.storage boundary");
}

TEST_CASE("GPU z-slabs, 2 ranks: rtm migrate's image is one GPU's, byte for byte (born-adjoint, checkpoints)", "[gpu]") {
    if (!gpu_or_skip()) return;
    check_migration("ba", 2, "--migration.condition born-adjoint --migration.storage checkpoints --migration.memory-budget 0.005");
}

// G = 4: on a 2-GPU machine two ranks share each GPU (node-rank mod GPUs), so the
// group's three faces are crossed by peer copies between the GPUs; the decomposition's
// arithmetic is that of 4 GPUs.
TEST_CASE("GPU z-slabs, 4 ranks: rtm model's gathers and rtm migrate's image are one GPU's, byte for byte (C-PML, snapshots)", "[gpu]") {
    if (!gpu_or_skip()) return;
    const auto args = model_2d(face_depth(151, 10, 20, false, 4, 1), face_depth(151, 10, 20, false, 4, 3), "");
    check_same(args, 4, 4, scratch("gpu-slabs-model4"), "--output.shots", {""}, "", kInStep);
    check_migration("cc4", 4, "--migration.storage snapshots");
}

TEST_CASE("GPU z-slabs, 2 ranks: rtm migrate of a 3D shot is one GPU's image, byte for byte (free surface, cross-correlation, boundary band)", "[gpu]") {
    if (!gpu_or_skip()) return;
    const auto dir = scratch("gpu-slabs-migrate-3d");
    const auto shot = run_rtm(model_3d() + " --output.shots " + (dir / "shot.sgy").string());
    INFO(shot.output);
    REQUIRE(shot.status == 0);
    const std::string args = "migrate --model.vp " + kDome + " --data.shots " + (dir / "shot.sgy").string() +
                             " --wavelet.ricker-f0 8 --migration.aperture 300 --propagation.pml 8 --propagation.device gpu"
                             " --propagation.free-surface true"
                             " --migration.condition cross-correlation --migration.storage boundary";
    check_same(args, 2, 2, dir, "--output.job", {"image.sgy", "illumination.sgy"});
}
#endif
