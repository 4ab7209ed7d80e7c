// `rtm model` and `rtm migrate` with anisotropy (VTI/TTI) from the command line, and what
// is refused naming the options (Born modelling and the born-adjoint condition run from
// the command line in tests/app/test_cli_adjoint.cpp).
#include <cmath>
#include <filesystem>

#include "cli_jobs.h"
#include "cli_models.h"
#include "io/model_io.h"
#include "io/shot_io.h"
#include "run_rtm.h"
#include "support/catch.hpp"
#include "support/test_data.h"

using namespace rtm;
using namespace rtm::test;
using Catch::Matchers::Contains;

namespace {

const std::string kModel = (source_dir() / "velocity_models" / "layers2d_vp.segy").string();

std::string small_job(const std::filesystem::path& dir, const std::string& extra) {
    return "model --model.vp " + kModel + " --acquisition.source-x0 2000 --acquisition.source-nx 1"
           " --acquisition.receiver-x0 1500 --acquisition.receiver-dx 50 --acquisition.receiver-nx 21"
           " --acquisition.record-length 0.4 --acquisition.record-dt 0.004 --propagation.device cpu"
           " --output.shots " + (dir / "shots.sgy").string() + " " + extra;
}

}  // namespace

TEST_CASE("rtm model propagates a TTI model given as constants, warns where delta > epsilon, and records other traces") {
    const auto dir = scratch("cli-tti");
    const auto iso = run_rtm(small_job(dir / "iso", ""));
    REQUIRE(iso.status == 0);
    const auto r = run_rtm(small_job(dir / "tti", "--model.epsilon 0.15 --model.delta 0.25 --model.theta 25"));
    INFO(r.output);
    REQUIRE(r.status == 0);
    CHECK_THAT(r.output, Contains("anisotropic, pseudo-acoustic TTI") && Contains("cpu TTI"));
    // delta > epsilon everywhere: every node of the 401 x 151 model is counted.
    CHECK_THAT(r.output, Contains("delta > epsilon at 60551 of 60551 nodes"));
    CHECK_THAT(r.output, Contains("damping absorbing layers"));
    const auto a = io::read_shots((dir / "iso" / "shots.sgy").string()), b = io::read_shots((dir / "tti" / "shots.sgy").string());
    REQUIRE(a.size() == 1);
    REQUIRE(b.size() == 1);
    double diff = 0, peak = 0;
    for (std::size_t i = 0; i < a[0].data.size(); ++i) {
        diff = std::max(diff, double(std::abs(a[0].data[i] - b[0].data[i])));
        peak = std::max(peak, double(std::abs(a[0].data[i])));
    }
    CHECK(peak > 0);
    CHECK(diff > 0.1 * peak);  // anisotropy changes the direct and reflected waves
}

// Also: the nodes are counted, an isotropic model is warned about, a negative depth refused.
TEST_CASE("model.elliptic-above below the model's bottom gives the elliptical model's shots bit for bit") {
    const auto dir = scratch("cli-tti-elliptic");
    const auto band = run_rtm(small_job(dir / "band", "--model.epsilon 0.2 --model.delta 0.05 --model.theta 20 "
                                                       "--model.elliptic-above 5000"));
    INFO(band.output);
    REQUIRE(band.status == 0);
    // Every node of the 401 x 151 model (1.5 km deep) lies above 5 km.
    CHECK_THAT(band.output, Contains("delta set to epsilon above 5000 m depth (model.elliptic-above; 60551 nodes changed)"));
    // A depth below the whole model is allowed, and warned about (feet, or a total depth?).
    CHECK_THAT(band.output, Contains("5000 m is below the model's bottom (1500 m)"));
    const auto ell = run_rtm(small_job(dir / "elliptical", "--model.epsilon 0.2 --model.delta 0.2 --model.theta 20"));
    REQUIRE(ell.status == 0);
    CHECK(bytes_of(dir / "band" / "shots.sgy") == bytes_of(dir / "elliptical" / "shots.sgy"));
    const auto iso = run_rtm(small_job(dir / "iso", "--model.elliptic-above 100 --dry-run"));
    CHECK(iso.status == 0);
    CHECK_THAT(iso.output, Contains("model.elliptic-above: the model is isotropic"));
    // Angles are degrees: values that all lie within +-pi, not whole, read like radians.
    const auto rad = run_rtm(small_job(dir / "rad", "--model.epsilon 0.2 --model.theta 0.52 --dry-run"));
    CHECK(rad.status == 0);
    CHECK_THAT(rad.output, Contains("option model.theta: every theta lies within +-pi (the largest, 0.52)") &&
                               Contains("convert them (x 180/pi)"));
    for (const char* degrees : {"30", "3", "-2"}) {
        const auto deg = run_rtm(small_job(dir / "deg", std::string("--model.epsilon 0.2 --model.theta ") + degrees +
                                                            " --dry-run"));
        INFO(degrees << ": " << deg.output);
        CHECK(deg.status == 0);
        CHECK_THAT(deg.output, !Contains("within +-pi"));
    }
    // An azimuth's range is +-360 degrees, so radians reach 2 pi: 4.71 (270 degrees as
    // radians) was not warned about. (The bundled 3D model; its parameters as constants.)
    const auto src = source_dir();
    const std::string aniso3d = "model --model.vp " + (src / "velocity_models/aniso3d_vp.segy").string() +
                                " --acquisition.source-x0 250 --acquisition.source-y0 250 --acquisition.record-length 0.2"
                                " --model.epsilon 0.2 --model.theta 30 --dry-run --output.shots " +
                                (dir / "phi.sgy").string() + " --model.phi ";
    const auto phi_rad = run_rtm(aniso3d + "4.71");
    INFO(phi_rad.output);
    CHECK(phi_rad.status == 0);
    CHECK_THAT(phi_rad.output, Contains("option model.phi: every phi lies within +-2 pi (the largest, 4.71)"));
    const auto phi_deg = run_rtm(aniso3d + "47");
    INFO(phi_deg.output);
    CHECK(phi_deg.status == 0);
    CHECK_THAT(phi_deg.output, !Contains("every phi lies within"));
    const auto bad = run_rtm(small_job(dir / "bad", "--model.epsilon 0.2 --model.elliptic-above -10 --dry-run"));
    CHECK(bad.status == 1);
    CHECK_THAT(bad.output, Contains("option model.elliptic-above") && Contains("is not a depth"));
}

// The qSV artefact and model.elliptic-above. A homogeneous VTI medium (vp 2000 m/s, eps
// 0.25, delta 0; 3 x 2 km at 10 m), a source at 1000 m depth and 17 receivers 400 m above
// it (offsets up to 400 m), 1.4 s. Three runs: delta 0 (the artefact: a slow wave where
// eps != delta), delta = eps everywhere (elliptical: C's qSV root is 0, no artefact),
// and delta 0 with model.elliptic-above 1500 m (source and receivers in an elliptical
// band, the medium below unchanged).
// - Before 0.55 s the band's run equals the elliptical one. A wave that meets the band's
//   base (500 m below the source) travels at least 500 m down and 900 m up to the
//   receivers, at most at the fastest qP speed, vp sqrt(1 + 2 eps) = 2449 m/s: 0.57 s,
//   and the wavelet starts before it peaks. Both runs do the same arithmetic wherever
//   their inputs agree, so what differs is the discrete scheme's precursor from below
//   the band, which decays faster than exponentially ahead of the physical front. The
//   test holds it under the fp32 rounding scale of the run, the twin bound sqrt(180 N)
//   2^-24 (tests/gpu/gpu_test.h) at the N steps of the window (the plan's dt): the
//   band's own effect before 0.55 s is then below the propagation's rounding.
// - After 0.55 s the artefact, which the elliptical run lacks, dominates the delta-0 run
//   (more than 10x the elliptical run's energy there, which is the qP coda and the
//   damping layers' echoes). The band's run must differ from the elliptical one by less
//   than a tenth of what the delta-0 run differs by (what remains is echoes and
//   conversions at the band's base).
TEST_CASE("model.elliptic-above removes a VTI source's qSV artefact: an elliptical medium's traces until the band's base echoes") {
    const auto dir = scratch("cli-tti-qsv");
    const auto model = (dir / "vp.sgy").string();
    io::write_volume(model, constant_model(301, 201, 10, 2000));
    const std::string job = "model --model.vp " + model + " --model.epsilon 0.25 --acquisition.source-x0 1500"
                            " --acquisition.source-nx 1 --acquisition.source-depth 1000 --acquisition.receiver-x0 1100"
                            " --acquisition.receiver-dx 50 --acquisition.receiver-nx 17 --acquisition.receiver-depth 600"
                            " --acquisition.record-length 1.4 --acquisition.record-dt 0.004 --wavelet.ricker-f0 10"
                            " --propagation.pml 40 --propagation.device cpu";
    std::vector<ShotGather> g;
    double dt_ms = 0;  // the plan's time step
    for (const std::string extra : {"--model.delta 0", "--model.delta 0.25", "--model.delta 0 --model.elliptic-above 1500"}) {
        const auto out = dir / ("run" + std::to_string(g.size()) + ".sgy");
        const auto r = run_rtm(job + " " + extra + " --output.shots " + out.string());
        INFO(r.output);
        REQUIRE(r.status == 0);
        g.push_back(io::read_shots(out.string()).at(0));
        const auto at = r.output.find("plan: dt ");
        REQUIRE(at != std::string::npos);
        dt_ms = std::stod(r.output.substr(at + 9));
    }
    const ShotGather &d0 = g[0], &ell = g[1], &band = g[2];
    REQUIRE(d0.dt == 0.004);
    const int split = int(0.55 / d0.dt);
    // Energy of a gather's samples in [t0, t1) steps; the difference's energy against b.
    auto energy = [](const ShotGather& a, const ShotGather* b, int t0, int t1) {
        double e = 0;
        for (std::size_t r = 0; r < a.ntraces(); ++r)
            for (int t = t0; t < t1; ++t) {
                const double v = a.trace(r)[t] - (b ? b->trace(r)[t] : 0.f);
                e += v * v;
            }
        return e;
    };
    const double early = std::sqrt(energy(band, &ell, 0, split) / energy(ell, nullptr, 0, split));
    const int steps = int(std::lround(0.55 / (dt_ms * 1e-3)));
    const double bound = std::sqrt(180.0 * steps) * std::ldexp(1.0, -24);
    const double late_ell = energy(ell, nullptr, split, d0.nt), late_d0 = energy(d0, &ell, split, d0.nt),
                 late_band = energy(band, &ell, split, d0.nt);
    INFO("before 0.55 s (" << steps << " steps), band against elliptical: relative L2 " << early << " (bound " << bound
                           << ")");
    INFO("after 0.55 s: elliptical energy " << late_ell << "; energy of the difference from it: delta 0 " << late_d0
                                            << ", band " << late_band);
    CHECK(early < bound);
    CHECK(late_d0 > 10 * late_ell);
    CHECK(late_band < 0.1 * late_d0);
}

TEST_CASE("an azimuth without a tilt is refused naming model.phi") {
    const auto dir = scratch("cli-tti-refused");
    const auto p = run_rtm(small_job(dir, "--model.phi 10"));
    CHECK(p.status == 1);
    CHECK_THAT(p.output, Contains("model.phi") && Contains("an azimuth without a tilt"));
}

TEST_CASE("TTI shots modelled as a batch equal the shots one at a time, bit for bit") {
    // The members of a batch are independent wavefields stepped by the same kernel one
    // after another (the pass-1 scratch is reused): nothing may leak between them.
    const auto dir = scratch("cli-tti-batch");
    const std::string job = "model --model.vp " + kModel + " --acquisition.source-x0 1000 --acquisition.source-dx 1000"
                            " --acquisition.source-nx 2 --acquisition.receiver-x0 500 --acquisition.receiver-dx 50"
                            " --acquisition.receiver-nx 41 --acquisition.record-length 0.3 --acquisition.record-dt 0.004"
                            " --propagation.device cpu --model.epsilon 0.1 --model.theta 20";
    for (int b : {1, 2}) {
        const auto r = run_rtm(job + " --propagation.batch " + std::to_string(b) + " --output.shots " +
                               (dir / ("b" + std::to_string(b) + ".sgy")).string());
        INFO(r.output);
        REQUIRE(r.status == 0);
    }
    const auto one = io::read_shots((dir / "b1.sgy").string()), two = io::read_shots((dir / "b2.sgy").string());
    REQUIRE(one.size() == 2);
    REQUIRE(two.size() == 2);
    for (int s = 0; s < 2; ++s) CHECK(one[s].data == two[s].data);
}

TEST_CASE("rtm migrate images a TTI layered survey on the CPU: finite, non-zero, the reflector at its depth") {
    // A 2D line of 201 x 101 nodes of 10 m: 2000 m/s above 500 m, 2800 m/s below, TTI
    // (epsilon 0.2, delta 0.1, tilt 20 degrees) everywhere; one shot modelled in it and
    // migrated in its smooth part (2000 m/s, the same anisotropy: the right model above
    // the reflector, no backscatter from the contrast).
    const auto dir = scratch("cli-tti-migrate");
    Volume sharp(Grid{});
    sharp.grid.nx = 201;
    sharp.grid.nz = 101;
    sharp.grid.dx = sharp.grid.dz = 10;
    sharp.data.assign(sharp.grid.size(), 2000.f);
    Volume smooth = sharp;
    for (int iz = 50; iz < 101; ++iz)
        for (int ix = 0; ix < 201; ++ix) sharp.at(ix, 0, iz) = 2800.f;
    io::write_volume((dir / "sharp.sgy").string(), sharp);
    io::write_volume((dir / "smooth.sgy").string(), smooth);
    const std::string aniso = " --model.epsilon 0.2 --model.delta 0.1 --model.theta 20 --propagation.device cpu"
                              " --wavelet.ricker-f0 12 --propagation.pml 30";
    const auto m = run_rtm("model --model.vp " + (dir / "sharp.sgy").string() + aniso +
                           " --acquisition.source-x0 1000 --acquisition.source-nx 1"
                           " --acquisition.receiver-x0 0 --acquisition.receiver-dx 10 --acquisition.receiver-nx 201"
                           " --acquisition.record-length 0.8 --acquisition.record-dt 0.002"
                           " --output.shots " + (dir / "shots.sgy").string());
    INFO(m.output);
    REQUIRE(m.status == 0);
    const auto r = run_rtm("migrate --model.vp " + (dir / "smooth.sgy").string() + aniso + " --data.shots " +
                           (dir / "shots.sgy").string() + " --migration.mute-direct true --output.job " +
                           (dir / "job").string());
    INFO(r.output);
    REQUIRE(r.status == 0);
    CHECK_THAT(r.output, Contains("anisotropic, pseudo-acoustic TTI"));
    const Volume img = io::read_volume((dir / "job" / "image.sgy").string());
    REQUIRE(img.grid.nx == 201);
    REQUIRE(img.grid.nz == 101);
    // The reflector's depth: the row of the largest energy over the columns within 300 m
    // of the shot (where the reflection comes back inside the receiver line), below the
    // source's muted surroundings (100 m).
    bool finite = true;
    double peak = 0, best = 0;
    int best_iz = -1;
    for (float x : img.data) {
        finite = finite && std::isfinite(x);
        peak = std::max(peak, double(std::abs(x)));
    }
    for (int iz = 10; iz < 101; ++iz) {
        double e = 0;
        for (int ix = 70; ix <= 130; ++ix) e += double(img.at(ix, 0, iz)) * img.at(ix, 0, iz);
        if (e > best) {
            best = e;
            best_iz = iz;
        }
    }
    const double depth = img.grid.z0 + best_iz * img.grid.dz;
    // Tolerance: the step lies on a node (500 m); cross-correlation puts its image's peak
    // within one cell of it (tests/numerics/test_migration.cpp, "a flat reflector is imaged
    // within one cell"); the rotated TTI operator's dispersion, 1.3% slow at 5 points per
    // wavelength (docs/anisotropy.md; 8 points at 12 Hz's 2.5 f0 = 30 Hz, 2000 m/s, 10 m), can
    // move it by at most 1.3% of the 500 m path: 6.5 m. Within 10 + 6.5 m.
    WARN("TTI image: strongest reflector at " << depth << " m (true 500 m), image max " << peak);
    CHECK(finite);
    CHECK(peak > 0);
    CHECK(std::abs(depth - 500) <= 10 + 0.013 * 500);
}

TEST_CASE("a tilt of 0 at every node runs the VTI operator (the isotropic one without epsilon and delta), bit for bit, and says so") {
    const auto dir = scratch("cli-tti-zero-tilt");
    const std::string vti = "--model.epsilon 0.2 --model.delta 0.1";
    const auto plain = run_rtm(small_job(dir / "vti", vti));
    REQUIRE(plain.status == 0);
    const auto zero = run_rtm(small_job(dir / "zero", vti + " --model.theta 0"));
    INFO(zero.output);
    REQUIRE(zero.status == 0);
    CHECK_THAT(zero.output, Contains("the tilt (model.theta) is 0 or 180 degrees at every node (a vertical axis), so the VTI operator runs") &&
                                Contains("pseudo-acoustic VTI") && Contains("cpu VTI"));
    CHECK(bytes_of(dir / "zero" / "shots.sgy") == bytes_of(dir / "vti" / "shots.sgy"));
    const auto iso = run_rtm(small_job(dir / "iso", ""));
    REQUIRE(iso.status == 0);
    const auto tilt_only = run_rtm(small_job(dir / "tilt-only", "--model.theta 0"));
    INFO(tilt_only.output);
    REQUIRE(tilt_only.status == 0);
    CHECK_THAT(tilt_only.output, Contains("so the isotropic operator runs"));
    CHECK(bytes_of(dir / "tilt-only" / "shots.sgy") == bytes_of(dir / "iso" / "shots.sgy"));
}

TEST_CASE("model.smooth smooths vp and the anisotropy parameters, says so, and refuses a negative sigma") {
    const auto dir = scratch("cli-smooth");
    const auto r = run_rtm(small_job(dir, "--model.epsilon 0.2 --model.delta 0.1 --model.smooth 30 --dry-run"));
    INFO(r.output);
    CHECK(r.status == 0);
    CHECK_THAT(r.output, Contains("model: smoothed (model.smooth: Gaussian sigma 30 m), vp as slowness, epsilon "
                                  "and delta as values"));
    // The plan's time step: the anisotropic scheme's limit, as an isotropic speed above
    // the largest vp; its layers are damping, not C-PML.
    CHECK_THAT(r.output, Contains("ms of the anisotropic scheme, an isotropic medium's at ") &&
                             Contains(" m/s; vp at most ") && Contains("wavefields, coefficients, damping"));
    const auto bad = run_rtm(small_job(dir, "--model.smooth -5 --dry-run"));
    CHECK(bad.status == 1);
    CHECK_THAT(bad.output, Contains("option model.smooth") && Contains("sigma in m"));
}

TEST_CASE("the aniso3d example's configs (tools/run_aniso_example.sh) pass their dry runs as the script runs them") {
    // The whole example takes 20 minutes on two CPU cores (10 s on a GPU): here the
    // modelling config is dry-run as it is, and both migration configs are dry-run on one
    // shot of its geometry and record (1.2 s: their direct-wave mute, the wavelet's
    // length, must leave some of it), modelled isotropic with thin layers (seconds).
    const auto dir = scratch("cli-aniso3d-example");
    const std::string in_root = "cd " + source_dir().string() + " && " + RTM_BINARY + " ";
    const auto shots = (dir / "shots.sgy").string();
    const auto plan = run_shell(in_root + "model --config shots/aniso3d.ini --propagation.device cpu --dry-run "
                                "--output.shots " + shots + " 2>&1");
    INFO(plan.output);
    REQUIRE(plan.status == 0);
    CHECK_THAT(plan.output, Contains("pseudo-acoustic TTI") && Contains("40 damping cells a side"));
    const auto m = run_shell(in_root + "model --model.vp velocity_models/aniso3d_vp.segy --propagation.device cpu "
                             "--acquisition.source-x0 250 --acquisition.source-y0 250 --acquisition.source-depth 10 "
                             "--acquisition.receiver-x0 0 --acquisition.receiver-dx 20 --acquisition.receiver-nx 51 "
                             "--acquisition.receiver-y0 0 --acquisition.receiver-dy 20 --acquisition.receiver-ny 51 "
                             "--acquisition.receiver-depth 10 --acquisition.record-length 1.2 "
                             "--acquisition.record-dt 0.004 --wavelet.ricker-f0 8 --propagation.pml 8 "
                             "--output.shots " + shots + " 2>&1");
    INFO(m.output);
    REQUIRE(m.status == 0);
    for (const char* ini : {"shots/aniso3d_migrate.ini", "shots/aniso3d_migrate_isotropic.ini"}) {
        // (data.shots on the command line replaces the config's: the one shot.)
        const auto r = run_shell(in_root + "migrate --config " + ini + " --propagation.device cpu --data.shots " + shots +
                                 " --output.job " + (dir / "job").string() + " --dry-run 2>&1");
        INFO(ini << ": " << r.output);
        CHECK(r.status == 0);
        CHECK_THAT(r.output, Contains("model: smoothed"));
    }
}

TEST_CASE("the dispersion check holds a negative epsilon's slower horizontal qP wave to the grid") {
    // layers2d at 10 m, a 14 Hz Ricker (energy to 35 Hz): vp >= 1500 m/s gives 4.3 points
    // per shortest wavelength, above the warning's 4. With eps = delta = -0.3 the qP wave
    // across the axis runs at vp sqrt(0.4): 949 m/s, 2.7 points. It was not warned about.
    const std::string cmd = "model --model.vp " + layers_vp() + " --acquisition.source-x0 1000 "
                            "--acquisition.record-length 0.6 --acquisition.record-dt 0.004 --propagation.device cpu "
                            "--wavelet.ricker-f0 14 --dry-run --output.shots " +
                            (scratch("cli-aniso-dispersion") / "out.sgy").string();
    const auto iso = run_rtm(cmd);
    INFO(iso.output);
    CHECK(iso.status == 0);
    CHECK_THAT(iso.output, !Contains("dispersion:"));
    const auto slow = run_rtm(cmd + " --model.epsilon -0.3 --model.delta -0.3");
    INFO(slow.output);
    CHECK(slow.status == 0);
    CHECK_THAT(slow.output, Contains("dispersion: 2.7 grid points per shortest wavelength (slowest velocity 949 m/s"));
}
