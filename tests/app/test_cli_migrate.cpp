// `rtm migrate` end to end: outputs, resuming interrupted jobs bit for bit, refusing
// a job folder that holds another job.
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>
#include <unistd.h>

#include "io/model_io.h"
#include "run_rtm.h"
#include "support/catch.hpp"
#include "support/test_data.h"

using namespace rtm;
using namespace rtm::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

const std::string kVp = (source_dir() / "velocity_models" / "layers2d_vp.segy").string();
const std::string kSmooth = (source_dir() / "velocity_models" / "layers2d_vp_smooth.segy").string();

// Four short shots modelled once for all tests here.
const fs::path& shots_file() {
    static const fs::path p = [] {
        const auto dir = scratch("cli-migrate-shots");
        const auto r = run_rtm("model --model.vp " + kVp +
                               " --acquisition.source-x0 800 --acquisition.source-dx 800 --acquisition.source-nx 4"
                               " --acquisition.receiver-x0 0 --acquisition.receiver-dx 25 --acquisition.receiver-nx 161"
                               " --acquisition.record-length 0.8 --acquisition.record-dt 0.004 --wavelet.ricker-f0 10"
                               " --propagation.device cpu --output.shots " + (dir / "shots.sgy").string());
        REQUIRE(r.status == 0);
        return dir / "shots.sgy";
    }();
    return p;
}

std::string migrate_cmd(const fs::path& job, const std::string& extra = "") {
    return "migrate --model.vp " + kSmooth + " --data.shots " + shots_file().string() +
           " --wavelet.ricker-f0 10 --migration.aperture 800 --propagation.device cpu --output.job " + job.string() +
           " " + extra;
}

std::string bytes_of(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
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
    }
    SECTION("killed in the middle of a shot and resumed") {
        const auto job = dir / "killed";
        const std::string cmd = std::string(RTM_BINARY) + " " + migrate_cmd(job) + " > /dev/null 2>&1";
        const pid_t pid = fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            execl("/bin/sh", "sh", "-c", ("exec " + cmd).c_str(), static_cast<char*>(nullptr));
            _exit(127);
        }
        // Kill once the first shot is recorded (the job has begun its second).
        for (int i = 0; i < 600; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            std::ifstream st(job / "state.json");
            const std::string s((std::istreambuf_iterator<char>(st)), {});
            if (s.find("\"seconds\"") != std::string::npos) break;
        }
        kill(pid, SIGKILL);
        int status = 0;
        waitpid(pid, &status, 0);
        const auto r = run_rtm(migrate_cmd(job));
        INFO(r.output);
        REQUIRE(r.status == 0);
        CHECK_THAT(r.output, Contains("resuming job"));
        CHECK(bytes_of(job / "image.sgy") == whole);
    }
}

TEST_CASE("a job folder holding a job with other settings is refused, not mixed") {
    const auto job = scratch("cli-migrate-other") / "job";
    REQUIRE(run_rtm(migrate_cmd(job, "--migration.max-shots 1")).status == 0);
    const auto r = run_rtm(migrate_cmd(job, "--migration.condition inverse-scattering"));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains(job.string()) && Contains("other settings"));
}

TEST_CASE("rtm migrate without shot files says which option is missing") {
    const auto r = run_rtm("migrate --model.vp " + kSmooth);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("data.shots"));
}

TEST_CASE("bad migration options are refused naming the option") {
    const auto job = scratch("cli-migrate-bad") / "job";
    struct Bad {
        const char* args;
        const char* option;
    };
    for (const Bad b : {Bad{"--migration.memory-budget 0", "migration.memory-budget"},
                        Bad{"--migration.checkpoint-every 0", "migration.checkpoint-every"},
                        Bad{"--migration.image-every -3", "migration.image-every"},
                        Bad{"--migration.aperture nan", "migration.aperture"},
                        Bad{"--model.dx -10", "model.dx"}}) {
        const auto r = run_rtm(migrate_cmd(job, b.args));
        INFO(b.args << ": " << r.output);
        CHECK(r.status == 1);
        CHECK_THAT(r.output, Contains(b.option));
        CHECK(!fs::exists(job / "state.json"));
    }
    // The same shot file twice would be stacked twice.
    const auto r = run_rtm(migrate_cmd(job, "--data.shots " + shots_file().string()));
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("data.shots") && Contains("given twice"));
}
