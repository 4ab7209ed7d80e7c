// Reproducible GPU jobs from the command line (issue 8, items 5 and 7), with
// propagation.device = gpu: a migration killed and resumed gives the uninterrupted
// image bit for bit, and `rtm model` of 1000 2D shots (batches whose launches exceed
// CUDA's 65535 grid blocks along z) works and equals shots modelled alone.
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <thread>
#include <sys/wait.h>
#include <unistd.h>

#include "app/run_rtm.h"
#include "gpu_test.h"
#include "io/shot_io.h"
#include "support/test_data.h"

using namespace rtm;
using namespace rtm::test;
namespace fs = std::filesystem;

namespace {


}  // namespace

namespace {

const std::string kVp = (source_dir() / "velocity_models" / "layers2d_vp.segy").string();
const std::string kSmooth = (source_dir() / "velocity_models" / "layers2d_vp_smooth.segy").string();

// Eight shots of the bundled 2D model, modelled on the GPU once.
const fs::path& gpu_shots_file() {
    static const fs::path p = [] {
        const auto dir = scratch("gpu-cli-shots");
        const auto r = run_rtm("model --model.vp " + kVp +
                               " --acquisition.source-x0 400 --acquisition.source-dx 450 --acquisition.source-nx 8"
                               " --acquisition.receiver-x0 0 --acquisition.receiver-dx 25 --acquisition.receiver-nx 161"
                               " --acquisition.record-length 0.8 --acquisition.record-dt 0.004 --wavelet.ricker-f0 10"
                               " --propagation.device gpu --output.shots " + (dir / "shots.sgy").string());
        INFO(r.output);
        REQUIRE(r.status == 0);
        return dir / "shots.sgy";
    }();
    return p;
}

std::string gpu_migrate_cmd(const fs::path& job, const std::string& extra = "") {
    return "migrate --model.vp " + kSmooth + " --data.shots " + gpu_shots_file().string() +
           " --wavelet.ricker-f0 10 --migration.aperture 800 --propagation.device gpu --output.job " + job.string() +
           " " + extra;
}

}  // namespace

TEST_CASE("a GPU migration job killed and resumed gives the uninterrupted image bit for bit (command line)", "[gpu]") {
    if (!gpu_or_skip()) return;
    const auto dir = scratch("gpu-cli-resume");
    static const std::string whole = [&] {
        const auto r = run_rtm(gpu_migrate_cmd(dir / "whole"));
        INFO(r.output);
        REQUIRE(r.status == 0);
        return bytes_of(dir / "whole" / "image.sgy");
    }();
    REQUIRE(!whole.empty());

    SECTION("the uninterrupted job run again") {
        REQUIRE(run_rtm(gpu_migrate_cmd(dir / "again")).status == 0);
        CHECK(bytes_of(dir / "again" / "image.sgy") == whole);
    }
    SECTION("stopped after three shots and resumed") {
        for (int i = 0; i < 3; ++i) {
            const auto r = run_rtm(gpu_migrate_cmd(dir / "steps", "--migration.max-shots 3"));
            INFO(r.output);
            REQUIRE(r.status == 0);
        }
        CHECK(bytes_of(dir / "steps" / "image.sgy") == whole);
    }
    SECTION("killed in the middle of the job and resumed") {
        const auto job = dir / "killed";
        // A checkpoint after every batch of two shots (the automatic batch holds all 8
        // of this small 2D job: nothing to kill in the middle), so that the rank's part
        // file holds the first two; killed then (the job has begun its second batch). The
        // resumed run takes the automatic batch: the image does not depend on it.
        interrupt_rtm(gpu_migrate_cmd(job, "--migration.checkpoint-minutes 0 --propagation.batch 2"), job / "part-0.bin",
                      "RTMPART3", SIGKILL);
        const auto r = run_rtm(gpu_migrate_cmd(job));
        INFO(r.output);
        REQUIRE(r.status == 0);
        CHECK(contains(r.output, "recovered"));
        CHECK(contains(r.output, "resuming job"));
        CHECK_FALSE(contains(r.output, "8 of 8 shots already done"));  // the kill came before the end
        CHECK(bytes_of(job / "image.sgy") == whole);
    }
}

TEST_CASE("rtm model of 1000 2D shots on the GPU runs batches beyond 65535 z blocks and equals shots modelled alone",
          "[gpu]") {
    if (!gpu_or_skip()) return;
    const auto dir = scratch("gpu-cli-1000");
    const std::string common = "model --model.vp " + kVp +
                               " --acquisition.receiver-x0 100 --acquisition.receiver-dx 25 --acquisition.receiver-nx 150"
                               " --acquisition.record-length 0.3 --acquisition.record-dt 0.004 --wavelet.ricker-f0 10"
                               " --propagation.device gpu";
    const auto r = run_rtm(common + " --acquisition.source-x0 2 --acquisition.source-dx 4 --acquisition.source-nx 1000"
                                    " --output.shots " + (dir / "all.sgy").string());
    INFO(r.output);
    REQUIRE(r.status == 0);
    // The automatic batch: its members' planes (151 + 2 x layer cells each) exceed one launch's 65535 z blocks.
    std::smatch m;
    REQUIRE(std::regex_search(r.output, m, std::regex(R"(with (\d+) absorbing cells.*?(\d+) shots? at a time)")));
    const long cells = std::stol(m[1]), batch = std::stol(m[2]);
    INFO("batch " << batch << ", " << cells << " absorbing cells");
    CHECK(batch * (151 + 2 * cells) > 65535);
    CHECK(batch < 1000);  // and a last, partial batch
    const auto all = io::read_shots((dir / "all.sgy").string());
    REQUIRE(all.size() == 1000);
    // The first and the last shot (in the last, partial batch) modelled alone.
    for (int s : {0, 999}) {
        const auto one = run_rtm(common + " --acquisition.source-x0 " + std::to_string(2 + 4 * s) +
                                 " --acquisition.source-nx 1 --output.shots " + (dir / "one.sgy").string());
        REQUIRE(one.status == 0);
        const auto alone = io::read_shots((dir / "one.sgy").string());
        REQUIRE(alone.size() == 1);
        INFO("shot " << s);
        CHECK(alone[0].data == all[s].data);
    }
}
