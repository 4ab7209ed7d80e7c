// rtm info tells time from depth by the evidence, not by one word of the textual header,
// and says what a revision-0 file holds in the bytes revision 1 gave to CDP X/Y (issue 9).
#include <cmath>
#include <filesystem>

#include "io/segy_file.h"
#include "run_rtm.h"
#include "support/catch.hpp"
#include "support/test_data.h"

using namespace rtm;
using namespace rtm::test;
using Catch::Matchers::Contains;
namespace io = rtm::io;

namespace {

// A 2D post-stack section: 20 traces of 100 samples at 2 ms, a sine that changes sign
// (seismic amplitudes), CDP X = 1000 + 25 i m (scalar 1) in bytes 181/185, the given
// textual header and revision (binary byte 3501).
std::string section(const std::filesystem::path& path, const std::vector<std::string>& text, int revision) {
    io::detail::BinaryHeader bin;
    bin.set(SEGY_BIN_SAMPLES, 100, "test");
    bin.set(SEGY_BIN_INTERVAL, 2000, "test");
    bin.set(SEGY_BIN_SEGY_REVISION, revision, "test");
    io::detail::SegyWriter w(path.string(), text, bin);
    std::vector<float> x(100);
    for (int k = 0; k < 100; ++k) x[k] = float(std::sin(0.3 * k));
    for (int i = 0; i < 20; ++i) {
        io::detail::TraceHeader h;
        h.set(SEGY_TR_SAMPLE_COUNT, 100, "test");
        h.set(SEGY_TR_SAMPLE_INTER, 2000, "test");
        h.set(SEGY_TR_ENSEMBLE, i + 1, "test");
        h.set(SEGY_TR_SOURCE_GROUP_SCALAR, 1, "test");
        h.set(SEGY_TR_CDP_X, 1000 + 25 * i, "test");
        h.set(SEGY_TR_CDP_Y, 0, "test");
        w.write(i, h, x.data());
    }
    w.commit();
    return path.string();
}

}  // namespace

TEST_CASE("rtm info calls a stack whose header gives a water depth a time section, saying why") {
    const auto dir = scratch("cli-info-domain");
    // As USGS marine lines describe themselves: the survey's water depth, nothing on the samples.
    const auto usgs = section(dir / "usgs.sgy", {"C 1 USGS MARINE SEISMIC LINE 12, MIGRATED STACK",
                                                 "C 2 WATER DEPTH 20-120 M, SOURCE DEPTH 3 M"}, 256);
    auto r = run_rtm("info " + usgs);
    INFO(r.output);
    CHECK(r.status == 0);
    CHECK_THAT(r.output, Contains("sample interval: 2 ms (2000 us"));
    CHECK_THAT(r.output, Contains("time:            0..198 ms"));
    CHECK_THAT(r.output, Contains("samples along:   time: the textual header says neither; the values change sign") &&
                             Contains("'WATER DEPTH' (card 2)") && Contains(": about the survey, not the samples"));
    // One that says its axis: two-way time, beside a water depth.
    const auto twt = section(dir / "twt.sgy", {"C 1 WATER DEPTH 85 M", "C 2 SAMPLES: TWO-WAY TIME, 2 MS"}, 256);
    r = run_rtm("info " + twt);
    CHECK_THAT(r.output, Contains("samples along:   time: the textual header says 'TWO-WAY' (card 2)"));
    // A depth section says so.
    const auto depth = section(dir / "depth.sgy", {"C 1 DEPTH MIGRATED SECTION, DZ 2 M"}, 256);
    r = run_rtm("info " + depth);
    CHECK_THAT(r.output, Contains("samples along:   depth: the textual header says DEPTH (card 1)"));
}

TEST_CASE("rtm info says what a revision-0 file holds in bytes 181/185") {
    const auto dir = scratch("cli-info-rev0");
    auto r = run_rtm("info " + section(dir / "rev0.sgy", {"C 1 OLD LINE"}, 0));
    INFO(r.output);
    CHECK(r.status == 0);
    CHECK_THAT(r.output, Contains("revision 0 leaves bytes 181-240 unassigned (revision 1 gave 181/185 to CDP X/Y)") &&
                             Contains("this file holds X 1000..1475, Y 0 there"));
    r = run_rtm("info " + section(dir / "rev1.sgy", {"C 1 NEW LINE"}, 256));
    CHECK_THAT(r.output, !Contains("revision 0 leaves"));
    const auto viking = shared_file("field/viking_small.segy");
    if (viking.empty()) return;
    r = run_rtm("info " + viking.string());
    CHECK_THAT(r.output, Contains("this file holds 0 there in every trace"));
}
