// Options that would be ignored, or that leave nothing of the result, are refused before
// any work, naming them (exit 2 for options that contradict each other, 1 for values that
// would give a useless result); a copy of a shot file is not migrated twice; rtm model
// stopped by a signal says so and leaves no file behind.
#include <csignal>
#include <filesystem>
#include <string>
#include <thread>

#include "cli_jobs.h"
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
    CHECK_THAT(other_grid.output, Contains(dome + ": its grid") && Contains("differs from the model's"));
    CHECK(!fs::exists(out));
}

TEST_CASE("rtm migrate refuses a filter or taper beside the born-adjoint condition, a mute of the whole image and a taper of the whole record") {
    const auto dir = scratch("cli-conflicts-migrate");
    const auto job = dir / "job";
    const auto dry = [&](const std::string& extra) { return run_rtm(migrate_layers_cmd(shots_file(), job, "--dry-run " + extra)); };
    for (const std::string option : {"--migration.rho-filter true", "--migration.end-taper 0.05"}) {
        const auto r = dry("--migration.condition born-adjoint " + option);
        INFO(r.output);
        CHECK(r.status == 2);
        const std::string key = option.substr(2, option.find(' ') - 2);
        CHECK_THAT(r.output, Contains("options " + key + " and migration.condition born-adjoint: both are given"));
    }
    // Off, or auto (which is none for the exact adjoint), they are accepted.
    const auto off = dry("--migration.condition born-adjoint --migration.rho-filter false --migration.end-taper auto");
    INFO(off.output);
    CHECK(off.status == 0);

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

TEST_CASE("rtm migrate refuses a shot file listed beside a copy of itself, before any shot") {
    const auto dir = scratch("cli-conflicts-copy");
    fs::copy_file(shots_file(), dir / "copy.sgy");
    const auto r = run_rtm(migrate_layers_cmd(shots_file(), dir / "job", "--data.shots " + (dir / "copy.sgy").string()));
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("option data.shots: " + (dir / "copy.sgy").string() + " holds the same bytes as " +
                                  shots_file().string()));
    CHECK(!fs::exists(dir / "job" / "state.json"));
}

TEST_CASE("more CPU threads than the process may use are warned about, naming the option") {
    const unsigned many = 4 * std::max(1u, std::thread::hardware_concurrency()) + 1;  // beyond any affinity mask
    const auto r = run_rtm(migrate_layers_cmd(shots_file(), scratch("cli-conflicts-threads") / "job",
                                              "--dry-run --propagation.threads " + std::to_string(many)));
    INFO(r.output);
    CHECK(r.status == 0);
    CHECK_THAT(r.output, Contains("warning " + std::to_string(many) + " CPU threads (option propagation.threads)") &&
                             Contains("Set propagation.threads to 0"));
}

TEST_CASE("rtm model stopped by SIGTERM stops after the shot under way, exits 143 and leaves neither the file nor its .tmp") {
    const auto dir = scratch("cli-conflicts-signal");
    const auto out = dir / "out.sgy", log = dir / "log.txt";
    // 40 shots one at a time (about 0.1 s each here): the signal comes during the first.
    const int status = interrupt_rtm(model_cmd(out, "--acquisition.source-x0 500 --acquisition.source-dx 50 "
                                                    "--acquisition.source-nx 40 --acquisition.receiver-dx 20 "
                                                    "--acquisition.receiver-nx 200 --propagation.batch 1"),
                                     log, "modelling 40 shot(s)", SIGTERM, log);
    INFO(bytes_of(log));
    CHECK(status == 128 + SIGTERM);
    CHECK_THAT(bytes_of(log), Contains("stopping after the work under way") &&
                                  Contains("stopped by signal 15 after") && Contains(out.string() + " was not written"));
    CHECK(!fs::exists(out));
    CHECK(!fs::exists(dir / "out.sgy.tmp"));
    CHECK(!fs::exists(dir / "out.png"));
}
