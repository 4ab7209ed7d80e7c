// Bad samples in the files a job reads are refused from the command line, naming the
// file, the trace and the sample, before anything is stacked.
#include <filesystem>
#include <limits>

#include "io/shot_io.h"
#include "run_rtm.h"
#include "support/catch.hpp"
#include "support/test_data.h"

using namespace rtm;
using namespace rtm::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

const std::string kSmooth = (source_dir() / "velocity_models" / "layers2d_vp_smooth.segy").string();

// Two gathers over the bundled 2D model (its x axis starts at world X = 1000 m):
// field records 1 and 2, 41 channels, 100 samples at 4 ms; all zero but `bad` at
// record 2, channel 3, sample 51 (t = 0.2 s), the file's trace 41 + 3 = 44.
std::string shots_with(const fs::path& dir, float bad) {
    std::vector<ShotGather> shots(2);
    for (int k = 0; k < 2; ++k) {
        ShotGather& g = shots[k];
        g.id = k + 1, g.nt = 100, g.dt = 0.004;
        g.source = {1800.0 + 400 * k, 0, 10};
        for (int r = 0; r < 41; ++r) g.receivers.push_back({1500.0 + 25 * r, 0, 10});
        g.data.assign(41 * 100, 0.f);
    }
    shots[1].data[2 * 100 + 50] = bad;
    const std::string path = (dir / "shots.sgy").string();
    io::write_shots(path, shots);
    return path;
}

}  // namespace

TEST_CASE("rtm migrate refuses a shot file holding one NaN sample, naming the file, trace and sample") {
    const auto dir = scratch("cli-nan-shot");
    const std::string file = shots_with(dir, std::numeric_limits<float>::quiet_NaN());
    const auto job = dir / "job";
    const auto r = run_rtm("migrate --model.vp " + kSmooth + " --data.shots " + file +
                           " --propagation.device cpu --output.job " + job.string());
    INFO(r.output);
    // 1 when the files are read before the job, 3 when a reader loads shots one at a
    // time and the job records the shot as failed: either way not a success.
    CHECK(r.status != 0);
    CHECK_THAT(r.output, Contains(file + ": trace 44 (field record 2, channel 3) sample 51 (t = 0.2 s) is nan"));
    if (fs::exists(job / "state.json")) CHECK(r.status == 3);
}

TEST_CASE("rtm migrate refuses a wavelet file holding an infinite sample, naming the file, trace and sample") {
    const auto dir = scratch("cli-inf-wavelet");
    const std::string shots = shots_with(dir, 0.f);
    // A wavelet file is one trace, the wavelet: 100 samples at 4 ms, sample 51 (t = 0.2 s) infinite.
    ShotGather w;
    w.id = 1, w.nt = 100, w.dt = 0.004;
    w.source = {1800, 0, 10};
    w.receivers = {{1800, 0, 10}};
    w.data.assign(100, 0.f);
    w.data[10] = 1.f;
    w.data[50] = std::numeric_limits<float>::infinity();
    const std::string broken = (scratch("cli-inf-wavelet-file") / "wavelet.sgy").string();
    io::write_shots(broken, {w});
    const auto r = run_rtm("migrate --model.vp " + kSmooth + " --data.shots " + shots + " --wavelet.file " + broken + " --propagation.device cpu --output.job " +
                           (dir / "job").string());
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains(broken + ": trace 1 (field record 1, channel 1) sample 51 (t = 0.2 s) is inf"));
}

// The job folder holds its inputs' content hashes and refuses changed files, so the
// message after a shot fails must not promise that fixing the file and running the same
// command retries it: it says a cause in the inputs needs a new job folder, and that is
// what works.
TEST_CASE("after a shot fails for its data, the message says that the fixed file needs a new job folder, and it does") {
    const auto dir = scratch("cli-nan-retry");
    const std::string file = shots_with(dir, std::numeric_limits<float>::quiet_NaN());
    const auto cmd = [&](const std::string& job) {
        return "migrate --model.vp " + kSmooth + " --data.shots " + file + " --propagation.device cpu --output.job " +
               (dir / job).string();
    };
    const auto r = run_rtm(cmd("job"));
    INFO(r.output);
    REQUIRE(r.status == 3);
    CHECK_THAT(r.output, Contains("1 of 2 shots done, 1 failed") &&
                             Contains("migrate the fixed inputs into a new output.job folder") &&
                             !Contains("fix what they say and run the same command"));
    shots_with(dir, 0.f);  // the sample fixed
    const auto same = run_rtm(cmd("job"));
    INFO(same.output);
    CHECK(same.status == 1);
    CHECK_THAT(same.output, Contains(file + ": is not the file the job in"));
    const auto fresh = run_rtm(cmd("fresh"));
    INFO(fresh.output);
    CHECK(fresh.status == 0);
}

TEST_CASE("a shot whose every sample is zero is migrated and said: its illumination divides the image") {
    const auto dir = scratch("cli-zero-shot");
    const std::string file = shots_with(dir, 1.f);  // shot 1 all zeros, shot 2 one sample
    const auto r = run_rtm("migrate --model.vp " + kSmooth + " --data.shots " + file +
                           " --propagation.device cpu --output.job " + (dir / "job").string());
    INFO(r.output);
    CHECK(r.status == 0);
    CHECK_THAT(r.output, Contains("shot 1 from " + file + ": every sample is zero") &&
                             !Contains("shot 2 from " + file + ": every sample is zero"));
}
