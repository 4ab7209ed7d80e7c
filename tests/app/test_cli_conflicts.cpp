// Options that would be ignored, or that leave nothing of the result, are refused before
// any work, naming them (exit 2 for options that contradict each other, 1 for values that
// would give a useless result); a copy of a shot file is not migrated twice; rtm model
// stopped by a signal says so and leaves no file behind.
#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cli_jobs.h"
#include "io/shot_io.h"
#include "physics/wavelet.h"
#include "run_rtm.h"
#include "support/catch.hpp"
#include "support/test_data.h"

using namespace rtm::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

const fs::path& shots_file() {
    static const fs::path p = modelled_layers_shots("cli-conflicts-shots", 2, 1000, 1000, 101, 40, 0.6);
    return p;
}

// rtm model of the layers model into `out`, `extra` options after.
std::string model_cmd(const fs::path& out, const std::string& extra) {
    return "model --model.vp " + layers_vp() + " --acquisition.record-length 0.6 --acquisition.record-dt 0.004 "
           "--propagation.device cpu --output.shots " + out.string() + " " + extra;
}

// A wavelet file of one trace: `samples` at `dt` seconds.
std::string wavelet_file(const fs::path& path, const std::vector<float>& samples, double dt) {
    rtm::ShotGather w;
    w.id = 1;
    w.nt = int(samples.size());
    w.dt = dt;
    w.receivers = {rtm::Position{0, 0, 10}};
    w.data = samples;
    rtm::io::write_shots(path.string(), {w});
    return path.string();
}

}  // namespace

TEST_CASE("rtm model refuses a regular spread's options beside acquisition.geometry and two Born perturbations in a dry run") {
    const auto dir = scratch("cli-conflicts-model");
    const auto out = dir / "out.sgy";
    for (const std::string option : {"--acquisition.source-x0 300", "--acquisition.receiver-nx 5",
                                     "--acquisition.receivers-follow-source true"}) {
        const auto r = run_rtm(model_cmd(out, "--acquisition.geometry " + shots_file().string() + " " + option));
        INFO(r.output);
        CHECK(r.status == 2);
        const std::string key = option.substr(2, option.find(' ') - 2);
        CHECK_THAT(r.output, Contains("options " + key + " and acquisition.geometry: both are given"));
    }
    // The record's sampling may be changed beside a geometry file (documented).
    const auto ok = run_rtm(model_cmd(out, "--acquisition.geometry " + shots_file().string() + " --dry-run"));
    INFO(ok.output);
    CHECK(ok.status == 0);

    // Born modelling's perturbation is read with the model, so a dry run refuses it.
    const std::string born = "--acquisition.source-x0 1000 --acquisition.receiver-dx 40 --acquisition.receiver-nx 50 --dry-run ";
    const auto both = run_rtm(model_cmd(out, born + "--model.born-dm " + layers_vp() + " --model.born-reflectivity " + layers_vp()));
    INFO(both.output);
    CHECK(both.status == 2);
    CHECK_THAT(both.output, Contains("options model.born-dm and model.born-reflectivity: both are given"));
    const std::string dome = (source_dir() / "velocity_models" / "dome3d_vp.segy").string();
    const auto other_grid = run_rtm(model_cmd(out, born + "--model.born-dm " + dome));
    INFO(other_grid.output);
    CHECK(other_grid.status == 1);
    CHECK_THAT(other_grid.output, Contains(dome + ": the perturbation's grid") && Contains("differs from vp's"));
    CHECK(!fs::exists(out));

    // The model's trace coordinates give its spacing (10 m): another model.dx was dropped.
    const auto dx = run_rtm(model_cmd(out, "--acquisition.source-x0 1000 --dry-run --model.dx 5"));
    INFO(dx.output);
    CHECK(dx.status == 1);
    CHECK_THAT(dx.output, Contains("option model.dx: 5 m differs from the spacing of " + layers_vp() +
                                   "'s trace coordinates (10 m)"));
    CHECK(run_rtm(model_cmd(out, "--acquisition.source-x0 1000 --dry-run --model.dx 10")).status == 0);
}

TEST_CASE("rtm migrate refuses a filter or taper or interval beside the born-adjoint condition, bf16 snapshots where they are not kept or not enough, a mute of the whole image and a taper of the whole record") {
    const auto dir = scratch("cli-conflicts-migrate");
    const auto job = dir / "job";
    const auto dry = [&](const std::string& extra) { return run_rtm(migrate_layers_cmd(shots_file(), job, "--dry-run " + extra)); };
    for (const std::string option : {"--migration.rho-filter true", "--migration.end-taper 0.05", "--migration.image-every 5",
                                     "--migration.mute-direct 0.1"}) {
        const auto r = dry("--migration.condition born-adjoint " + option);
        INFO(r.output);
        CHECK(r.status == 2);
        const std::string key = option.substr(2, option.find(' ') - 2);
        CHECK_THAT(r.output, Contains("options " + key + " and migration.condition born-adjoint: both are given"));
    }
    // Off, or auto (which is none for the exact adjoint), they are accepted.
    const auto off = dry("--migration.condition born-adjoint --migration.rho-filter false --migration.end-taper auto "
                         "--migration.image-every 1");
    INFO(off.output);
    CHECK(off.status == 0);
    // bfloat16 snapshots: with cross-correlation only (inverse scattering's difference of
    // snapshots drowned in their rounding: the bundled example's image 62% off), and only
    // where snapshots may be kept.
    for (const auto& [option, said] :
         {std::pair<std::string, std::string>{"--migration.condition inverse-scattering",
                                              "options migration.bf16-snapshots and migration.condition inverse-scattering: both are given"},
          {"--migration.condition born-adjoint", "options migration.bf16-snapshots and migration.condition born-adjoint: both are given"},
          {"--migration.storage boundary", "options migration.bf16-snapshots and migration.storage boundary: both are given"},
          {"--migration.storage checkpoints", "options migration.bf16-snapshots and migration.storage checkpoints: both are given"}}) {
        const auto r = dry("--migration.bf16-snapshots true " + option);
        INFO(option << ": " << r.output);
        CHECK(r.status == 2);
        CHECK_THAT(r.output, Contains(said));
    }
    for (const std::string storage : {"auto", "snapshots"}) {
        const auto r = dry("--migration.bf16-snapshots true --migration.storage " + storage);
        INFO(storage << ": " << r.output);
        CHECK(r.status == 0);
    }

    // The layers model is 151 samples at 10 m: its deepest sample is at 1500 m.
    const auto mute = dry("--migration.top-mute 1500");
    INFO(mute.output);
    CHECK(mute.status == 1);
    CHECK_THAT(mute.output, Contains("option migration.top-mute: zeroes the image above 1500 m, at or below the "
                                     "model's deepest sample (1500 m)"));
    // The records are 0.6 s (151 samples at 4 ms).
    const auto taper = dry("--migration.end-taper 0.6");
    INFO(taper.output);
    CHECK(taper.status == 1);
    CHECK_THAT(taper.output, Contains("option migration.end-taper: 0.6 s is as long as the record of shot 1 in " +
                                      shots_file().string() + " (0.6 s)"));
    CHECK(!fs::exists(job));
}

TEST_CASE("rtm migrate and its dry run refuse a shot file listed beside a copy of itself, before any shot") {
    const auto dir = scratch("cli-conflicts-copy");
    fs::copy_file(shots_file(), dir / "copy.sgy");
    for (const std::string dry : {"", "--dry-run "}) {
        const auto r = run_rtm(migrate_layers_cmd(shots_file(), dir / "job", dry + "--data.shots " + (dir / "copy.sgy").string()));
        INFO(r.output);
        CHECK(r.status == 1);
        CHECK_THAT(r.output, Contains("option data.shots: " + (dir / "copy.sgy").string() + " holds the same bytes as " +
                                      shots_file().string()));
        CHECK(!fs::exists(dir / "job" / "state.json"));
    }
}

TEST_CASE("more CPU threads than the process's CPUs are warned about and more than four a CPU refused") {
    cpu_set_t set;
    CPU_ZERO(&set);
    REQUIRE(sched_getaffinity(0, sizeof set, &set) == 0);
    const int cpus = CPU_COUNT(&set);  // rtm inherits this process's affinity
    const auto job = scratch("cli-conflicts-threads") / "job";
    const auto some = run_rtm(migrate_layers_cmd(shots_file(), job, "--dry-run --propagation.threads " + std::to_string(cpus + 1)));
    INFO(some.output);
    CHECK(some.status == 0);
    CHECK_THAT(some.output, Contains("warning " + std::to_string(cpus + 1) + " CPU threads (option propagation.threads) on the " +
                                     std::to_string(cpus) + " CPUs this process may use"));
    // (100 000 threads crashed libgomp; 10 000 on two cores ran for minutes.)
    const auto many = run_rtm(migrate_layers_cmd(shots_file(), job, "--dry-run --propagation.threads 100000"));
    INFO(many.output);
    CHECK(many.status == 1);
    CHECK_THAT(many.output, Contains("option propagation.threads: 100000 CPU threads on the " + std::to_string(cpus) + " CPUs"));
    const auto env = run_rtm(migrate_layers_cmd(shots_file(), job, "--dry-run"), "OMP_NUM_THREADS=" + std::to_string(4 * cpus + 1) + " ");
    INFO(env.output);
    CHECK(env.status == 1);
    CHECK_THAT(env.output, Contains("OMP_NUM_THREADS: " + std::to_string(4 * cpus + 1) + " CPU threads"));
}

TEST_CASE("an output that is a pipe or a link or names no file and a job folder holding other files are refused before any work") {
    const auto dir = scratch("cli-conflicts-outputs");
    // A finished output is renamed over its path: over /dev/null (as root) that replaced the device.
    const auto fifo = dir / "pipe";
    REQUIRE(mkfifo(fifo.c_str(), 0644) == 0);
    const auto p = run_rtm(model_cmd(dir / "out.sgy", "--acquisition.source-x0 1000 --output.preview " + fifo.string() + " --dry-run"));
    INFO(p.output);
    CHECK(p.status == 1);
    CHECK_THAT(p.output, Contains("option output.preview: '" + fifo.string() + "' is not a regular file"));
    CHECK(fs::is_fifo(fifo));
    // A link: the rename replaced the link and left its target stale (as root, /dev/stdout
    // became a file).
    fs::create_directories(dir / "store");
    std::ofstream(dir / "store" / "real.sgy") << "old";
    fs::create_symlink(dir / "store" / "real.sgy", dir / "link.sgy");
    const auto link = run_rtm(model_cmd(dir / "link.sgy", "--acquisition.source-x0 1000"));
    INFO(link.output);
    CHECK(link.status == 1);
    CHECK_THAT(link.output, Contains("option output.shots: '" + (dir / "link.sgy").string() + "' is a symbolic link (to " +
                                     (dir / "store" / "real.sgy").string() + ")"));
    CHECK(fs::is_symlink(dir / "link.sgy"));
    CHECK(bytes_of(dir / "store" / "real.sgy") == "old");
    // A name the file system takes, but not with the ".tmp" the writer adds: the dry run
    // passed, the real run failed after its work.
    const std::string long_name(250, 'a');
    const auto longer = run_rtm(model_cmd(dir / (long_name + ".sgy"), "--acquisition.source-x0 1000 --dry-run"));
    INFO(longer.output);
    CHECK(longer.status == 1);
    CHECK_THAT(longer.output, Contains("option output.shots: the file name '" + long_name + ".sgy' is 254 bytes long"));
    const auto slash = run_rtm(model_cmd(dir / "new/", "--acquisition.source-x0 1000 --dry-run"));
    INFO(slash.output);
    CHECK(slash.status == 1);
    CHECK_THAT(slash.output, Contains("option output.shots: '" + (dir / "new/").string() + "' names no file"));
    // A folder of the user's: a new job would write image.sgy over theirs.
    const auto mine = dir / "mine";
    fs::create_directories(mine);
    std::ofstream(mine / "image.sgy") << "precious";
    const auto r = run_rtm(migrate_layers_cmd(shots_file(), mine));
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("option output.job: '" + mine.string() + "' holds image.sgy but no job (no state.json)"));
    CHECK(bytes_of(mine / "image.sgy") == "precious");
    // Files of other names (a log of the run) are no obstacle.
    const auto logged = dir / "logged";
    fs::create_directories(logged);
    std::ofstream(logged / "run.log") << "the run's log";
    const auto l = run_rtm(migrate_layers_cmd(shots_file(), logged));
    INFO(l.output);
    CHECK(l.status == 0);
    CHECK(bytes_of(logged / "run.log") == "the run's log");
}

TEST_CASE("values that would leave nothing of the result or that are not numbers are refused before any work") {
    const auto dir = scratch("cli-conflicts-values");
    const auto job = dir / "job";
    struct Bad {
        std::string args, message;
    };
    // The layers model is 4000 m wide and 1500 m deep; the records are 0.6 s.
    for (const Bad& b : {Bad{"--model.smooth 1e20", "option model.smooth: a sigma of 1e+20 m is wider than the model (4000 m across)"},
                         Bad{"--migration.mute-direct 0.6", "option migration.mute-direct: its window of 0.6 s after the direct wave's onset, and the"},
                         Bad{"--migration.top-mute 80 --migration.top-mute-taper inf", "option migration.top-mute-taper: must be a finite number of metres, 0 or more"},
                         Bad{"--migration.top-mute 80 --migration.top-mute-taper 1500", "option migration.top-mute-taper: 1500 m below the top mute at 80 m ends beyond the model's deepest sample (1500 m)"},
                         Bad{"--model.dz inf", "option model.dz: must be 0 (from the file) or a positive number of metres, got inf"}}) {
        const auto r = run_rtm(migrate_layers_cmd(shots_file(), job, "--dry-run " + b.args));
        INFO(b.args << "\n" << r.output);
        CHECK(r.status == 1);
        CHECK_THAT(r.output, Contains(b.message));
    }
    for (const Bad& b : {Bad{"--acquisition.source-x0 nan", "option acquisition.source-x0: is not a finite number of metres"},
                         // (it named the receivers and the record length, for 402 GB of samples)
                         Bad{"--acquisition.source-x0 1000 --acquisition.record-dt 1e-9", "option acquisition.record-dt: 1e-09 s is not a SEG-Y sample interval"},
                         // (the plan passed 40 ms; the writer refused it after the work, naming no option)
                         Bad{"--acquisition.source-x0 1000 --acquisition.record-dt 0.04", "option acquisition.record-dt: 0.04 s is not a SEG-Y sample interval (whole microseconds, 1 to 32767)"},
                         // (the plan said waves ran -993158237040211200% fast)
                         Bad{"--acquisition.source-x0 1000 --wavelet.ricker-f0 1e9", "the wavelet's energy reaches 2.5e+09 Hz, at or above the time step's Nyquist frequency"}}) {
        const auto r = run_rtm("model --model.vp " + layers_vp() + " --acquisition.record-length 0.6 --propagation.device cpu "
                               "--dry-run --output.shots " + (dir / "out.sgy").string() + " " + b.args);
        INFO(b.args << "\n" << r.output);
        CHECK(r.status == 1);
        CHECK_THAT(r.output, Contains(b.message));
    }
    // An aperture beyond the model is the whole model (it overflowed to a 1-trace window).
    const auto wide = run_rtm("migrate --model.vp " + layers_vp_smooth() + " --data.shots " + shots_file().string() +
                              " --migration.aperture 1e30 --propagation.device cpu --dry-run --output.job " + job.string());
    INFO(wide.output);
    CHECK(wide.status == 0);
    CHECK_THAT(wide.output, Contains("largest shot window 401 x 1 x 151"));
    // A wavelet file whose trace is zeros models zeros.
    rtm::ShotGather w;
    w.id = 1;
    w.nt = 100;
    w.dt = 0.001;
    w.receivers = {rtm::Position{0, 0, 10}};
    w.data.assign(100, 0.f);
    rtm::io::write_shots((dir / "zeros.sgy").string(), {w});
    const auto zeros = run_rtm(model_cmd(dir / "out.sgy", "--acquisition.source-x0 1000 --dry-run --wavelet.file " + (dir / "zeros.sgy").string()));
    INFO(zeros.output);
    CHECK(zeros.status == 1);
    CHECK_THAT(zeros.output, Contains((dir / "zeros.sgy").string() + ": its trace, the source wavelet, is all zeros"));
    // A 12 Hz wavelet stored at 0.1 ms: its sampling reaches 5 kHz, beyond the step's
    // Nyquist frequency, but its band, measured from its spectrum, does not.
    const double pi = std::acos(-1.0);
    w.nt = 2000;
    w.dt = 0.0001;
    w.data.resize(std::size_t(w.nt));
    for (int n = 0; n < w.nt; ++n) {
        const double a = pi * 12 * (n * w.dt - 0.1);
        w.data[std::size_t(n)] = float((1 - 2 * a * a) * std::exp(-a * a));
    }
    rtm::io::write_shots((dir / "fine.sgy").string(), {w});
    const auto fine = run_rtm(model_cmd(dir / "out.sgy", "--acquisition.source-x0 1000 --dry-run --wavelet.file " + (dir / "fine.sgy").string()));
    INFO(fine.output);
    CHECK(fine.status == 0);
}

TEST_CASE("a wavelet file of more than one trace is refused naming the file and its traces: a velocity model too") {
    const auto dir = scratch("cli-conflicts-wavelet-traces");
    // A velocity model given as the wavelet: its first trace (a velocity log) was the wavelet.
    const auto vp = run_rtm(model_cmd(dir / "out.sgy", "--acquisition.source-x0 1000 --dry-run --wavelet.file " + layers_vp()));
    INFO(vp.output);
    CHECK(vp.status == 1);
    CHECK_THAT(vp.output, Contains(layers_vp() + ": holds 401 traces, where a wavelet file holds one: the source wavelet, "
                                   "which rtm uses for every shot. Give a SEG-Y file of one trace, the source wavelet "
                                   "(a velocity model goes in model.vp)"));
    // One trace per shot is still two wavelets: shot 2's would have been dropped.
    rtm::ShotGather w;
    w.nt = 50;
    w.dt = 0.001;
    w.receivers = {rtm::Position{0, 0, 10}};
    w.data.assign(50, 0.f);
    w.data[5] = 1.f;
    std::vector<rtm::ShotGather> two(2, w);
    two[0].id = 1, two[1].id = 2, two[1].source.x = 100;
    rtm::io::write_shots((dir / "two.sgy").string(), two);
    const auto r = run_rtm(model_cmd(dir / "out.sgy", "--acquisition.source-x0 1000 --dry-run --wavelet.file " + (dir / "two.sgy").string()));
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains((dir / "two.sgy").string() + ": holds 2 traces, where a wavelet file holds one"));
    // A sample interval of 0 (trace byte 117 and binary byte 3217, both 16-bit, zeroed) is
    // refused with the file's other headers, before the wavelet is used.
    const std::string zero = wavelet_file(dir / "zero-dt.sgy", std::vector<float>(50, 1.f), 0.001);
    {
        std::fstream f(zero, std::ios::in | std::ios::out | std::ios::binary);
        const char nul[2] = {0, 0};
        f.seekp(3216), f.write(nul, 2);
        f.seekp(3600 + 116), f.write(nul, 2);
    }
    const auto z = run_rtm(model_cmd(dir / "out.sgy", "--acquisition.source-x0 1000 --dry-run --wavelet.file " + zero));
    INFO(z.output);
    CHECK(z.status == 1);
    CHECK_THAT(z.output, Contains(zero + ": the sample interval is zero or negative"));
}

TEST_CASE("a wavelet file's band is measured from its spectrum: a 12 Hz Ricker at 0.1 ms gets the built-in Ricker's") {
    const auto dir = scratch("cli-conflicts-wavelet-band");
    // The built-in Ricker's samples: 3 / f0 at 0.1 ms, centred at 1.5 / f0.
    const double f0 = 12, dt = 1e-4, pi = std::acos(-1.0);
    std::vector<float> samples(std::size_t(3 / f0 / dt) + 1);
    for (std::size_t n = 0; n < samples.size(); ++n) {
        const double a = pi * f0 * (double(n) * dt - 1.5 / f0);
        samples[n] = float((1 - 2 * a * a) * std::exp(-a * a));
    }
    const std::string file = wavelet_file(dir / "ricker.sgy", samples, dt);
    const auto r = run_rtm(model_cmd(dir / "out.sgy", "--acquisition.source-x0 1000 --dry-run --wavelet.file " + file));
    INFO(r.output);
    CHECK(r.status == 0);
    const std::string said = "wavelet from " + file + ": 2501 samples at 0.1 ms, peak ";
    const auto at = r.output.find(said);
    REQUIRE(at != std::string::npos);
    CHECK_THAT(r.output.substr(at), Contains(" Hz (-30 dB), from its spectrum"));
    const double peak = std::stod(r.output.substr(at + said.size()));
    const auto up = r.output.find("energy up to ", at);
    REQUIRE(up != std::string::npos);
    const double f_max = std::stod(r.output.substr(up + 13));
    // The bound: the 2501 samples are padded to 16384 (the power of two >= 4 x 2501), whose
    // bins, 1 / (16384 x 0.1 ms) = 0.61 Hz apart, are exact samples of the wavelet's
    // spectrum (its ends are 2e-10 of its peak: the cut adds nothing at -30 dB). The
    // -30 dB point lies between the last bin above it and the next, and so does the
    // interpolated one: they differ by less than a bin. The Ricker's spectrum
    // (f / f0)^2 exp(1 - (f / f0)^2) is -30 dB at 2.5087 f0 = 30.10 Hz, 0.10 Hz above
    // ricker_max_frequency (its -29.7 dB at 2.5 f0); the log's 4 digits add 0.005 Hz.
    const double bin = 1 / (16384 * dt);
    CHECK(std::abs(f_max - rtm::ricker_max_frequency(f0)) <= 0.10 + 0.005 + bin);  // 2.4%
    CHECK(std::abs(f_max - 30.10) <= 0.005 + bin);
    // Its dominant frequency is the Ricker's f0 (the spectrum's maximum, at a bin: within
    // half a bin of it, plus the log's rounding), not wavelet.ricker-f0's 10 Hz.
    CHECK(std::abs(peak - f0) <= bin / 2 + 0.005);
}

TEST_CASE("a wavelet whose energy comes after the record is refused and one peaking late is warned about") {
    const auto dir = scratch("cli-conflicts-wavelet-late");
    // 10 Hz Rickers at 1 ms, peaking at t_peak after their first sample, which rtm fires
    // at the shot's time 0. 1% of a Ricker's energy has come 0.93 / f0 = 0.093 s into
    // its 3 / f0 (tests/physics/test_wavelet.cpp), so peaking at 0.95 s it sends nothing within
    // the 0.6 s record: every gather was zero, with exit 0. Peaking at 0.3 s (zero-phase,
    // centred in a 0.6 s trace) it is 3 periods late, where a Ricker peaks at 1.5.
    const double f0 = 10, dt = 1e-3, pi = std::acos(-1.0);
    const auto ricker_at = [&](double t_peak, std::size_t n) {
        std::vector<float> samples(n);
        for (std::size_t k = 0; k < n; ++k) {
            const double a = pi * f0 * (double(k) * dt - t_peak);
            samples[k] = float((1 - 2 * a * a) * std::exp(-a * a));
        }
        return samples;
    };
    const std::string late = wavelet_file(dir / "late.sgy", ricker_at(0.95, 1101), dt);
    const auto r = run_rtm(model_cmd(dir / "out.sgy", "--acquisition.source-x0 1000 --dry-run --wavelet.file " + late));
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("shot 1: its record ends 0.6 s after the shot, before the wavelet of " + late +
                                  " has sent 1% of its energy (by 0.89"));
    const std::string centred = wavelet_file(dir / "centred.sgy", ricker_at(0.3, 601), dt);
    const auto c = run_rtm(model_cmd(dir / "out.sgy", "--acquisition.source-x0 1000 --dry-run --wavelet.file " + centred));
    INFO(c.output);
    CHECK(c.status == 0);
    CHECK_THAT(c.output, Contains(centred + ": its largest sample comes 0.3 s after its first, "));
    const std::string on_time = wavelet_file(dir / "ricker.sgy", ricker_at(1.5 / f0, 301), dt);
    const auto o = run_rtm(model_cmd(dir / "out.sgy", "--acquisition.source-x0 1000 --dry-run --wavelet.file " + on_time));
    INFO(o.output);
    CHECK(o.status == 0);
    CHECK_THAT(o.output, !Contains("its largest sample comes"));
    // wavelet.f-max is a wavelet file's band; beside the built-in Ricker it was ignored.
    const auto f = run_rtm(model_cmd(dir / "out.sgy", "--acquisition.source-x0 1000 --dry-run --wavelet.f-max 50"));
    INFO(f.output);
    CHECK(f.status == 2);
    CHECK_THAT(f.output, Contains("option wavelet.f-max: applies to a wavelet file (wavelet.file), and none is given"));
    // 0, its default (a configuration template's), says nothing and is accepted.
    const auto zero = run_rtm(model_cmd(dir / "out.sgy", "--acquisition.source-x0 1000 --dry-run --wavelet.f-max 0"));
    INFO(zero.output);
    CHECK(zero.status == 0);
}

TEST_CASE("a spike wavelet file reaching the step's Nyquist frequency is refused naming the file and passes at a finer step") {
    const auto dir = scratch("cli-conflicts-wavelet-spike");
    // An impulse at 0.5 ms: its spectrum is flat up to its 1 kHz Nyquist frequency, and
    // the step (1 ms: the 4 ms record interval / 4, for the CFL limit of 1.26 ms) samples
    // up to 500 Hz. It was taken to end at 80% of its own Nyquist frequency and not checked.
    std::vector<float> samples(200, 0.f);
    samples[20] = 1.f;
    const std::string file = wavelet_file(dir / "spike.sgy", samples, 0.0005);
    const auto r = run_rtm(model_cmd(dir / "out.sgy", "--acquisition.source-x0 1000 --dry-run --wavelet.file " + file));
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains(file + " (its spectrum): the wavelet's energy reaches 1000 Hz, at or above the time "
                                         "step's Nyquist frequency (500 Hz at dt 1 ms): it cannot be propagated"));
    // At 0.2 ms the step samples up to 2.5 kHz.
    const auto fine = run_rtm(model_cmd(dir / "out.sgy", "--acquisition.source-x0 1000 --dry-run --propagation.dt 0.0002 "
                                                         "--wavelet.file " + file));
    INFO(fine.output);
    CHECK(fine.status == 0);
    CHECK_THAT(fine.output, Contains("energy up to 1000 Hz (-30 dB), from its spectrum"));
    // wavelet.f-max still states a band over the measured one.
    const auto stated = run_rtm(model_cmd(dir / "out.sgy", "--acquisition.source-x0 1000 --dry-run --wavelet.f-max 200 "
                                                           "--wavelet.file " + file));
    INFO(stated.output);
    CHECK(stated.status == 0);
    CHECK_THAT(stated.output, Contains("energy up to 200 Hz (option wavelet.f-max; from its spectrum, 1000 Hz at -30 dB)"));
}

TEST_CASE("a '#' inside an INI value and a byte-order mark and config or help keys are refused naming the line and a '#' after a space is a comment") {
    const auto dir = scratch("cli-conflicts-ini");
    const auto write = [&](const char* name, const std::string& text) {
        std::ofstream(dir / name, std::ios::binary) << text;
        return (dir / name).string();
    };
    const std::string vp = "[model]\nvp = " + layers_vp();
    const auto cut = run_rtm("model --config " + write("cut.ini", vp + "\n[output]\nshots = " + (dir / "run#2.sgy").string() + "\n") +
                             " --acquisition.source-x0 1000 --acquisition.record-length 0.6 --propagation.device cpu --dry-run");
    INFO(cut.output);
    CHECK(cut.status == 2);
    CHECK_THAT(cut.output, Contains("cut.ini, line 4") && Contains("has a '#' inside a value"));
    const auto bom = run_rtm("model --config " + write("bom.ini", "\xEF\xBB\xBF" + vp + "\n") + " --dry-run");
    INFO(bom.output);
    CHECK(bom.status == 2);
    CHECK_THAT(bom.output, Contains("begins with a UTF-8 byte-order mark"));
    const auto comment = run_rtm("model --config " + write("ok.ini", "# a job\n" + vp + "   # the model\n") +
                                 " --acquisition.source-x0 1000 --acquisition.record-length 0.6 --propagation.device cpu "
                                 "--dry-run --output.shots " + (dir / "out.sgy").string());
    INFO(comment.output);
    CHECK(comment.status == 0);
    // A ';' comment, as other INI dialects write one: Boost's parser named no line.
    const auto semi = run_rtm("model --config " + write("semi.ini", "[model]\n; the model\nvp = " + layers_vp() + "\n") +
                              " --dry-run");
    INFO(semi.output);
    CHECK(semi.status == 2);
    CHECK_THAT(semi.output, Contains("semi.ini, line 2") && Contains("Start comments with '#'"));
    // config and help are the command line's: in a file they were ignored (an included
    // file's options dropped without a word).
    for (const std::string& key : {"config = " + (dir / "ok.ini").string(), std::string("help = 1")}) {
        const auto r = run_rtm("model --config " + write("nested.ini", key + "\n" + vp + "\n") + " --dry-run");
        INFO(key << ": " << r.output);
        CHECK(r.status == 2);
        CHECK_THAT(r.output, Contains("nested.ini: '" + key.substr(0, key.find(' ')) +
                                      "' is an option of the command line alone"));
    }
}

// A constant-or-file option given what is neither (it was looked for as a file and
// reported as "no such file", naming no option), and an input given as nothing (it was
// dropped: an isotropic run).
TEST_CASE("an anisotropy value that is neither a number nor a file and an empty input are usage errors naming the option") {
    const auto dir = scratch("cli-conflicts-not-a-number");
    for (const char* bad : {"10%", "0,1", "0.1abc"}) {
        const auto r = run_rtm(model_cmd(dir / "out.sgy", "--acquisition.source-x0 1000 --dry-run --model.epsilon " +
                                                              std::string(bad)));
        INFO(r.output);
        CHECK(r.status == 2);
        CHECK_THAT(r.output, Contains("option model.epsilon: '" + std::string(bad) + "' is neither a number nor an existing file"));
    }
    // A missing file's path is said as model.vp's: no such file, where relative paths start.
    for (const char* missing : {"eps.sgy", "models/eps"}) {
        const auto r = run_rtm(model_cmd(dir / "out.sgy", "--acquisition.source-x0 1000 --dry-run --model.epsilon " +
                                                              std::string(missing)));
        INFO(r.output);
        CHECK(r.status == 1);
        CHECK_THAT(r.output, Contains("option model.epsilon: " + std::string(missing) + ": no such file") &&
                                 Contains("relative paths start at"));
    }
    // Beyond double's range it is still a number: its value's range is named.
    const auto huge = run_rtm(model_cmd(dir / "out.sgy", "--acquisition.source-x0 1000 --dry-run --model.epsilon 1e400"));
    INFO(huge.output);
    CHECK(huge.status == 1);
    CHECK_THAT(huge.output, Contains("option model.epsilon: epsilon at node (ix 0, iy 0, iz 0) is inf, outside (-0.5, 1]"));
    for (const char* option : {"--model.epsilon", "--model.born-dm", "--wavelet.file"}) {
        const auto r = run_rtm(model_cmd(dir / "out.sgy", "--acquisition.source-x0 1000 --dry-run " + std::string(option) + " ''"));
        INFO(r.output);
        CHECK(r.status == 2);
        CHECK_THAT(r.output, Contains("option " + std::string(option).substr(2) + ": is empty"));
    }
}

TEST_CASE("a job folder in use by one rtm migrate is refused to a second until the first ends") {
    const auto dir = scratch("cli-conflicts-lock");
    const auto job = dir / "job", log = dir / "first.log";
    // The first run: the bundled migration (eight 2 s shots, seconds on one thread),
    // stopped by SIGTERM once the second was refused.
    const std::string bundled = "migrate --config shots/layers2d_migrate.ini --propagation.device cpu --output.job " +
                                job.string();
    const std::string here = "cd " + source_dir().string() + " && ";
    // (Logged once the folder is locked and the shots begin.)
    const pid_t pid = start_rtm(bundled + " --propagation.threads 1", log, "migrating up to", here);
    REQUIRE(pid > 0);
    const auto second = run_rtm(bundled, here);
    CHECK(end_rtm(pid, SIGTERM) == 128 + SIGTERM);
    INFO(bytes_of(log));
    INFO(second.output);
    CHECK(second.status == 1);
    CHECK_THAT(second.output, Contains(job.string() + ": is in use by another rtm migrate"));
    // Once the first has ended, the folder is free: the job resumes and completes.
    const auto after = run_rtm(bundled, here);
    INFO(after.output);
    CHECK(after.status == 0);
}

TEST_CASE("rtm model stopped by SIGTERM stops after the shot under way, exits 143 and leaves neither the file nor its .tmp") {
    const auto dir = scratch("cli-conflicts-signal");
    const auto out = dir / "out.sgy", log = dir / "log.txt";
    // 40 shots one at a time (about 0.1 s each here): the signal comes during the first.
    const int status = interrupt_rtm(model_cmd(out, "--acquisition.source-x0 500 --acquisition.source-dx 50 "
                                                    "--acquisition.source-nx 40 --acquisition.receiver-dx 20 "
                                                    "--acquisition.receiver-nx 200 --propagation.batch 1"),
                                     log, "modelling 40 shots", SIGTERM, log);
    INFO(bytes_of(log));
    CHECK(status == 128 + SIGTERM);
    CHECK_THAT(bytes_of(log), Contains("stopping after the work under way") &&
                                  Contains("stopped by signal 15 after") && Contains(out.string() + " was not written"));
    CHECK(!fs::exists(out));
    CHECK(!fs::exists(dir / "out.sgy.tmp"));
    CHECK(!fs::exists(dir / "out.png"));
}
