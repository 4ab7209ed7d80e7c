// `rtm model` and `rtm info` end to end, and their answers to bad input.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "io/model_io.h"
#include "io/shot_io.h"
#include "cli_models.h"
#include "run_rtm.h"
#include "support/catch.hpp"
#include "support/test_data.h"

using namespace rtm;
using namespace rtm::test;
using Catch::Matchers::Contains;

namespace {

const std::string kModel = (source_dir() / "velocity_models" / "layers2d_vp.segy").string();

// A small modelling job on the bundled 2D model: 2 shots, 0.3 s records.
std::string small_job(const std::filesystem::path& dir, const std::string& extra = "",
                      const std::string& record_length = "0.3") {
    return "model --model.vp " + kModel + " --acquisition.source-x0 1000 --acquisition.source-dx 1000"
           " --acquisition.source-nx 2 --acquisition.receiver-x0 500 --acquisition.receiver-dx 50"
           " --acquisition.receiver-nx 41 --acquisition.record-length " + record_length + " --acquisition.record-dt 0.004"
           " --propagation.device cpu --output.shots " + (dir / "shots.sgy").string() + " " + extra;
}

}  // namespace

TEST_CASE("rtm model writes shot gathers with world geometry and a PNG preview") {
    const auto dir = scratch("cli-model");
    const auto r = run_rtm(small_job(dir));
    INFO(r.output);
    REQUIRE(r.status == 0);
    CHECK_THAT(r.output, Contains("Mpoints/s"));
    REQUIRE(std::filesystem::exists(dir / "shots.png"));
    const auto shots = io::read_shots((dir / "shots.sgy").string());
    REQUIRE(shots.size() == 2);
    CHECK(shots[0].ntraces() == 41);
    CHECK(shots[0].nt == 76);
    CHECK(shots[0].dt == Approx(0.004));
    // The bundled model's x axis starts at world X = 1000 m and points east.
    CHECK(shots[1].source.x == Approx(1000 + 2000).margin(0.01));
    CHECK(shots[1].source.z == Approx(10).margin(0.01));
    CHECK(shots[0].receivers[40].x == Approx(1000 + 500 + 40 * 50).margin(0.01));
    // Something was recorded: the direct wave reaches the near receivers.
    double peak = 0;
    for (float v : shots[0].data) peak = std::max(peak, double(std::abs(v)));
    CHECK(peak > 0);
}

TEST_CASE("an unstable time step is refused with the largest stable one") {
    const auto dir = scratch("cli-cfl");
    const auto r = run_rtm(small_job(dir, "--propagation.dt 0.004"));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("propagation.dt") && Contains("unstable") && Contains("largest stable dt"));
    CHECK(!std::filesystem::exists(dir / "shots.sgy"));
}

TEST_CASE("a negative time step is refused naming the option") {
    const auto r = run_rtm(small_job(scratch("cli-neg-dt"), "--propagation.dt -0.001"));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("propagation.dt") && Contains("not positive"));
}

TEST_CASE("several sources at a spacing of 0 are refused naming the option") {
    // They would all be at one place: identical shots modelled without a word.
    const auto dir = scratch("cli-zero-spacing");
    std::string cmd = small_job(dir);  // 2 sources 1000 m apart
    const std::string given = "--acquisition.source-dx 1000";
    REQUIRE(cmd.find(given) != std::string::npos);
    cmd.replace(cmd.find(given), given.size(), "--acquisition.source-dx 0");
    const auto r = run_rtm(cmd);
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("option acquisition.source-dx: is 0 with acquisition.source-nx 2"));
    CHECK(!std::filesystem::exists(dir / "shots.sgy"));
}

TEST_CASE("a zero record interval with a geometry file is refused naming the option") {
    const auto dir = scratch("cli-bad-geometry");
    REQUIRE(run_rtm(small_job(dir, "")).status == 0);
    const auto r = run_rtm("model --model.vp " + kModel + " --acquisition.geometry " + (dir / "shots.sgy").string() +
                           " --acquisition.record-dt 0 --propagation.device cpu --output.shots " +
                           (scratch("cli-bad-geometry-2") / "shots.sgy").string());
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("option acquisition.record-dt: 0 s is not a SEG-Y sample interval"));
}

namespace {

// Sets the 16-bit big-endian field at `offset` (0-based) of every trace header of a
// SEG-Y file of IEEE floats.
void set_every_trace(const std::filesystem::path& file, long offset, int value) {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    unsigned char ns[2];
    f.seekg(3220), f.read(reinterpret_cast<char*>(ns), 2);
    const long trace_bytes = 240 + 4L * (ns[0] << 8 | ns[1]);
    const long traces = (long(std::filesystem::file_size(file)) - 3600) / trace_bytes;
    const char bytes[2] = {char((value >> 8) & 0xff), char(value & 0xff)};
    for (long k = 0; k < traces; ++k) f.seekp(3600 + k * trace_bytes + offset), f.write(bytes, 2);
}

}  // namespace

TEST_CASE("a geometry file without a sample interval is modelled with acquisition.record-dt and record-length, and refused without") {
    // Only its positions are needed: it was refused even with both options given.
    const auto dir = scratch("cli-geometry-no-dt");
    REQUIRE(run_rtm(small_job(dir, "")).status == 0);
    const auto file = dir / "shots.sgy";
    set_every_trace(file, 116, 0);  // trace byte 117
    {
        std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
        const char zero[2] = {0, 0};
        f.seekp(3216), f.write(zero, 2);  // binary byte 3217
    }
    const std::string cmd = "model --model.vp " + kModel + " --acquisition.geometry " + file.string() +
                            " --propagation.device cpu --dry-run --output.shots " + (dir / "out.sgy").string();
    const auto refused = run_rtm(cmd);
    INFO(refused.output);
    CHECK(refused.status == 1);
    CHECK_THAT(refused.output, Contains(file.string() + ": the sample interval is zero or negative") &&
                                   Contains("Give acquisition.record-dt and acquisition.record-length"));
    const auto ok = run_rtm(cmd + " --acquisition.record-dt 0.004 --acquisition.record-length 0.3");
    INFO(ok.output);
    CHECK(ok.status == 0);
}

TEST_CASE("a geometry file whose traces start after the shot is modelled from the shot, saying so") {
    // Its delay (byte 109) was dropped without a word: the modelled traces did not line
    // up sample for sample with the field file's.
    const auto dir = scratch("cli-geometry-delay");
    REQUIRE(run_rtm(small_job(dir, "")).status == 0);
    const auto file = dir / "shots.sgy";
    set_every_trace(file, 108, 100);  // byte 109: 100 ms
    const auto r = run_rtm("model --model.vp " + kModel + " --acquisition.geometry " + file.string() +
                           " --propagation.device cpu --dry-run --output.shots " + (dir / "out.sgy").string());
    INFO(r.output);
    CHECK(r.status == 0);
    CHECK_THAT(r.output, Contains(file.string() + ": its traces start 100 ms after the shot") &&
                             Contains("the modelled traces start at the shot (byte 109 = 0)"));
}

TEST_CASE("outputs that would overwrite an input or each other are refused naming the options, and the input is kept") {
    const auto dir = scratch("cli-model-outputs");
    const auto model = dir / "vp.segy";
    std::filesystem::copy_file(kModel, model);
    const auto size = std::filesystem::file_size(model);
    const std::string job = "model --model.vp " + model.string() +
                            " --acquisition.source-x0 1000 --acquisition.receiver-x0 500 --acquisition.receiver-dx 50"
                            " --acquisition.receiver-nx 41 --acquisition.record-length 0.3 --acquisition.record-dt 0.004"
                            " --propagation.device cpu ";
    SECTION("the gathers onto the model") {
        const auto r = run_rtm(job + "--output.shots " + model.string());
        CHECK(r.status == 1);
        CHECK_THAT(r.output, Contains("option output.shots") && Contains("is the file given as model.vp") &&
                                 Contains("would lose that input"));
    }
    SECTION("the gathers onto an anisotropy parameter's file or the configuration file, refused before any read") {
        // Every option that names an input file is checked (app/config.h input_files);
        // phi, refused for a 2D model once read, is refused as an output first.
        const auto param = dir / "param.segy";  // 0.1 everywhere: a valid epsilon, delta or tilt
        Volume v = io::read_volume(model.string());
        std::fill(v.data.begin(), v.data.end(), 0.1f);
        io::write_volume(param.string(), v);
        const auto ini = dir / "job.ini";
        std::ofstream(ini) << "[wavelet]\nricker-f0 = 10\n";
        for (const std::string in : {"model.epsilon", "model.delta", "model.theta", "model.phi", "config"}) {
            const auto& file = in == "config" ? ini : param;
            const std::string text = bytes_of(file);
            const auto r = run_rtm(job + "--" + in + " " + file.string() + " --output.shots " + file.string());
            INFO(r.output);
            CHECK(r.status == 1);
            CHECK_THAT(r.output, Contains("option output.shots: '" + file.string() + "' is the file given as " + in));
            CHECK(bytes_of(file) == text);
        }
    }
    SECTION("the preview onto the model") {
        const auto r = run_rtm(job + "--output.shots " + (dir / "s.sgy").string() + " --output.preview " + model.string());
        CHECK(r.status == 1);
        CHECK_THAT(r.output, Contains("output.preview") && Contains("model.vp"));
    }
    SECTION("a .png shots path, whose default preview is itself") {
        const auto r = run_rtm(job + "--output.shots " + (dir / "shots.png").string());
        CHECK(r.status == 1);
        CHECK_THAT(r.output, Contains("output.preview") && Contains("would overwrite the gathers"));
    }
    SECTION("the preview onto the gathers") {
        const auto shots = (dir / "s.sgy").string();
        const auto r = run_rtm(job + "--output.shots " + shots + " --output.preview " + shots);
        CHECK(r.status == 1);
        CHECK_THAT(r.output, Contains("would overwrite the gathers"));
    }
    CHECK(std::filesystem::file_size(model) == size);
    CHECK(io::read_volume(model.string()).data == io::read_volume(kModel).data);
}

TEST_CASE("an infinite Ricker frequency is refused naming the option") {
    const auto r = run_rtm(small_job(scratch("cli-model-f0"), "--wavelet.ricker-f0 inf"));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("wavelet.ricker-f0") && Contains("finite"));
}

TEST_CASE("a negative shot batch is refused naming the option") {
    const auto r = run_rtm(small_job(scratch("cli-neg-batch"), "--propagation.batch -2"));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("propagation.batch") && Contains("negative"));
}

TEST_CASE("a receiver outside the model is refused naming the shot and receiver") {
    const auto r = run_rtm(small_job(scratch("cli-outside"), "--acquisition.receiver-y0 0 --acquisition.receiver-depth 1600"));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("receiver") && Contains("outside the model") && Contains("depth 0..1500"));
}

TEST_CASE("sources or receivers on a free surface are refused: the pressure there is held at zero") {
    // They gave all-zero gathers, and images, with exit 0 (land data and files that leave
    // the depths at 0 put them there).
    const auto dir = scratch("cli-free-surface-zero");
    const auto rec = run_rtm(small_job(dir / "rec", "--propagation.free-surface true --acquisition.receiver-depth 0 --dry-run"));
    INFO(rec.output);
    CHECK(rec.status == 1);
    CHECK_THAT(rec.output, Contains("shot 1 receiver 1: lies on the free surface") && Contains("record nothing") &&
                               Contains("acquisition.receiver-depth"));
    const auto src = run_rtm(small_job(dir / "src", "--propagation.free-surface true --acquisition.source-depth 0 --dry-run"));
    INFO(src.output);
    CHECK(src.status == 1);
    CHECK_THAT(src.output, Contains("shot 1 source: lies on the free surface") && Contains("inject nothing"));
    // Just below it they record (the ghost's physics), and without a free surface depth 0 is a depth.
    CHECK(run_rtm(small_job(dir / "below", "--propagation.free-surface true --acquisition.receiver-depth 2 --dry-run")).status == 0);
    const auto shots = dir / "top" / "shots.sgy";
    REQUIRE(run_rtm(small_job(dir / "top", "--acquisition.receiver-depth 0")).status == 0);
    // Migrated under a free surface, the file's receivers are refused, naming the file.
    const auto mig = run_rtm("migrate --model.vp " + kModel + " --data.shots " + shots.string() +
                             " --propagation.free-surface true --propagation.device cpu --output.job " +
                             (dir / "job").string() + " --dry-run");
    INFO(mig.output);
    CHECK(mig.status == 1);
    CHECK_THAT(mig.output, Contains(shots.string() + ": shot 1 receiver 1: lies on the free surface"));
}

TEST_CASE("a record interval too coarse for the wavelet's band is warned about and a record length between samples is said") {
    const auto dir = scratch("cli-coarse-record");
    const auto cmd = [&](const char* dt, const char* length = "0.6") {
        return "model --model.vp " + kModel + " --acquisition.source-x0 1000 --acquisition.receiver-x0 500"
               " --acquisition.receiver-dx 50 --acquisition.receiver-nx 11 --acquisition.record-length " +
               std::string(length) + " --wavelet.ricker-f0 15 --propagation.device cpu --dry-run --output.shots " +
               (dir / "shots.sgy").string() + " --acquisition.record-dt " + dt;
    };
    // A 15 Hz Ricker reaches 37.5 Hz: 30 ms samples hold 16.7 Hz, and the gathers lost the rest without a word.
    const auto coarse = run_rtm(cmd("0.03"));
    INFO(coarse.output);
    CHECK(coarse.status == 0);
    CHECK_THAT(coarse.output, Contains("warning the record's sample interval (30 ms, acquisition.record-dt) holds "
                                       "frequencies up to 16.7 Hz, below the wavelet's 37.5 Hz") &&
                                  Contains("13.3 ms or less keeps it"));
    const auto fine = run_rtm(cmd("0.004"));
    CHECK(fine.status == 0);
    CHECK_THAT(fine.output, !Contains("the record's sample interval") && !Contains("not a whole number"));
    // A record length between two samples is rounded to the nearer, and said.
    const auto between = run_rtm(cmd("0.004", "0.603"));
    CHECK_THAT(between.output, Contains("option acquisition.record-length: 0.603 s is not a whole number of 4 ms "
                                        "samples: the record is 0.604 s"));
}

TEST_CASE("a missing model file is named in the error") {
    const auto r = run_rtm("model --model.vp /nonexistent/vp.sgy --acquisition.record-length 1");
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("/nonexistent/vp.sgy"));
}

TEST_CASE("a model with NaN, zero or negative velocities is refused naming the file and node") {
    const auto dir = scratch("cli-badvel");
    for (float bad : {std::numeric_limits<float>::quiet_NaN(), 0.f, -1500.f}) {
        Volume v = constant_model(20, 10, 10, 2000.f);
        v.at(3, 0, 4) = bad;
        const auto path = (dir / "vp.sgy").string();
        io::write_volume(path, v);
        const auto r = run_rtm("model --model.vp " + path + " --acquisition.record-length 0.1");
        INFO("bad value " << bad << ": " << r.output);
        CHECK(r.status == 1);
        CHECK_THAT(r.output, Contains(path));
    }
}

TEST_CASE("an unknown option in a configuration file is named with the file") {
    const auto dir = scratch("cli-config");
    const auto ini = dir / "job.ini";
    {
        std::FILE* f = std::fopen(ini.c_str(), "w");
        std::fputs("[model]\nvp = x.sgy\nvelocity = 3\n", f);
        std::fclose(f);
    }
    const auto r = run_rtm("model --config " + ini.string());
    CHECK(r.status == 2);  // a usage error
    CHECK_THAT(r.output, Contains(ini.string()) && Contains("velocity"));
}

TEST_CASE("rtm info describes the shared real files") {
    struct Case {
        const char* file;
        const char* expect;
    };
    for (const Case& c : {Case{"field/f3.sgy", "3D cube: 23 inlines x 18 crosslines"},
                          Case{"field/viking_small.segy", "shot gathers: 4 shots"},
                          Case{"models/marmousi_vp_nx1601_nz401_d7.5m_ms.segy", "2D line: 1601 traces, dx 7.5 m"},
                          Case{"models/overthrust2d_vp_true_nx401_nz121_d25m.segy", "2D line: 401 traces, dx 25 m"}}) {
        const auto p = shared_file(c.file);
        if (p.empty()) continue;
        const auto r = run_rtm("info " + p.string());
        INFO(r.output);
        CHECK(r.status == 0);
        CHECK_THAT(r.output, Contains(c.expect));
    }
}

TEST_CASE("rtm info on a truncated file names the file and the problem") {
    const auto dir = scratch("cli-trunc");
    const auto path = dir / "cut.sgy";
    std::filesystem::copy_file(kModel, path);
    std::filesystem::resize_file(path, std::filesystem::file_size(path) - 1000);
    const auto r = run_rtm("info " + path.string());
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains(path.string()));
}

TEST_CASE("rtm model with a reflectivity does Born modelling and refuses one off the model grid or one that is no perturbation") {
    const auto dir = scratch("cli-born");
    Volume r = io::read_volume(kModel);
    std::fill(r.data.begin(), r.data.end(), 0.f);
    for (int ix = 0; ix < r.grid.nx; ++ix) r.at(ix, 0, 60) = 0.1f;  // a flat reflector at 600 m
    const auto refl = (dir / "refl.sgy").string();
    io::write_volume(refl, r);
    const auto ok = run_rtm(small_job(dir, "--model.born-reflectivity " + refl, "0.9"));
    INFO(ok.output);
    REQUIRE(ok.status == 0);
    CHECK_THAT(ok.output, Contains("Born modelling"));
    const auto shots = io::read_shots((dir / "shots.sgy").string());
    REQUIRE(shots.size() == 2);
    // Born data hold the scattered wave only: nothing before it can arrive (two-way
    // time to 600 m at no more than 2000 m/s above it is > 0.5 s; the wavelet is 0.15 s).
    double early = 0, late = 0;
    for (std::size_t t = 0; t < shots[0].ntraces(); ++t)
        for (int n = 0; n < shots[0].nt; ++n)
            (n * shots[0].dt < 0.45 ? early : late) += std::abs(shots[0].trace(t)[n]);
    CHECK(late > 0);
    CHECK(early < 1e-3 * late);

    const Volume small = constant_model(10, 10, 10, 0.f);
    const auto bad = (dir / "small.sgy").string();
    io::write_volume(bad, small);
    const auto r2 = run_rtm(small_job(dir, "--model.born-reflectivity " + bad));
    CHECK(r2.status == 1);
    CHECK_THAT(r2.output, Contains(bad) && Contains("the reflectivity's grid") && Contains("differs from vp's"));

    // Node for node on vp's grid: the same counts 500 m off, or at another spacing, were
    // taken as on it (and gave the unshifted gathers).
    Volume shifted = r;
    shifted.grid.frame.ox += 500;
    const auto off = (dir / "shifted.sgy").string();
    io::write_volume(off, shifted);
    const auto r3 = run_rtm(small_job(dir, "--model.born-reflectivity " + off));
    INFO(r3.output);
    CHECK(r3.status == 1);
    CHECK_THAT(r3.output, Contains(off) && Contains("differs from vp's"));

    // What is no perturbation: none at all, a velocity model given as dm, a reflection
    // coefficient beyond 1.
    Volume zero = r;
    std::fill(zero.data.begin(), zero.data.end(), 0.f);
    const auto zeros = (dir / "zeros.sgy").string();
    io::write_volume(zeros, zero);
    const auto r4 = run_rtm(small_job(dir, "--model.born-dm " + zeros));
    CHECK(r4.status == 1);
    CHECK_THAT(r4.output, Contains(zeros + ": is zero everywhere"));
    const auto r5 = run_rtm(small_job(dir, "--model.born-dm " + std::string(kModel)));
    CHECK(r5.status == 1);
    CHECK_THAT(r5.output, Contains("no smaller than the background's own 1 / v^2") && Contains("model.vp"));
    Volume five = r;
    five.at(3, 0, 60) = 5.f;
    const auto big = (dir / "five.sgy").string();
    io::write_volume(big, five);
    const auto r6 = run_rtm(small_job(dir, "--model.born-reflectivity " + big));
    CHECK(r6.status == 1);
    CHECK_THAT(r6.output, Contains("node (ix 3, iy 0, iz 60) is 5") && Contains("between -1 and 1"));
    // Under a free surface the top plane scatters nothing: a reflectivity there alone gave
    // gathers of zeros with exit 0. (Without the free surface it scatters.)
    Volume top = zero;
    for (int ix = 0; ix < top.grid.nx; ++ix) top.at(ix, 0, 0) = 0.1f;
    const auto surface = (dir / "top.sgy").string();
    io::write_volume(surface, top);
    const auto r7 = run_rtm(small_job(dir, "--dry-run --propagation.free-surface true --model.born-reflectivity " + surface));
    INFO(r7.output);
    CHECK(r7.status == 1);
    CHECK_THAT(r7.output, Contains(surface + ": is non-zero only on the model's top plane (iz 0)"));
    CHECK(run_rtm(small_job(dir, "--dry-run --model.born-reflectivity " + surface)).status == 0);
}

TEST_CASE("rtm model of a zero-offset survey (one receiver at each source) is planned, not taken for a velocity model") {
    // One trace per gather at its own source is what a velocity model given as a shot
    // file looks like, which rtm migrate refuses; rtm model has no shot file, and such a
    // survey was refused with that advice.
    const auto dir = scratch("cli-zero-offset");
    const auto r = run_rtm("model --model.vp " + kModel + " --acquisition.source-x0 1000 --acquisition.source-dx 1000"
                           " --acquisition.source-nx 2 --acquisition.receiver-x0 0 --acquisition.receiver-nx 1"
                           " --acquisition.receivers-follow-source true --acquisition.record-length 0.3 --dry-run"
                           " --propagation.device cpu --output.shots " + (dir / "shots.sgy").string());
    INFO(r.output);
    CHECK(r.status == 0);
    CHECK_THAT(r.output, !Contains("velocity model given as"));
}

TEST_CASE("receivers on the edge of a rotated 3D model are inside it despite coordinate rounding") {
    // dome3d's axes are rotated 60 degrees in world X/Y, stored in centimetres: a
    // receiver at local y = 0 comes back from world coordinates a few mm outside. (A
    // 0.2 s record: an 8 Hz Ricker has sent 1% of its energy by 0.117 s.)
    const auto dir = scratch("cli-edge3d");
    const auto r = run_rtm("model --model.vp " + (source_dir() / "velocity_models" / "dome3d_vp.segy").string() +
                           " --acquisition.source-x0 1000 --acquisition.source-y0 750"
                           " --acquisition.receiver-x0 0 --acquisition.receiver-dx 500 --acquisition.receiver-nx 5"
                           " --acquisition.receiver-y0 0 --acquisition.receiver-dy 750 --acquisition.receiver-ny 3"
                           " --acquisition.record-length 0.2 --wavelet.ricker-f0 8 --propagation.device cpu"
                           " --output.shots " + (dir / "s.sgy").string());
    INFO(r.output);
    CHECK(r.status == 0);
}

// The bundled shots are what the bundled job writes: data modelled by an older rtm (before
// the time-dispersion correction became the default) differed by 1.9% and went unnoticed.
// Bound: the CPU step is the same arithmetic on any machine up to the compiler's
// contraction of a*b+c, an fp32 rounding (6e-8) a step at most, whose sum over the 2000
// steps of a record grows as its square root when the roundings are independent (3e-6 of
// the trace's norm); 1e-4 keeps a 30x margin and is 200 times below the stale data's.
TEST_CASE("the bundled shot file is what rtm model writes from shots/layers2d.ini today") {
    const auto dir = scratch("cli-model-bundled");
    const auto r = run_rtm("model --config shots/layers2d.ini --propagation.device cpu --output.shots " +
                               (dir / "shots.sgy").string(),
                           "cd " + source_dir().string() + " && ");
    INFO(r.output);
    REQUIRE(r.status == 0);
    const auto now = io::read_shots((dir / "shots.sgy").string());
    const auto bundled = io::read_shots((source_dir() / "shots" / "layers2d.sgy").string());
    REQUIRE(now.size() == bundled.size());
    double diff = 0, norm = 0;
    for (std::size_t s = 0; s < now.size(); ++s) {
        REQUIRE(now[s].data.size() == bundled[s].data.size());
        for (std::size_t i = 0; i < now[s].data.size(); ++i) {
            diff += std::pow(double(now[s].data[i]) - bundled[s].data[i], 2);
            norm += std::pow(double(bundled[s].data[i]), 2);
        }
    }
    INFO("relative L2 difference " << std::sqrt(diff / norm) << " (regenerate with tools/make_bundled_data.sh)");
    CHECK(std::sqrt(diff / norm) < 1e-4);
}
