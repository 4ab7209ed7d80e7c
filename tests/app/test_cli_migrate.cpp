// `rtm migrate` end to end: outputs, resuming interrupted jobs bit for bit, refusing
// a job folder that holds another job or changed inputs, failed shots, checkpoints.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "io/model_io.h"
#include "io/shot_io.h"
#include "cli_jobs.h"
#include "run_rtm.h"
#include "support/catch.hpp"
#include "support/test_data.h"

using namespace rtm;
using namespace rtm::test;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
namespace fs = std::filesystem;

namespace {

const std::string kVp = layers_vp();
const std::string kSmooth = layers_vp_smooth();

const fs::path& shots_file() {
    static const fs::path p = modelled_layers_shots("cli-migrate-shots", 4, 800, 800, 161, 25, 0.8);
    return p;
}

std::string migrate_cmd(const fs::path& job, const std::string& extra = "") {
    return migrate_layers_cmd(shots_file(), job, extra);
}


}  // namespace

TEST_CASE("rtm migrate writes the image, the illumination and a PNG on the model's grid") {
    const auto job = scratch("cli-migrate-full") / "job";
    const auto r = run_rtm(migrate_cmd(job));
    INFO(r.output);
    REQUIRE(r.status == 0);
    CHECK_THAT(r.output, Contains("4 shots stacked"));
    for (const char* f : {"image.sgy", "illumination.sgy", "image.png", "state.json"}) CHECK(fs::exists(job / f));
    const Volume img = io::read_volume((job / "image.sgy").string());
    CHECK(img.grid.nx == 401);
    CHECK(img.grid.nz == 151);
}

// The next shot is claimed and read while the one before it propagates
// (pipeline/migration_job.cpp): on the timeline (core/phases.h), the second shot's read
// starts before the first shot's source steps end, on another thread.
TEST_CASE("rtm migrate reads the next shot while the one before it propagates") {
    const auto dir = scratch("cli-migrate-ahead");
    const auto file = dir / "timeline.json";
    const auto r = run_rtm(migrate_cmd(dir / "job"), "RTM_TIMELINE=" + file.string() + " ");
    INFO(r.output);
    REQUIRE(r.status == 0);
    std::ifstream in(file);
    const auto events = nlohmann::json::parse(in).at("traceEvents");
    std::vector<nlohmann::json> reads, steps;
    for (const auto& e : events) {
        if (e.at("name") == "read shots") reads.push_back(e);
        if (e.at("name") == "source steps") steps.push_back(e);
    }
    const auto by_start = [](const auto& a, const auto& b) { return a.at("ts").template get<double>() < b.at("ts").template get<double>(); };
    std::sort(reads.begin(), reads.end(), by_start);
    std::sort(steps.begin(), steps.end(), by_start);
    REQUIRE(reads.size() >= 2);
    REQUIRE(steps.size() == 4);
    const double first_steps_end = steps[0].at("ts").get<double>() + steps[0].at("dur").get<double>();
    CHECK(reads[1].at("ts").get<double>() < first_steps_end);
    CHECK(reads[1].at("tid") != steps[0].at("tid"));
}

TEST_CASE("an interrupted migration job resumes to an image identical bit for bit to an uninterrupted one") {
    const auto dir = scratch("cli-migrate-resume");
    // Catch runs the case once per section: the uninterrupted job only once.
    static const std::string whole = [&] {
        REQUIRE(run_rtm(migrate_cmd(dir / "whole")).status == 0);
        return bytes_of(dir / "whole" / "image.sgy");
    }();
    REQUIRE(!whole.empty());

    SECTION("stopped after each shot and resumed") {
        for (int i = 0; i < 4; ++i) {
            const auto r = run_rtm(migrate_cmd(dir / "steps", "--migration.max-shots 1"));
            INFO(r.output);
            REQUIRE(r.status == 0);
        }
        CHECK(bytes_of(dir / "steps" / "image.sgy") == whole);
        // Complete: the products are its result, and no stack or part is kept; running
        // it again changes nothing.
        for (const auto& e : fs::directory_iterator(dir / "steps"))
            CHECK_THAT(e.path().filename().string(), !StartsWith("stack-") && !StartsWith("part-"));
        const auto again = run_rtm(migrate_cmd(dir / "steps"));
        INFO(again.output);
        CHECK(again.status == 0);
        CHECK_THAT(again.output, Contains("is complete") && Contains("nothing to do"));
        CHECK(bytes_of(dir / "steps" / "image.sgy") == whole);
    }
    SECTION("killed in the middle of a shot and resumed") {
        const auto job = dir / "killed";
        // Checkpoints after every shot, so the kill comes after one (by default they come
        // every few minutes, and at the end of a run, which the section above tests);
        // killed once the first shot is in the rank's checkpoint (the job has begun its second).
        interrupt_rtm(migrate_cmd(job, "--migration.checkpoint-minutes 0"), job / "part-0.bin", "RTMPART3", SIGKILL);
        const auto r = run_rtm(migrate_cmd(job));
        INFO(r.output);
        REQUIRE(r.status == 0);
        CHECK_THAT(r.output, Contains("recovered") && Contains("resuming job"));
        CHECK(bytes_of(job / "image.sgy") == whole);
    }
    // SIGHUP (a closed terminal or ssh session) as SIGTERM: it died at once, losing up to
    // checkpoint-minutes of every rank's work, without a word.
    SECTION("stopped by SIGTERM or SIGHUP after a shot (it checkpoints, writes the image, exits 128 + the signal) and resumed") {
        for (const int sig : {SIGTERM, SIGHUP}) {
            const auto job = dir / ("stopped-" + std::to_string(sig));
            const auto log = dir / ("stopped-" + std::to_string(sig) + ".log");
            // Stopped once the first shot is stacked (the second is under way).
            const int status = interrupt_rtm(migrate_cmd(job), log, "(1 of 4 done", sig, log);
            INFO(bytes_of(log));
            CHECK(status == 128 + sig);
            CHECK_THAT(bytes_of(log), Contains("stopping on signal " + std::to_string(sig)) && Contains("writing the image of"));
            CHECK(fs::exists(job / "image.sgy"));
            const auto r = run_rtm(migrate_cmd(job));
            INFO(r.output);
            REQUIRE(r.status == 0);
            CHECK_THAT(r.output, Contains("resuming job"));
            CHECK(bytes_of(job / "image.sgy") == whole);
        }
    }
    SECTION("its log into a pipe whose reader has gone (| head) runs to the end") {
        // SIGPIPE killed it at the first log line after head had exited.
        const auto job = dir / "piped";
        run_with_default_signals(std::string(RTM_BINARY) + " " + migrate_cmd(job) + " 2>&1 | head -1");
        CHECK(bytes_of(job / "image.sgy") == whole);
    }
}

// Several shot files: every job shot is read from its own file (each gather from the
// file it came from), so the stack does not depend on the files' order.
TEST_CASE("rtm migrate of two shot files reads each shot from its own file: the image is the same in either order") {
    const auto dir = scratch("cli-migrate-two-files");
    const auto other = dir / "other.sgy";
    const auto m = run_rtm("model --model.vp " + kVp +
                           " --acquisition.source-x0 1300 --acquisition.source-dx 1300 --acquisition.source-nx 2"
                           " --acquisition.receiver-x0 100 --acquisition.receiver-dx 25 --acquisition.receiver-nx 121"
                           " --acquisition.record-length 0.8 --acquisition.record-dt 0.004 --wavelet.ricker-f0 10"
                           " --propagation.device cpu --output.shots " + other.string());
    INFO(m.output);
    REQUIRE(m.status == 0);
    const auto migrate = [&](const fs::path& first, const fs::path& second, const char* job) {
        return run_rtm("migrate --model.vp " + kSmooth + " --data.shots " + first.string() + " --data.shots " +
                       second.string() + " --wavelet.ricker-f0 10 --migration.aperture 800 --propagation.device cpu "
                       "--output.job " + (dir / job).string());
    };
    const auto ab = migrate(shots_file(), other, "ab"), ba = migrate(other, shots_file(), "ba");
    INFO(ab.output);
    INFO(ba.output);
    REQUIRE(ab.status == 0);
    REQUIRE(ba.status == 0);
    CHECK_THAT(ab.output, Contains("6 shots stacked") && Contains("from " + other.string()) &&
                              Contains("from " + shots_file().string()));
    CHECK(bytes_of(dir / "ab" / "image.sgy") == bytes_of(dir / "ba" / "image.sgy"));
    // The second file's shots are in it: not the first file's image alone.
    REQUIRE(run_rtm(migrate_cmd(dir / "a")).status == 0);
    CHECK(bytes_of(dir / "ab" / "image.sgy") != bytes_of(dir / "a" / "image.sgy"));
}

TEST_CASE("a job folder holding a job with other settings is refused, not mixed") {
    const auto job = scratch("cli-migrate-other") / "job";
    REQUIRE(run_rtm(migrate_cmd(job, "--migration.max-shots 1")).status == 0);
    const auto r = run_rtm(migrate_cmd(job, "--migration.condition inverse-scattering"));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains(job.string()) && Contains("other settings"));
    // It names what changed, with both values.
    CHECK_THAT(r.output, Contains("migration.condition was cross-correlation, now inverse-scattering"));
    // model.smooth and model.elliptic-above at 0 (off) are as if not given (jobs started
    // before they existed resume); another value is another setting.
    CHECK(run_rtm(migrate_cmd(job, "--migration.max-shots 1 --model.smooth 0 --model.elliptic-above 0")).status == 0);
    const auto e = run_rtm(migrate_cmd(job, "--model.elliptic-above 100"));
    CHECK(e.status == 1);
    CHECK_THAT(e.output, Contains("other settings") && Contains("model.elliptic-above"));
    // The model's spacing is a setting as used: stating the file's own (10 m, from its
    // trace coordinates and sample interval) resumes the job.
    const auto spacing = run_rtm(migrate_cmd(job, "--migration.max-shots 1 --model.dx 10 --model.dz 10"));
    INFO(spacing.output);
    CHECK(spacing.status == 0);
    CHECK_THAT(spacing.output, Contains("resuming job"));
    // A number given as text is one setting however it is written ("model.theta was 30,
    // now 30.0" was refused).
    const auto muted = scratch("cli-migrate-other") / "muted";
    REQUIRE(run_rtm(migrate_cmd(muted, "--migration.max-shots 1 --migration.mute-direct 0.1")).status == 0);
    const auto same = run_rtm(migrate_cmd(muted, "--migration.max-shots 1 --migration.mute-direct 0.10"));
    INFO(same.output);
    CHECK(same.status == 0);
    CHECK_THAT(same.output, Contains("resuming job"));
    // A model parameter given as a number, then as a file (an input file, not a setting):
    // said so (it said "was 0.1, now unset").
    Volume eps = io::read_volume(layers_vp_smooth());
    std::fill(eps.data.begin(), eps.data.end(), 0.1f);
    const auto aniso_dir = scratch("cli-migrate-other-aniso");
    const std::string eps_file = (aniso_dir / "epsilon.sgy").string();
    io::write_volume(eps_file, eps);
    const auto aniso = aniso_dir / "job";
    REQUIRE(run_rtm(migrate_cmd(aniso, "--migration.max-shots 1 --model.epsilon 0.1")).status == 0);
    const auto as_file = run_rtm(migrate_cmd(aniso, "--model.epsilon " + eps_file));
    INFO(as_file.output);
    CHECK(as_file.status == 1);
    CHECK_THAT(as_file.output, Contains("model.epsilon was 0.1, now a file"));
}

// A full disk when the products are written must not lose the shots migrated since the
// last commit: the stack is committed instead, and a rerun writes the products alone.
TEST_CASE("a job whose image cannot be written keeps its stack and a rerun writes the image without migrating again") {
    const auto dir = scratch("cli-migrate-disk-full");
    REQUIRE(run_rtm(migrate_cmd(dir / "whole")).status == 0);
    const auto job = dir / "job";
    REQUIRE(run_rtm(migrate_cmd(job, "--migration.max-shots 2")).status == 0);
    // The image's temporary file on a device that is always full (ENOSPC on every write).
    fs::create_symlink("/dev/full", job / "image.sgy.tmp");
    const auto full = run_rtm(migrate_cmd(job));
    INFO(full.output);
    CHECK(full.status == 1);
    CHECK_THAT(full.output, Contains("the image and its companions could not be written") &&
                                Contains("the stack of every shot is kept in the job folder"));
    // None of the products is left: not the last run's image beside this run's previews.
    for (const char* product : {"image.sgy", "illumination.sgy", "image.png", "image.sgy.tmp"})
        CHECK_FALSE(fs::exists(fs::symlink_status(job / product)));
    const auto again = run_rtm(migrate_cmd(job));
    INFO(again.output);
    REQUIRE(again.status == 0);
    CHECK_THAT(again.output, Contains("resuming job") && Contains("migrated 0 shots in this run"));
    CHECK(bytes_of(job / "image.sgy") == bytes_of(dir / "whole" / "image.sgy"));
}

TEST_CASE("a job resumed with its shot files in another order is refused and the order named") {
    const auto dir = scratch("cli-migrate-reordered");
    const auto other = modelled_layers_shots("cli-migrate-reordered-shots", 2, 1300, 1300, 121, 25, 0.8);
    const auto migrate = [&](const fs::path& first, const fs::path& second) {
        return run_rtm("migrate --model.vp " + kSmooth + " --data.shots " + first.string() + " --data.shots " +
                       second.string() + " --wavelet.ricker-f0 10 --migration.aperture 800 --propagation.device cpu "
                       "--migration.max-shots 1 --output.job " + (dir / "job").string());
    };
    REQUIRE(migrate(shots_file(), other).status == 0);
    const auto r = migrate(other, shots_file());
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("was started with as data.shots 2, not as data.shots 1") &&
                             Contains("another order") && !Contains("Put the original file back"));
    // A file left out is not a reordering.
    const auto fewer = run_rtm("migrate --model.vp " + kSmooth + " --data.shots " + other.string() +
                               " --wavelet.ricker-f0 10 --migration.aperture 800 --propagation.device cpu "
                               "--output.job " + (dir / "job").string());
    INFO(fewer.output);
    CHECK(fewer.status == 1);
    // Named: the job's inputs and this run's.
    CHECK_THAT(fewer.output, Contains("holds a job over 3 input files (data.shots 1, data.shots 2, model.vp), and this "
                                      "run gives 2 (") &&
                                 Contains("data.shots 1 " + other.string()) && !Contains("another order"));
}

// A job folder knows its inputs by their options and content, not by the paths typed: a
// cluster job resumed from another working folder, or through a link, goes on.
TEST_CASE("a job resumes when its inputs are reached by other paths and gives the uninterrupted image") {
    const auto dir = scratch("cli-migrate-paths");
    REQUIRE(run_rtm(migrate_cmd(dir / "whole")).status == 0);
    fs::create_symlink(shots_file(), dir / "linked.sgy");
    fs::create_symlink(kSmooth, dir / "vp.sgy");
    const auto started = run_rtm("migrate --model.vp " + (dir / "vp.sgy").string() + " --data.shots " +
                                 (dir / "linked.sgy").string() + " --wavelet.ricker-f0 10 --migration.aperture 800 "
                                 "--propagation.device cpu --output.job job --migration.max-shots 2",
                                 "cd " + dir.string() + " && ");
    INFO(started.output);
    REQUIRE(started.status == 0);
    // Resumed from another folder, with the files' own paths and the job by its full path.
    const auto resumed = run_rtm(migrate_cmd(dir / "job"));
    INFO(resumed.output);
    REQUIRE(resumed.status == 0);
    CHECK_THAT(resumed.output, Contains("resuming job") && Contains("4 shots stacked"));
    CHECK(bytes_of(dir / "job" / "image.sgy") == bytes_of(dir / "whole" / "image.sgy"));
}

TEST_CASE("rtm migrate without shot files says which option is missing") {
    const auto r = run_rtm("migrate --model.vp " + kSmooth);
    CHECK(r.status == 2);  // a value missing: a usage error
    CHECK_THAT(r.output, Contains("data.shots"));
}

TEST_CASE("bad migration options are refused naming the option") {
    const auto job = scratch("cli-migrate-bad") / "job";
    struct Bad {
        const char* args;
        const char* option;
        int status = 1;  // 2: a value that does not parse (a usage error)
    };
    for (const Bad b : {Bad{"--migration.memory-budget 0", "migration.memory-budget"},
                        Bad{"--migration.checkpoint-minutes -1", "migration.checkpoint-minutes"},
                        Bad{"--migration.checkpoint-minutes nan", "migration.checkpoint-minutes"},
                        Bad{"--migration.image-every -3", "migration.image-every"},
                        // beyond the record: only t = 0 would be imaged (a zero image)
                        Bad{"--migration.image-every 100000", "migration.image-every"},
                        Bad{"--migration.aperture nan", "migration.aperture"},
                        Bad{"--migration.end-taper -0.1", "migration.end-taper"},
                        Bad{"--migration.end-taper soon", "migration.end-taper", 2},
                        Bad{"--migration.condition sharp", "migration.condition", 2},
                        Bad{"--migration.storage tape", "migration.storage", 2},
                        Bad{"--propagation.device tpu", "propagation.device", 2},
                        Bad{"--model.dx -10", "model.dx"},
                        // The image goes on the model's grid: a dz that SEG-Y cannot hold
                        // (whole mm, at most 32767) is refused before the first shot,
                        // not after the last (the stack was then lost to a rerun).
                        Bad{"--model.dz 12.3456", "(the grid of image.sgy): dz = 12.3456 m is not a whole number of millimetres"},
                        Bad{"--model.dz 50", "(the grid of image.sgy): dz = 50 m does not fit"}}) {
        // An aperture given here replaces migrate_cmd's (an option given twice is a usage error).
        std::string cmd = migrate_cmd(job, b.args);
        const std::string aperture = "--migration.aperture 800 ";
        if (std::string(b.args).find("--migration.aperture") != std::string::npos)
            cmd.erase(cmd.find(aperture), aperture.size());
        const auto r = run_rtm(cmd);
        INFO(b.args << ": " << r.output);
        CHECK(r.status == b.status);
        CHECK_THAT(r.output, Contains(b.option));
        CHECK(!fs::exists(job / "state.json"));
    }
    // The same shot file twice would be stacked twice.
    const auto r = run_rtm(migrate_cmd(job, "--data.shots " + shots_file().string()));
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("data.shots") && Contains("given twice"));
}

namespace {

nlohmann::json state_of(const fs::path& job) {
    std::ifstream in(job / "state.json");
    return nlohmann::json::parse(in);
}

// The stack files in a job folder.
std::vector<std::string> stack_files(const fs::path& job) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(job))
        if (e.path().filename().string().rfind("stack-", 0) == 0) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace

TEST_CASE("a shot whose wavefield blows up is recorded as failed, the others are stacked, the exit code is 3") {
    const auto dir = scratch("cli-migrate-failed");
    // Shot 2's traces scaled to a peak of 1e38, finite as read: the rho filter's 1/(2 dt)
    // and the cell volume (100 m^2) take the injected values past float's 3.4e38, so the
    // receiver wavefield overflows to infinity and then NaN.
    auto shots = io::read_shots(shots_file().string());
    REQUIRE(shots.size() == 4);
    double peak = 0;
    for (float v : shots[1].data) peak = std::max(peak, double(std::abs(v)));
    REQUIRE(peak > 0);
    for (float& v : shots[1].data) v = float(v * (1e38 / peak));
    const std::string file = (dir / "shots.sgy").string();
    io::write_shots(file, shots);
    const auto job = dir / "job";
    const std::string cmd = "migrate --model.vp " + kSmooth + " --data.shots " + file +
                            " --wavelet.ricker-f0 10 --migration.aperture 800 --propagation.device cpu --output.job " +
                            job.string();
    const long id = shots[1].id;

    const auto r = run_rtm(cmd);
    INFO(r.output);
    CHECK(r.status == 3);
    CHECK_THAT(r.output, Contains("shot " + std::to_string(id)) && Contains("wavefield is not finite") &&
                             Contains("after time step") && Contains("1 failed"));
    auto st = state_of(job);
    for (std::size_t i = 0; i < 4; ++i) {
        INFO("shot " << i);
        CHECK(st["shots"][i]["status"] == (i == 1 ? "failed" : "done"));
    }
    CHECK_THAT(st["shots"][1].value("reason", ""), Contains("not finite"));
    CHECK_THAT(r.output, Contains("writing the image of 3 of 4 shots"));
    REQUIRE(fs::exists(job / "image.sgy"));
    const Volume img = io::read_volume((job / "image.sgy").string());
    double sum = 0;
    for (float v : img.data) sum += std::abs(v);
    CHECK(std::isfinite(sum));
    CHECK(sum > 0);

    // A rerun tries the failed shot again (it fails again: its data are the same) and
    // redoes none of the done ones.
    const auto again = run_rtm(cmd);
    INFO(again.output);
    CHECK(again.status == 3);
    CHECK_THAT(again.output, Contains("3 of 4 shots already done, 1 failed before (tried again)"));
    CHECK(again.output.find("shot " + std::to_string(shots[0].id) + " from") == std::string::npos);
    CHECK(state_of(job)["shots"][0]["seconds"] == st["shots"][0]["seconds"]);
}

TEST_CASE("a velocity model replaced by another of the same size is refused, naming the model file") {
    const auto dir = scratch("cli-migrate-replaced");
    const auto model = dir / "model.sgy";
    fs::copy_file(kSmooth, model);
    REQUIRE(fs::file_size(kVp) == fs::file_size(kSmooth));
    const std::string cmd = "migrate --model.vp " + model.string() + " --data.shots " + shots_file().string() +
                            " --wavelet.ricker-f0 10 --migration.aperture 800 --propagation.device cpu"
                            " --migration.max-shots 1 --output.job " + (dir / "job").string();
    REQUIRE(run_rtm(cmd).status == 0);
    fs::copy_file(kVp, model, fs::copy_options::overwrite_existing);
    const auto r = run_rtm(cmd);
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains(model.string() + ": is not the file the job in") && Contains("content hash"));
    CHECK(state_of(dir / "job")["shots"][1]["status"] == "pending");
    // The backend that ran is part of the fingerprint too (a GPU run does not resume a
    // CPU job's stack), whatever propagation.device said.
    CHECK_THAT(state_of(dir / "job")["settings"].get<std::string>(), Contains("backend=cpu;"));
}

TEST_CASE("a job folder keeps one exact stack generation, and stale ones are removed on resume") {
    const auto job = scratch("cli-migrate-generations") / "job";
    REQUIRE(run_rtm(migrate_cmd(job, "--migration.max-shots 1 --migration.checkpoint-minutes 0")).status == 0);
    const auto first = stack_files(job);
    REQUIRE(first.size() == 1);
    // Exact sums (32 bytes each) of the image and the illumination on the model's grid
    // (401 x 151 nodes); no rank's part is left once the run has committed.
    CHECK(fs::file_size(job / first[0]) == 2 * 401u * 151u * 32u);
    CHECK(!fs::exists(job / "part-0.bin"));
    // What a run killed in the middle of a checkpoint leaves behind.
    for (const char* stale : {"stack-99.bin", "stack-98.bin.tmp", "part-3.bin.tmp", "state.json.tmp"})
        std::ofstream(job / stale) << "stale";
    const auto r = run_rtm(migrate_cmd(job, "--migration.max-shots 1"));
    INFO(r.output);
    REQUIRE(r.status == 0);
    CHECK_THAT(r.output, Contains("writing the image of 2 of 4 shots"));
    const auto now = stack_files(job);
    CHECK(now.size() == 1);
    CHECK(now != first);
    for (const char* stale : {"stack-99.bin", "stack-98.bin.tmp", "part-3.bin.tmp", "state.json.tmp"})
        CHECK(!fs::exists(job / stale));
}

TEST_CASE("rtm migrate under a memory budget far below the snapshots checkpoints every shot, records it, and gives the "
          "unconstrained image bit for bit") {
    const auto dir = scratch("cli-migrate-checkpoints");
    // The window (401 x 151 nodes, 20 damping cells) keeps 42 snapshots of 242 kB
    // (10.4 MB) or a band of 14.8 MB; one checkpoint (both time levels on the 448 x 199
    // padded grid, fp32) is 0.73 MB: 2.5 MB holds 3.
    const auto free = run_rtm(migrate_cmd(dir / "free"));
    const auto tight = run_rtm(migrate_cmd(dir / "tight", "--migration.memory-budget 0.0025"));
    INFO(tight.output);
    REQUIRE(free.status == 0);
    REQUIRE(tight.status == 0);
    CHECK_THAT(tight.output, Contains("source wavefield by checkpoints (3 states stored"));
    CHECK_THAT(tight.output, Contains("recomputation factor"));
    CHECK_THAT(tight.output, Contains("in propagation steps (propagation share"));
    CHECK_THAT(free.output, Contains("source wavefield by snapshots"));
    std::ifstream in(dir / "tight" / "state.json");
    const auto state = nlohmann::json::parse(in);
    for (const auto& s : state["shots"]) CHECK(s["storage"] == "checkpoints");
    CHECK(bytes_of(dir / "tight" / "image.sgy") == bytes_of(dir / "free" / "image.sgy"));
}

TEST_CASE("rtm migrate in batches gives shot-by-shot migration's image byte for byte, also resumed with another batch") {
    const auto dir = scratch("cli-migrate-batch");
    // Aperture -1: every shot's window is the whole model, so the four shots can go together.
    auto cmd = [&](const char* job, const std::string& extra) {
        return "migrate --model.vp " + kSmooth + " --data.shots " + shots_file().string() +
               " --wavelet.ricker-f0 10 --migration.aperture -1 --migration.checkpoint-minutes 0"
               " --propagation.device cpu --output.job " + (dir / job).string() + " " + extra;
    };
    const auto one = run_rtm(cmd("one", "--propagation.batch 1"));
    INFO(one.output);
    REQUIRE(one.status == 0);
    CHECK(one.output.find("in a batch of") == std::string::npos);

    // Two shots in a batch of 2, then the other two with a batch of 3 (the batch is not
    // part of the job's settings).
    const auto first = run_rtm(cmd("batched", "--propagation.batch 3 --migration.max-shots 2"));
    INFO(first.output);
    REQUIRE(first.status == 0);
    CHECK_THAT(first.output, Contains("migrating up to 2 shots of one window at a time (propagation.batch 3)") &&
                                 Contains("in a batch of 2"));
    const auto rest = run_rtm(cmd("batched", "--propagation.batch 3"));
    INFO(rest.output);
    REQUIRE(rest.status == 0);
    CHECK_THAT(rest.output, Contains("2 of 4 shots already done") && Contains("in a batch of 2"));
    CHECK(bytes_of(dir / "batched" / "image.sgy") == bytes_of(dir / "one" / "image.sgy"));
    CHECK(bytes_of(dir / "batched" / "illumination.sgy") == bytes_of(dir / "one" / "illumination.sgy"));
}

TEST_CASE("a batch holding a shot that blows up is migrated again shot by shot: the others are stacked as alone") {
    const auto dir = scratch("cli-migrate-batch-failed");
    // Shot 2 scaled to overflow, as in the failed-shot test above.
    auto shots = io::read_shots(shots_file().string());
    double peak = 0;
    for (float v : shots[1].data) peak = std::max(peak, double(std::abs(v)));
    for (float& v : shots[1].data) v = float(v * (1e38 / peak));
    const std::string file = (dir / "shots.sgy").string();
    io::write_shots(file, shots);
    auto cmd = [&](const char* job, int batch) {
        return "migrate --model.vp " + kSmooth + " --data.shots " + file +
               " --wavelet.ricker-f0 10 --migration.aperture -1 --propagation.device cpu --propagation.batch " +
               std::to_string(batch) + " --output.job " + (dir / job).string();
    };
    const auto alone = run_rtm(cmd("alone", 1));
    const auto batched = run_rtm(cmd("batched", 4));
    INFO(batched.output);
    CHECK(alone.status == 3);
    CHECK(batched.status == 3);
    CHECK_THAT(batched.output, Contains("4 shots migrated together failed") && Contains("wavefield is not finite") &&
                                   Contains("migrating them one at a time") && Contains("1 failed"));
    const auto st = state_of(dir / "batched");
    for (std::size_t i = 0; i < 4; ++i) {
        INFO("shot " << i);
        CHECK(st["shots"][i]["status"] == (i == 1 ? "failed" : "done"));
    }
    CHECK(bytes_of(dir / "batched" / "image.sgy") == bytes_of(dir / "alone" / "image.sgy"));
}
