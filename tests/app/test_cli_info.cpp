// rtm info tells time from depth by the evidence, not by one word of the textual header,
// and says what a revision-0 file holds in the bytes revision 1 gave to CDP X/Y (issue 9).
#include <sys/stat.h>

#include <cmath>
#include <filesystem>
#include <fstream>

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

// Overwrites `bytes` at `offset` of the file (a header the writers would not make).
void patch(const std::string& path, long offset, const std::string& bytes) {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(offset);
    f.write(bytes.data(), std::streamsize(bytes.size()));
}

// A 3200-byte textual header in ASCII (SegyWriter writes EBCDIC): the cards, each padded
// to 80 characters.
std::string ascii_text(const std::vector<std::string>& cards) {
    std::string t;
    for (const auto& c : cards) t += (c + std::string(80, ' ')).substr(0, 80);
    return t + std::string(3200 - t.size(), ' ');
}

}  // namespace

TEST_CASE("rtm info reads an ASCII textual header as ASCII and its words in any case") {
    const auto dir = scratch("cli-info-ascii");
    // Written as the cards say (EBCDIC), then the header replaced by the ASCII of other cards.
    SECTION("ASCII, cards numbered") {
        const auto f = section(dir / "ascii.sgy", {"C 1 TWO-WAY TIME"}, 256);
        patch(f, 0, ascii_text({"C 1 PSDM LINE 7", "C 2 samples in depth, dz 2 m"}));
        const auto r = run_rtm("info " + f);
        INFO(r.output);
        CHECK(r.status == 0);
        CHECK_THAT(r.output, Contains("samples along:   depth: the textual header says DEPTH (card 2)"));
    }
    SECTION("ASCII, no card numbers") {
        const auto f = section(dir / "ascii-blank.sgy", {"C 1 TWO-WAY TIME"}, 256);
        patch(f, 0, ascii_text({"", "    Depth section, dz 2 m"}));
        const auto r = run_rtm("info " + f);
        INFO(r.output);
        CHECK_THAT(r.output, Contains("samples along:   depth: the textual header says DEPTH (card 2)"));
    }
    SECTION("EBCDIC, lower case") {
        const auto f = section(dir / "ebcdic.sgy", {"C 1 psdm line 7", "C 2 samples in depth"}, 256);
        const auto r = run_rtm("info " + f);
        INFO(r.output);
        CHECK_THAT(r.output, Contains("samples along:   depth: the textual header says DEPTH (card 2)"));
    }
}

TEST_CASE("rtm info describes every file, each bad one's error in its place, and exits 1") {
    const auto dir = scratch("cli-info-many");
    const auto good = section(dir / "good.segy", {"C 1 LINE A"}, 256);
    const auto other = section(dir / "other.segy", {"C 1 LINE B"}, 256);
    const auto empty = (dir / "empty.sgy").string();
    std::ofstream(empty).close();
    const auto r = run_rtm("info " + good + " " + empty + " " + other);
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("file:            " + good + " ("));
    CHECK_THAT(r.output, Contains("file:            " + other + " ("));  // after the bad one
    CHECK_THAT(r.output, Contains(empty + ": the file has 0 bytes, fewer than the 3600 bytes"));
    CHECK_THAT(r.output, Contains("1 of 3 files could not be read: " + empty));
    // Alone, a bad file is its error and exit 1, as before.
    const auto one = run_rtm("info " + empty);
    CHECK(one.status == 1);
    CHECK_THAT(one.output, Contains("fewer than the 3600 bytes") && !Contains("files could not be read"));
    // A file of another kind given by mistake (the image.png beside image.sgy) is named as
    // such: it was "sample format code 9469 ... is not supported".
    const auto png = (dir / "image.png").string();
    std::ofstream(png, std::ios::binary) << std::string("\x89PNG\r\n\x1a\n") + std::string(5000, 'x');
    const auto p = run_rtm("info " + png);
    CHECK(p.status == 1);
    CHECK_THAT(p.output, Contains(png + ": is not a SEG-Y file: it is a PNG image"));
}

TEST_CASE("rtm info says a device or a FIFO is not a regular file") {
    auto r = run_rtm("info /dev/null");
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("/dev/null: is not a regular file (it is a character device)"));
    CHECK_THAT(r.output, !Contains("file size") && !Contains("permissions"));
    const auto fifo = scratch("cli-info-fifo") / "pipe.sgy";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    r = run_rtm("info " + fifo.string());
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains(fifo.string() + ": is not a regular file (it is a FIFO (named pipe))"));
}

TEST_CASE("rtm info and the jobs say a variable count of extended headers (-1) is not supported") {
    const auto f = section(scratch("cli-info-ext") / "rev2.sgy", {"C 1 REV 2 LINE"}, 0x0200);
    patch(f, 3504, std::string("\xff\xff", 2));  // byte 3505, int16 -1
    // (rtm migrate said the first trace lay at byte 400, outside the file.)
    for (const std::string& cmd : {"info " + f, "migrate --data.shots " + f + " --model.vp " +
                                                    (source_dir() / "velocity_models" / "layers2d_vp.segy").string() +
                                                    " --propagation.device cpu --dry-run"}) {
        const auto r = run_rtm(cmd);
        INFO(cmd << "\n" << r.output);
        CHECK(r.status == 1);
        CHECK_THAT(r.output, Contains("= -1: a variable number of extended textual headers ended by an end stanza "
                                      "(SEG-Y revision 2), which rtm does not read"));
        CHECK_THAT(r.output, !Contains("byte 400") && !Contains("outside the file"));
    }
}

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

TEST_CASE("rtm info describes a file whose name begins with '-' after '--' and takes it for an option before") {
    const auto dir = scratch("cli-info-dash");
    section(dir / "-line.segy", {"C 1 LINE A"}, 256);
    const std::string here = "cd " + dir.string() + " && ";
    const auto option = run_rtm("info -line.segy", here);
    INFO(option.output);
    CHECK(option.status == 2);
    CHECK_THAT(option.output, Contains("unknown option '-line.segy'") && Contains("after '--'"));
    const auto file = run_rtm("info -- -line.segy", here);
    INFO(file.output);
    CHECK(file.status == 0);
    CHECK_THAT(file.output, Contains("file:            -line.segy ("));
    // Everything after it is a file name, "--help" and a second "--" too.
    const auto all = run_rtm("info -- -line.segy --help --", here);
    INFO(all.output);
    CHECK(all.status == 1);
    CHECK_THAT(all.output, Contains("file:            -line.segy (") && Contains("file:            --help: not described") &&
                               Contains("file:            --: not described") && Contains("2 of 3 files could not be read"));
}
