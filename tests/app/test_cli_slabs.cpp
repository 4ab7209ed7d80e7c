// `mpirun -np N rtm model|migrate --parallel.ranks-per-shot G`: each shot propagated by
// a group of G CPU ranks, each a z-slab of its grid (propagation/slab_propagator.h),
// gives the files of one process, bit for bit: the slabs compute every point with the
// same arithmetic as one box (faces R planes from the layers, the C-PML code path kept,
// sources injected and receivers sampled tap by tap in the same order), so any
// difference is a bug, not rounding. Sources and receivers sit on a slab face, so their
// stencils straddle it. CPU ranks with one thread each, oversubscribed on small machines.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

#include "io/model_io.h"
#include "io/shot_io.h"
#include "parallel/slab_layout.h"
#include "run_rtm.h"
#include "support/catch.hpp"
#include "support/test_data.h"

using namespace rtm;
using namespace rtm::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

#ifndef RTM_MPIEXEC
TEST_CASE("mpirun runs of rtm in z-slabs (this build has no MPI)") { skip("rtm was built without MPI: no mpirun runs to test"); }
#else

namespace {

const std::string kVp = (source_dir() / "velocity_models" / "layers2d_vp.segy").string();

// A normal-incidence reflectivity on kVp's grid: the layers' own, (v2 - v1) / (v2 + v1)
// at each node above a change, and a flat 0.1 at 100 m, whose echo comes back within a
// short record.
const std::string& reflectivity() {
    static const std::string path = [] {
        Volume r = io::read_volume(kVp);
        const Volume v = r;
        for (int iz = 0; iz < r.grid.nz; ++iz)
            for (int ix = 0; ix < r.grid.nx; ++ix) {
                const double a = v.at(ix, 0, iz), b = iz + 1 < r.grid.nz ? v.at(ix, 0, iz + 1) : a;
                r.at(ix, 0, iz) = iz == 10 ? 0.1f : float((b - a) / (b + a));
            }
        const std::string p = (scratch("cli-slabs-reflectivity") / "r.sgy").string();
        io::write_volume(p, r);
        return p;
    }();
    return path;
}
const std::string kSmooth = (source_dir() / "velocity_models" / "layers2d_vp_smooth.segy").string();
const std::string kDome = (source_dir() / "velocity_models" / "dome3d_vp.segy").string();
constexpr int kPml = 20;  // propagation.pml's default


// Depth (m) of the first plane of slab `k` of G for a model of `nz` depth samples at dz.
double face_depth(int nz, double dz, int pml, bool free_surface, int G, int k) {
    const int lo = free_surface ? 0 : pml;
    return (parallel::slab_layout(nz + lo + pml, lo, pml, free_surface, G)[std::size_t(k)].z0 - lo) * dz;
}

// layers2d (151 depth samples of 10 m): `shots` shots, the source half a cell above the
// face `source_at` and the receivers a third of a cell below the face `receivers_at`.
std::string model_2d(double source_at, double receivers_at, const std::string& extra, int shots = 3,
                     const std::string& device = "cpu", const std::string& seconds = "0.5") {
    return "model --model.vp " + kVp + " --acquisition.source-x0 800 --acquisition.source-dx 1200 --acquisition.source-nx " +
           std::to_string(shots) + " --acquisition.source-depth " + std::to_string(source_at - 5) +
           " --acquisition.receiver-x0 0 --acquisition.receiver-dx 25 --acquisition.receiver-nx 161"
           " --acquisition.receiver-depth " + std::to_string(receivers_at + 10.0 / 3) +
           " --acquisition.record-length " + seconds + " --acquisition.record-dt 0.004 --wavelet.ricker-f0 10"
           " --propagation.device " + device + " --propagation.threads 1 " + extra;
}

// One process's run and G-rank groups' run of the same arguments (+ " --output... dir/name").
struct Pair {
    Result one, many;
};
Pair both(int ranks, int per_shot, const std::string& args, const fs::path& dir, const std::string& output) {
    Pair p;
    p.one = run_rtm(args + " " + output + " " + (dir / "one").string());
    p.many = mpi_rtm(ranks, args + " --parallel.ranks-per-shot " + std::to_string(per_shot) + " " + output + " " +
                                (dir / "many").string());
    return p;
}

}  // namespace

TEST_CASE("2 ranks per shot: rtm model's gathers are one process's, bit for bit (free surface, C-PML below)") {
    const auto dir = scratch("cli-slabs-model-fs");
    const double face = face_depth(151, 10, kPml, true, 2, 1);
    const auto r = both(2, 2, model_2d(face, face, "--propagation.free-surface true"), dir, "--output.shots");
    INFO(r.one.output << r.many.output);
    REQUIRE(r.one.status == 0);
    REQUIRE(r.many.status == 0);
    CHECK_THAT(r.many.output, Contains("parallel: 2 ranks, 2 per shot, 1 groups") && Contains("in 2 z-slabs"));
    CHECK(bytes_of(dir / "many") == bytes_of(dir / "one"));
}

TEST_CASE("3 ranks per shot, and two groups of 2 with batches: rtm model's gathers are one process's, bit for bit (C-PML all round)") {
    const auto dir = scratch("cli-slabs-model-cpml");
    // The source on the upper face of three slabs, the receivers on the lower one.
    const auto args = model_2d(face_depth(151, 10, kPml, false, 3, 1), face_depth(151, 10, kPml, false, 3, 2), "");
    const auto r = both(3, 3, args, dir, "--output.shots");
    INFO(r.one.output << r.many.output);
    REQUIRE(r.one.status == 0);
    REQUIRE(r.many.status == 0);
    CHECK(bytes_of(dir / "many") == bytes_of(dir / "one"));
    // Two groups, each modelling its shots two at a time (a batch: every member's planes exchanged).
    const auto four = mpi_rtm(4, args + " --parallel.ranks-per-shot 2 --propagation.batch 2 --output.shots " +
                                     (dir / "four").string());
    INFO(four.output);
    REQUIRE(four.status == 0);
    CHECK_THAT(four.output, Contains("parallel: 4 ranks, 2 per shot, 2 groups"));
    CHECK(bytes_of(dir / "four") == bytes_of(dir / "one"));
}

namespace {

// dome3d: 81 x 61 x 61 nodes at 25 m; 8 absorbing cells keep the runs short. One shot,
// the source half a cell above the face of 2 slabs, the receivers a third of a cell below.
std::string model_3d() {
    const double face = face_depth(61, 25, 8, false, 2, 1);
    return "model --model.vp " + kDome + " --propagation.pml 8" +
           " --acquisition.source-x0 1000 --acquisition.source-y0 750 --acquisition.source-depth " +
           std::to_string(face - 12.5) +
           " --acquisition.receiver-x0 0 --acquisition.receiver-dx 250 --acquisition.receiver-nx 9"
           " --acquisition.receiver-y0 250 --acquisition.receiver-dy 500 --acquisition.receiver-ny 3"
           " --acquisition.receiver-depth " + std::to_string(face + 8) +
           " --acquisition.record-length 0.3 --wavelet.ricker-f0 8 --propagation.device cpu"
           " --propagation.threads 1";
}

}  // namespace

TEST_CASE("2 ranks per shot: rtm model of a 3D model gives one process's gathers, bit for bit") {
    const auto dir = scratch("cli-slabs-model-3d");
    const auto r = both(2, 2, model_3d(), dir, "--output.shots");
    INFO(r.one.output << r.many.output);
    REQUIRE(r.one.status == 0);
    REQUIRE(r.many.status == 0);
    CHECK(bytes_of(dir / "many") == bytes_of(dir / "one"));
}

TEST_CASE("2 ranks per shot: rtm migrate of a 3D shot is one process's image, bit for bit (inverse scattering, free surface)") {
    // The gradient across the face in y too, the free surface's mirror on the top slab,
    // damping layers, the boundary band per slab.
    const auto dir = scratch("cli-slabs-migrate-3d");
    const auto shot = run_rtm(model_3d() + " --output.shots " + (dir / "shot.sgy").string());
    INFO(shot.output);
    REQUIRE(shot.status == 0);
    const std::string args = "migrate --model.vp " + kDome + " --data.shots " + (dir / "shot.sgy").string() +
                             " --wavelet.ricker-f0 8 --migration.aperture 300 --propagation.pml 8 --propagation.device cpu"
                             " --propagation.threads 1 --propagation.free-surface true"
                             " --migration.condition inverse-scattering --migration.storage boundary";
    const auto r = both(2, 2, args, dir, "--output.job");
    INFO(r.one.output << r.many.output);
    REQUIRE(r.one.status == 0);
    REQUIRE(r.many.status == 0);
    for (const char* f : {"image.sgy", "illumination.sgy"}) {
        INFO(f);
        CHECK(bytes_of(dir / "many" / f) == bytes_of(dir / "one" / f));
        CHECK(bytes_of(dir / "many" / f).size() > 3600);
    }
}

TEST_CASE("2 ranks per shot: Born modelling gives one process's gathers, bit for bit") {
    const auto dir = scratch("cli-slabs-born");
    const double face = face_depth(151, 10, kPml, false, 2, 1);
    // One short shot: Born modelling moves the background wavefield to the host at every
    // step (assembled from the slabs): four meetings of the ranks a step, slow when
    // they are oversubscribed.
    const auto r = both(2, 2, model_2d(face, face, "--model.born-reflectivity " + reflectivity(), 1, "cpu", "0.3"), dir,
                        "--output.shots");
    INFO(r.one.output << r.many.output);
    REQUIRE(r.one.status == 0);
    REQUIRE(r.many.status == 0);
    CHECK_THAT(r.many.output, Contains("Born modelling"));
    CHECK(bytes_of(dir / "many") == bytes_of(dir / "one"));
    // Gathers with the 100 m reflector's echo in them, not zeros alike.
    const auto shots = io::read_shots((dir / "one").string());
    REQUIRE(!shots.empty());
    float most = 0;
    for (std::size_t t = 0; t < shots[0].ntraces(); ++t)
        for (int n = 0; n < shots[0].nt; ++n) most = std::max(most, std::abs(shots[0].trace(t)[n]));
    CHECK(most > 0);
}

namespace {

// Three shots modelled once by one process (source and receivers on the face of 2 slabs).
const fs::path& shots_file() {
    static const fs::path p = [] {
        const auto dir = scratch("cli-slabs-shots");
        const double face = face_depth(151, 10, kPml, false, 2, 1);
        const auto r = run_rtm(model_2d(face, face, "--output.shots " + (dir / "shots.sgy").string()));
        INFO(r.output);
        REQUIRE(r.status == 0);
        return dir / "shots.sgy";
    }();
    return p;
}

// Migrates the three shots with one process and with `ranks` ranks in groups of
// `per_shot`; the images and illuminations must be the same files.
void check_migration(const std::string& name, int ranks, int per_shot, const std::string& options) {
    const auto dir = scratch("cli-slabs-migrate-" + name);
    const std::string args = "migrate --model.vp " + kSmooth + " --data.shots " + shots_file().string() +
                             " --wavelet.ricker-f0 10 --migration.aperture 600 --propagation.device cpu"
                             " --propagation.threads 1 " + options;
    const auto r = both(ranks, per_shot, args, dir, "--output.job");
    INFO(r.one.output << r.many.output);
    REQUIRE(r.one.status == 0);
    REQUIRE(r.many.status == 0);
    CHECK_THAT(r.many.output, Contains("3 shots stacked"));
    for (const char* f : {"image.sgy", "illumination.sgy"}) {
        INFO(f);
        CHECK(bytes_of(dir / "many" / f) == bytes_of(dir / "one" / f));
        CHECK(bytes_of(dir / "many" / f).size() > 3600);
    }
}

}  // namespace

TEST_CASE("2 CPU ranks per shot refuse a batch of shots for inverse scattering in the dry run") {
    // (They image it across the slabs' faces one shot at a time: the batch failed mid-run
    // and its shots ran again alone.)
    const auto r = mpi_rtm(2, "migrate --model.vp " + kSmooth + " --data.shots " + shots_file().string() +
                                  " --wavelet.ricker-f0 10 --propagation.device cpu --propagation.threads 1"
                                  " --parallel.ranks-per-shot 2 --propagation.batch 3 --migration.condition "
                                  "inverse-scattering --dry-run --output.job " +
                                  (scratch("cli-slabs-is-batch") / "job").string());
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("option propagation.batch: is 3: over z-slabs on the CPU, the inverse-scattering"));
}

TEST_CASE("2 ranks per shot: rtm migrate's image is one process's, bit for bit (cross-correlation, snapshots)") {
    check_migration("cc-snapshots", 2, 2, "--migration.storage snapshots");
}

TEST_CASE("2 ranks per shot with batches of 2 shots: rtm migrate's image is one process's, bit for bit (TTI, cross-correlation)") {
    // Each member's image window assembled from the slabs apart (found by review: joined,
    // the shots' images were cut in the wrong places).
    check_migration("tti-cc-batch", 2, 2, " --model.epsilon 0.2 --model.delta 0.1 --model.theta 30 --propagation.batch 2");
}

TEST_CASE("3 ranks per shot: rtm migrate's image is one process's, bit for bit (inverse scattering, boundary band)") {
    check_migration("is-boundary", 3, 3, "--migration.condition inverse-scattering --migration.storage boundary");
}

TEST_CASE("two groups of 2 ranks: rtm migrate's image is one process's, bit for bit (born-adjoint, checkpoints)") {
    check_migration("ba-checkpoints", 4, 2,
                    "--migration.condition born-adjoint --migration.storage checkpoints --migration.memory-budget 0.005");
}

TEST_CASE("2 ranks per shot: rtm migrate's image is one process's, bit for bit (inverse scattering, checkpoints)") {
    check_migration("is-checkpoints", 2, 2,
                    "--migration.condition inverse-scattering --migration.storage checkpoints --migration.memory-budget 0.005");
}

TEST_CASE("a shot whose snapshots exceed one rank's budget runs over 2 ranks per shot, each keeping its slab's share, "
          "to the image of one process without the limit, bit for bit") {
    // The window (401 x 151 nodes) keeps 6.78 MB of snapshots; a budget of 5 MB refuses
    // them on one rank. Two z-slabs of the 191 padded planes hold about 75 window planes
    // each, 3.4 MB of snapshots: within the budget on every rank.
    const auto dir = scratch("cli-slabs-budget");
    const std::string args = "migrate --model.vp " + kSmooth + " --data.shots " + shots_file().string() +
                             " --wavelet.ricker-f0 10 --migration.aperture 600 --propagation.device cpu"
                             " --propagation.threads 1 --migration.storage snapshots";
    const auto refused = run_rtm(args + " --migration.memory-budget 0.005 --output.job " + (dir / "refused").string());
    INFO(refused.output);
    CHECK(refused.status == 1);
    CHECK_THAT(refused.output, Contains("migration.memory-budget"));
    // The refusal names the ranks per shot that hold it (the planner's slab shares).
    CHECK_THAT(refused.output, Contains("Run the shot over 2 ranks: parallel.ranks-per-shot = 2 under mpirun"));
    const auto two = mpi_rtm(2, args + " --migration.memory-budget 0.005 --parallel.ranks-per-shot 2 --output.job " +
                                    (dir / "two").string());
    INFO(two.output);
    REQUIRE(two.status == 0);
    CHECK_THAT(two.output, Contains("source wavefield by snapshots") && Contains("3 shots stacked"));
    const auto one = run_rtm(args + " --output.job " + (dir / "one").string());
    REQUIRE(one.status == 0);
    for (const char* f : {"image.sgy", "illumination.sgy"}) CHECK(bytes_of(dir / "two" / f) == bytes_of(dir / "one" / f));
}

TEST_CASE("a shot that blows up in a group of 2 is tried on the other group, then recorded failed while the job goes on") {
    const auto dir = scratch("cli-slabs-failed");
    // Shot 2's traces scaled to 1e38: its receiver wavefield overflows on every slab;
    // the group agrees on it (finite() over the group), so no member is left waiting.
    auto shots = io::read_shots(shots_file().string());
    double peak = 0;
    for (float v : shots[1].data) peak = std::max(peak, double(std::abs(v)));
    for (float& v : shots[1].data) v = float(v * (1e38 / peak));
    const std::string file = (dir / "shots.sgy").string();
    io::write_shots(file, shots);
    const auto r = mpi_rtm(4, "migrate --model.vp " + kSmooth + " --data.shots " + file +
                                  " --wavelet.ricker-f0 10 --migration.aperture 600 --propagation.device cpu"
                                  " --propagation.threads 1 --parallel.ranks-per-shot 2 --output.job " +
                                  (dir / "job").string());
    INFO(r.output);
    CHECK(r.status == 3);
    CHECK_THAT(r.output, Contains("failed (another rank tries it once more)") && Contains("failed, not stacked") &&
                             Contains("writing the image of 2 of 3 shots"));
}

TEST_CASE("ranks-per-shot that does not divide the ranks is refused, naming the option") {
    const auto r = mpi_rtm(3, model_2d(500, 500, "--parallel.ranks-per-shot 2 --output.shots " +
                                                     (scratch("cli-slabs-divide") / "s.sgy").string()));
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("parallel.ranks-per-shot") && Contains("does not divide the job's 3 ranks"));
}

TEST_CASE("a grid too shallow for its ranks per shot is refused before propagating, naming the option and what works") {
    const auto dir = scratch("cli-slabs-thin");
    // 5 depth samples between 20 absorbing cells each side: the face of 2 slabs must lie
    // R = 4 planes below the top layer (plane 24) and R above the bottom one (plane
    // 5 + 40 - 24 = 21): impossible; 8 samples put both at plane 24.
    Volume v(Grid{});
    v.grid.nx = 60;
    v.grid.nz = 5;
    v.grid.dx = v.grid.dz = 10;
    v.data.assign(v.grid.size(), 2000.f);
    io::write_volume((dir / "vp.sgy").string(), v);
    const auto r = mpi_rtm(2, "model --model.vp " + (dir / "vp.sgy").string() +
                                  " --acquisition.source-x0 300 --acquisition.receiver-x0 0 --acquisition.receiver-dx 10"
                                  " --acquisition.receiver-nx 60 --acquisition.record-length 0.1 --wavelet.ricker-f0 10"
                                  " --propagation.device cpu --parallel.ranks-per-shot 2 --output.shots " +
                                  (dir / "s.sgy").string());
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("parallel.ranks-per-shot <= 1") && Contains("at least 8 depth samples"));
    CHECK(!fs::exists(dir / "s.sgy"));
}


// Anisotropic slabs (CPU ranks): p and q are exchanged as the isotropic u, and the TTI
// step's pass-1 fluxes, which pass 2 differentiates across the faces, between its passes
// (Propagator::set_between_passes): the same sums as one box, so bit for bit again.
namespace {

const std::string kTti = " --model.epsilon 0.2 --model.delta 0.1 --model.theta 30";

}  // namespace

TEST_CASE("TTI and VTI shots over z-slabs: rtm model's gathers are one process's, bit for bit (2D over 2 and 3 ranks, "
          "VTI and TTI with a free surface, 3D TTI with an azimuth)") {
    const auto dir = scratch("cli-slabs-tti-model");
    const double face = face_depth(151, 10, kPml, false, 2, 1);
    auto r = both(2, 2, model_2d(face, face, kTti, 2), dir / "tti2", "--output.shots");
    INFO(r.one.output << r.many.output);
    REQUIRE(r.one.status == 0);
    REQUIRE(r.many.status == 0);
    CHECK_THAT(r.many.output, Contains("cpu TTI") && Contains("in 2 z-slabs"));
    CHECK(bytes_of(dir / "tti2" / "many") == bytes_of(dir / "tti2" / "one"));
    r = both(3, 3, model_2d(face_depth(151, 10, kPml, false, 3, 1), face_depth(151, 10, kPml, false, 3, 2), kTti, 2),
             dir / "tti3", "--output.shots");
    REQUIRE(r.many.status == 0);
    CHECK(bytes_of(dir / "tti3" / "many") == bytes_of(dir / "tti3" / "one"));
    const double fs_face = face_depth(151, 10, kPml, true, 2, 1);
    r = both(2, 2, model_2d(fs_face, fs_face, "--model.epsilon 0.2 --model.delta 0.1 --propagation.free-surface true", 2),
             dir / "vti", "--output.shots");
    REQUIRE(r.many.status == 0);
    CHECK_THAT(r.many.output, Contains("cpu VTI"));
    CHECK(bytes_of(dir / "vti" / "many") == bytes_of(dir / "vti" / "one"));
    // TTI under a free surface: the top slab mirrors pass 1's z fluxes about it. The source
    // 45 m below the surface, the receivers at the face (the direct wave and its ghost
    // reach them in 0.5 s); the surface changes the gathers (against an absorbing top).
    const std::string tti_fs = model_2d(50, fs_face, kTti, 1, "cpu", "0.8");
    r = both(2, 2, tti_fs + " --propagation.free-surface true", dir / "tti-fs", "--output.shots");
    REQUIRE(r.many.status == 0);
    CHECK_THAT(r.many.output, Contains("cpu TTI"));
    CHECK(bytes_of(dir / "tti-fs" / "many") == bytes_of(dir / "tti-fs" / "one"));
    REQUIRE(run_rtm(tti_fs + " --output.shots " + (dir / "tti-absorbing").string()).status == 0);
    CHECK(bytes_of(dir / "tti-absorbing") != bytes_of(dir / "tti-fs" / "one"));
    r = both(2, 2, model_3d() + " --model.epsilon 0.15 --model.delta 0.05 --model.theta 25 --model.phi 40", dir / "tti3d",
             "--output.shots");
    INFO(r.one.output << r.many.output);
    REQUIRE(r.one.status == 0);
    REQUIRE(r.many.status == 0);
    CHECK(bytes_of(dir / "tti3d" / "many") == bytes_of(dir / "tti3d" / "one"));
}

TEST_CASE("TTI migration over z-slabs: the image is one process's, bit for bit (inverse scattering with the band, "
          "cross-correlation with checkpoints)") {
    check_migration("tti-is-boundary", 2, 2, kTti + " --migration.condition inverse-scattering --migration.storage boundary");
    check_migration("tti-cc-checkpoints", 3, 3,
                    kTti + " --migration.storage checkpoints --migration.memory-budget 0.005");
}

TEST_CASE("anisotropic Born modelling and the born-adjoint condition over z-slabs are refused before any shot, naming "
          "the option") {
    const auto dir = scratch("cli-slabs-tti-born");
    const double face = face_depth(151, 10, kPml, false, 2, 1);
    const auto b = mpi_rtm(2, model_2d(face, face, kTti + " --model.born-reflectivity " + reflectivity(), 1) +
                                  " --parallel.ranks-per-shot 2 --output.shots " + (dir / "born.sgy").string());
    INFO(b.output);
    CHECK(b.status == 2);  // options that conflict: a usage error
    CHECK_THAT(b.output, Contains("parallel.ranks-per-shot") && Contains("no Born modelling or born-adjoint"));
    CHECK(!fs::exists(dir / "born.sgy"));
    const auto m = mpi_rtm(2, "migrate --model.vp " + kSmooth + kTti + " --data.shots " + shots_file().string() +
                                  " --migration.condition born-adjoint --propagation.device cpu --parallel.ranks-per-shot 2"
                                  " --output.job " + (dir / "job").string());
    INFO(m.output);
    CHECK(m.status == 2);
    CHECK_THAT(m.output, Contains("parallel.ranks-per-shot") && Contains("no Born modelling or born-adjoint"));
    CHECK(!fs::exists(dir / "job"));
}

#endif
