// The bundled example images the whole section (issue 9, item 6): a mute window the
// user sets (migration.mute-direct in seconds) lets the water bottom through, and a
// top mute (migration.top-mute, metres) removes the source imprint above it.
#include <cmath>
#include <filesystem>

#include "io/model_io.h"
#include "run_rtm.h"
#include "support/catch.hpp"
#include "support/test_data.h"

using namespace rtm;
using namespace rtm::test;
using Catch::Matchers::Contains;

namespace {

// Signed mean of the image along an interface z(x) (the largest-magnitude value within
// two cells of it: the smoothed migration model places reflectors within a cell or two),
// over x = 300..3700 m, away from the spread's ends.
template <class Z>
double along(const Volume& image, Z z_of) {
    const Grid& g = image.grid;
    double sum = 0;
    int n = 0;
    for (int ix = int(300 / g.dx); ix < int(3700 / g.dx); ++ix, ++n) {
        const int iz = int(z_of(ix * g.dx) / g.dz);
        double best = 0;
        for (int k = iz - 2; k <= iz + 2; ++k)
            if (std::abs(image.at(ix, 0, k)) > std::abs(best)) best = image.at(ix, 0, k);
        sum += best;
    }
    return sum / n;
}

}  // namespace

TEST_CASE("the bundled example images the water bottom and mutes the source imprint above 80 m", "[mute]") {
    const auto dir = scratch("cli-mute");
    const auto src = source_dir();
    // As the README runs it: from the repository root, the ini's relative paths.
    const auto r = run_shell("cd " + src.string() + " && " + RTM_BINARY +
                             " migrate --config shots/layers2d_migrate.ini --propagation.device cpu --output.job " +
                             (dir / "job").string() + " 2>&1");
    INFO(r.output);
    REQUIRE(r.status == 0);
    const Volume image = io::read_volume((dir / "job" / "image.sgy").string(), {});
    const Grid& g = image.grid;
    // The top mute: nothing above 80 m (layers2d_migrate.ini), where the taper starts.
    double above = 0, below = 0;
    for (int iz = 0; iz < g.nz; ++iz)
        for (int ix = 0; ix < g.nx; ++ix) {
            double& m = iz * g.dz <= 80 ? above : below;
            m = std::max(m, double(std::abs(image.at(ix, 0, iz))));
        }
    CHECK(above == 0);
    CHECK(below > 0);
    // The water bottom (tools/make_models.cpp: 150 + 20 sin(x / 700) m, 1500 -> 1800 m/s,
    // r = 0.091) against the first layer below it (450 + 60 sin(x / 900) m, 1920 -> 2400
    // m/s, r = 0.111): equally lit, it would image 0.82 as strongly. The mute keeps the
    // water bottom's near offsets only (beyond ~300 m it comes within 0.12 s of the direct
    // wave), so at least half of that: 0.41. With the wavelet-length mute (true) it was
    // 0.13 (measured; the imprint, not the reflector), positive polarity in both.
    const double wb = along(image, [](double x) { return 150 + 20 * std::sin(x / 700); });
    const double l1 = along(image, [](double x) { return 450 + 60 * std::sin(x / 900) + (x > 2360 ? 80 : 0); });
    INFO("water bottom " << wb << ", first layer " << l1);
    CHECK(l1 > 0);
    CHECK(wb / l1 > 0.41);
}

TEST_CASE("migration.mute-direct refuses a window that is not seconds, true or false", "[mute]") {
    const auto src = source_dir();
    const auto r = run_rtm("migrate --model.vp " + (src / "velocity_models" / "layers2d_vp_smooth.segy").string() +
                           " --data.shots " + (src / "shots" / "layers2d.sgy").string() +
                           " --migration.mute-direct soon --output.job " + (scratch("cli-mute-bad") / "job").string());
    CHECK(r.status == 2);  // a value that does not parse: a usage error
    CHECK_THAT(r.output, Contains("option migration.mute-direct") && Contains("'soon' is not a window in seconds"));
}

TEST_CASE("migration.mute-direct that leaves no sample of a shot at full strength is refused before any work", "[mute]") {
    // layers2d: records of 2 s, receivers from the source's position on. A window of
    // 1.95 s, or the wavelet's length (3 / f0 = 2.14 s for a 1.4 Hz Ricker), plus the
    // direct wave's onset and the taper of one dominant period (1 / 12 Hz = 0.083 s)
    // end after the record: every shot's data, and so the image, would be zero (it was,
    // with exit 0). 1.8 s leaves the nearest receivers' last 0.1 s at full strength.
    const auto src = source_dir();
    const std::string job = "migrate --model.vp " + (src / "velocity_models" / "layers2d_vp_smooth.segy").string() +
                            " --data.shots " + (src / "shots" / "layers2d.sgy").string() + " --dry-run --output.job " +
                            (scratch("cli-mute-long") / "job").string();
    for (const std::string args : {"--wavelet.ricker-f0 12 --migration.mute-direct 1.95",
                                   "--wavelet.ricker-f0 1.4 --migration.mute-direct true"}) {
        const auto r = run_rtm(job + " " + args);
        INFO(args << ": " << r.output);
        CHECK(r.status == 1);
        CHECK_THAT(r.output, Contains("option migration.mute-direct") && Contains("leave no sample of any shot at full "
                                                                                  "strength (the first: shot 1 in") &&
                                 Contains("after its record's end at 2 s)"));
    }
    const auto ok = run_rtm(job + " --wavelet.ricker-f0 12 --migration.mute-direct 1.8");
    INFO(ok.output);
    CHECK(ok.status == 0);
}

TEST_CASE("migration.mute-direct that leaves nothing of some shots is said, naming the first, and the job runs", "[mute]") {
    // Sources at 500 and 3500 m, receivers 0-1000 m, 2 s records: the far shot's nearest
    // receiver (2500 m at about 1500 m/s near the surface: 1.67 s) plus a 0.3 s window
    // and the 1 / 12 Hz taper ends after its record; the near shot keeps 1.6 s.
    const auto src = source_dir();
    const auto dir = scratch("cli-mute-some");
    const std::string shots = (dir / "shots.sgy").string();
    const auto m = run_rtm("model --model.vp " + (src / "velocity_models" / "layers2d_vp.segy").string() +
                           " --acquisition.source-x0 500 --acquisition.source-dx 3000 --acquisition.source-nx 2"
                           " --acquisition.receiver-x0 0 --acquisition.receiver-dx 100 --acquisition.receiver-nx 11"
                           " --acquisition.record-length 2 --acquisition.record-dt 0.004 --wavelet.ricker-f0 12"
                           " --propagation.device cpu --output.shots " + shots);
    INFO(m.output);
    REQUIRE(m.status == 0);
    const auto r = run_rtm("migrate --model.vp " + (src / "velocity_models" / "layers2d_vp_smooth.segy").string() +
                           " --data.shots " + shots + " --wavelet.ricker-f0 12 --migration.mute-direct 0.3 --dry-run"
                           " --propagation.device cpu --output.job " + (dir / "job").string());
    INFO(r.output);
    CHECK(r.status == 0);
    CHECK_THAT(r.output, Contains("option migration.mute-direct: its window of 0.3 s after the direct wave's onset") &&
                             Contains("leave no sample of 1 of the 2 shots at full strength (the first: shot 2 in"));
}
