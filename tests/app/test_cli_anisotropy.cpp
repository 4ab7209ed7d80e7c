// `rtm model` with anisotropy (VTI/TTI) from the command line, and the commands that
// refuse it for now (migration, Born modelling) naming the options.
#include <cmath>
#include <filesystem>

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

TEST_CASE("migration and Born modelling refuse anisotropic models naming the options") {
    const auto dir = scratch("cli-tti-refused");
    const auto m = run_rtm("migrate --model.vp " + kModel + " --model.epsilon 0.1");
    CHECK(m.status == 1);
    CHECK_THAT(m.output, Contains("model.epsilon") && Contains("migration of anisotropic (VTI/TTI) models is not implemented yet"));
    const auto b = run_rtm(small_job(dir, "--model.delta 0.1 --model.born-reflectivity " + kModel));
    CHECK(b.status == 1);
    CHECK_THAT(b.output, Contains("Born modelling of anisotropic"));
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
