// Broken input: every failure is an rtm::Error naming the file and what is wrong.
// Each test writes a good file and breaks one thing in it.
#include <sys/stat.h>

#include <cmath>
#include <functional>
#include <fstream>
#include <limits>

#include "io/model_io.h"
#include "io/segy_info.h"
#include "io/shot_index.h"
#include "io/shot_io.h"
#include "segy_test_files.h"
#include "support/test_data.h"

using namespace rtm;
using namespace rtm::test;

namespace {

Grid small_cube() {
    Grid g;
    g.nx = 4, g.ny = 3, g.nz = 5;
    g.dx = 10, g.dy = 10, g.dz = 10;
    g.frame = rotated_frame(15);
    return g;
}

std::string write_cube(const std::string& name) {
    const std::string path = (scratch(name) / "cube.sgy").string();
    io::write_volume(path, numbered_volume(small_cube()));
    return path;
}

void check_message(const std::string& msg, std::initializer_list<const char*> parts) {
    INFO("message: " << msg);
    for (const char* p : parts) {
        INFO("expected part: " << p);
        CHECK(contains(msg, p));
    }
}

}  // namespace

TEST_CASE("a missing file is reported by name") {
    const std::string path = (scratch("missing") / "nowhere.sgy").string();
    check_message(error_of([&] { io::read_volume(path); }), {path.c_str(), "no such file"});
    check_message(error_of([&] { io::read_shots(path); }), {path.c_str(), "no such file"});
    std::ostringstream out;
    check_message(error_of([&] { io::describe_segy(path, out); }), {path.c_str(), "no such file"});
}

// A FIFO's read waits for a writer (a hang), and /dev/null read as "unable to get the
// file size, check the permissions": both are named for what they are, before any read.
TEST_CASE("a FIFO given as a model or shot file is named as not a regular file and not read") {
    const std::string path = (scratch("fifo") / "pipe.sgy").string();
    REQUIRE(mkfifo(path.c_str(), 0644) == 0);
    for (const auto& read : {std::function<void()>([&] { io::read_volume(path); }),
                             std::function<void()>([&] { io::read_shots(path); })})
        check_message(error_of(read), {path.c_str(), "is not a regular file (it is a FIFO"});
}

TEST_CASE("a file shorter than the SEG-Y headers is not read") {
    const std::string path = (scratch("tiny") / "tiny.sgy").string();
    std::ofstream(path) << "not a SEG-Y file";
    check_message(error_of([&] { io::read_volume(path); }), {path.c_str(), "fewer than the 3600 bytes"});
}

TEST_CASE("a truncated file is reported as truncated, not read short") {
    const std::string path = write_cube("truncated");
    std::filesystem::resize_file(path, std::filesystem::file_size(path) - 7);
    check_message(error_of([&] { io::read_volume(path); }), {path.c_str(), "truncated", "binary-header byte 3221"});
}

TEST_CASE("an unsupported sample format is named with the formats that are read") {
    const std::string path = write_cube("format-4");
    set_binary_field(path, SEGY_BIN_FORMAT, 4);
    check_message(error_of([&] { io::read_volume(path); }),
                  {path.c_str(), "sample format code 4", "byte 3225", "not supported", "5 (IEEE float)", "3 (int16)"});
}

TEST_CASE("a little-endian file is recognised by its byte-swapped format code") {
    const std::string path = write_cube("little-endian");
    set_binary_field(path, SEGY_BIN_FORMAT, 5 << 8);
    check_message(error_of([&] { io::read_volume(path); }), {path.c_str(), "little-endian"});
}

TEST_CASE("read_model rejects zero and negative velocities at the first bad node") {
    const auto dir = scratch("bad-velocity");
    for (float bad : {0.f, -1500.f}) {
        Volume v = numbered_volume(small_cube());
        v.at(2, 1, 3) = bad;
        io::ModelPaths paths;
        paths.vp = (dir / "vp.sgy").string();
        io::write_volume(paths.vp, v);
        const std::string value = bad == 0 ? "is 0" : "is -1500";
        check_message(error_of([&] { io::read_model(paths); }),
                      {paths.vp.c_str(), "(ix 2, iy 1, iz 3)", value.c_str(), "finite and positive"});
    }
}

TEST_CASE("a NaN or infinite sample in any model volume is refused naming the file, trace, node and sample") {
    const auto dir = scratch("non-finite-volume");
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    io::ModelPaths paths;
    paths.vp = (dir / "vp.sgy").string();
    paths.epsilon = (dir / "epsilon.sgy").string();
    for (const auto* bad_file : {&paths.vp, &paths.epsilon})
        for (float bad : {nan, inf, -inf}) {
            // Node (ix 2, iy 1) is the 7th trace written (iy * nx + ix + 1), sample iz 3
            // the 4th, at depth z0 + 3 dz = 30 m.
            Volume good = numbered_volume(small_cube()), broken = good;
            broken.at(2, 1, 3) = bad;
            io::write_volume(paths.vp, bad_file == &paths.vp ? broken : good);
            io::write_volume(paths.epsilon, bad_file == &paths.epsilon ? broken : good);
            const std::string value = std::isnan(bad) ? "is nan" : bad > 0 ? "is inf" : "is -inf";
            check_message(error_of([&] { io::read_model(paths); }),
                          {bad_file->c_str(), "trace 7 (node ix 2, iy 1) sample 4 (depth 30 m)", value.c_str(),
                           "must be finite"});
            check_message(error_of([&] { io::read_volume(*bad_file); }), {bad_file->c_str(), "trace 7", "sample 4"});
        }
}

TEST_CASE("a NaN or infinite shot sample is refused naming the file, trace, field record, channel and sample") {
    const std::string path = (scratch("shots-non-finite") / "shots.sgy").string();
    for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
        ShotGather a, b;
        a.id = 7, a.nt = 10, a.dt = 0.004;
        a.receivers = {{0, 0, 0}, {10, 0, 0}, {20, 0, 0}};
        a.data.assign(30, 1.f);
        b = a;
        b.id = 8;
        b.data[1 * 10 + 4] = bad;  // shot 8, channel 2, sample 5 (t = 4 dt): the file's 5th trace
        io::write_shots(path, {a, b});
        const std::string value = std::isnan(bad) ? "is nan" : "is inf";
        check_message(error_of([&] { io::read_shots(path); }),
                      {path.c_str(), "trace 5 (field record 8, channel 2) sample 5 (t = 0.016 s)", value.c_str(),
                       "must be finite"});
    }
}

TEST_CASE("two traces at one inline/crossline are reported as duplicates") {
    const std::string path = write_cube("duplicate");
    set_trace_field(path, 1, SEGY_TR_CROSSLINE, 1);  // trace 2 claims trace 1's node
    check_message(error_of([&] { io::read_volume(path); }),
                  {path.c_str(), "trace 1 and trace 2", "duplicate", "byte 193"});
}

TEST_CASE("a cube with a node without trace is reported as irregular") {
    const auto dir = scratch("missing-node");
    const std::string full = (dir / "full.sgy").string(), holed = (dir / "holed.sgy").string();
    io::write_volume(full, numbered_volume(small_cube()));
    std::vector<int> order;
    for (int i = 0; i < 12; ++i)
        if (i != 6) order.push_back(i);  // drop node ix 2, iy 1: inline 2, crossline 3
    copy_traces(full, holed, order);
    check_message(error_of([&] { io::read_volume(holed); }),
                  {holed.c_str(), "no trace at inline number (trace-header byte 189) 2", "crossline number (trace-header byte 193) 3",
                   "irregular"});
}

TEST_CASE("a trace off the regular spacing is reported with its position") {
    const std::string path = write_cube("inconsistent-spacing");
    set_trace_field(path, 5, SEGY_TR_CDP_X, trace_field(path, 5, SEGY_TR_CDP_X) + 300);  // 3 m off
    check_message(error_of([&] { io::read_volume(path); }), {path.c_str(), "trace 6", "inconsistent trace spacing", "181/185"});
}

TEST_CASE("a 2D line with a gap in its coordinates is reported as missing a position") {
    const auto dir = scratch("line-gap");
    Grid g;
    g.nx = 8, g.nz = 4, g.dx = 25, g.dz = 25;
    const std::string full = (dir / "full.sgy").string(), gap = (dir / "gap.sgy").string();
    io::write_volume(full, numbered_volume(g));
    copy_traces(full, gap, {0, 1, 2, 4, 5, 6, 7});
    set_trace_field(gap, -1, SEGY_TR_CROSSLINE, 0);
    set_trace_field(gap, -1, SEGY_TR_INLINE, 0);
    check_message(error_of([&] { io::read_volume(gap); }), {gap.c_str(), "50 m apart", "25 m apart", "missing"});
}

TEST_CASE("shot gathers read as a model are named as shot gathers") {
    // Their receivers lie along lines through each source: placed as a grid they only
    // looked irregular ("a position is missing").
    const std::string path = (source_dir() / "shots" / "layers2d.sgy").string();
    check_message(error_of([&] { io::read_volume(path); }), {path.c_str(), "shot gathers", "data.shots", "model.vp"});
}

TEST_CASE("a model of a single trace needs its spacing given") {
    const std::string full = write_cube("single-trace");
    const std::string one = (std::filesystem::path(full).parent_path() / "one.sgy").string();
    copy_traces(full, one, {5});
    // One trace has no neighbour: a spacing of 1 m was once made up, and with it a time
    // step 10x too small.
    check_message(error_of([&] { io::read_volume(one); }), {one.c_str(), "single trace", "model.dx"});
    io::GridReadOptions opt;
    opt.dx = 25;
    const Volume v = io::read_volume(one, opt);
    CHECK(v.grid.nx == 1);
    CHECK(v.grid.dx == 25);
}

TEST_CASE("a zero sample interval is an error unless dz is given") {
    const std::string path = write_cube("zero-interval");
    set_trace_field(path, -1, SEGY_TR_SAMPLE_INTER, 0);
    set_binary_field(path, SEGY_BIN_INTERVAL, 0);
    check_message(error_of([&] { io::read_volume(path); }),
                  {path.c_str(), "sample interval is zero", "byte 117", "byte 3217", "model.dz"});
    io::GridReadOptions opt;
    opt.dz = 12;
    CHECK(io::read_volume(path, opt).grid.dz == 12);
}

TEST_CASE("shots with a zero sample interval are not read") {
    const std::string path = (scratch("shots-zero-interval") / "shots.sgy").string();
    ShotGather g;
    g.id = 1, g.nt = 10, g.dt = 0.004;
    g.receivers = {{0, 0, 0}, {10, 0, 0}};
    g.data.assign(20, 1.f);
    io::write_shots(path, {g});
    set_trace_field(path, -1, SEGY_TR_SAMPLE_INTER, 0);
    set_binary_field(path, SEGY_BIN_INTERVAL, 0);
    check_message(error_of([&] { io::read_shots(path); }), {path.c_str(), "sample interval is zero", "byte 117"});
}

TEST_CASE("a field record with two source positions is not read as one shot") {
    const std::string path = (scratch("shots-two-sources") / "shots.sgy").string();
    ShotGather g;
    g.id = 7, g.nt = 10, g.dt = 0.004;
    g.receivers = {{0, 0, 0}, {10, 0, 0}, {20, 0, 0}};
    g.data.assign(30, 1.f);
    io::write_shots(path, {g});
    set_trace_field(path, 2, SEGY_TR_SOURCE_X, 5000);
    check_message(error_of([&] { io::read_shots(path); }), {path.c_str(), "field record 7", "two source positions", "trace 3"});
}

TEST_CASE("an inline byte that does not start a header field is refused") {
    const std::string path = write_cube("bad-option");
    io::GridReadOptions opt;
    opt.inline_byte = 190;
    check_message(error_of([&] { io::read_volume(path, opt); }), {"model.inline-byte", "190", "not the first byte"});
}

TEST_CASE("shot headers rtm would read wrongly are refused naming the byte and a dead trace reads as zeros") {
    // Each was read without a word: a delay as a recording from the shot (reflectors too
    // shallow), degrees and feet as metres, a dead trace's noise as data.
    const std::string path = (scratch("shots-headers") / "shots.sgy").string();
    ShotGather g;
    g.id = 7, g.nt = 10, g.dt = 0.004;
    g.receivers = {{0, 0, 0}, {10, 0, 0}, {20, 0, 0}};
    g.data.assign(30, 1.f);
    io::write_shots(path, {g});
    set_trace_field(path, 1, SEGY_TR_DELAY_REC_TIME, 100);
    check_message(error_of([&] { io::read_shots(path); }),
                  {path.c_str(), "trace 2 (field record 7) starts 100 ms", "byte 109", "set byte 109 to 0"});
    // Degrees where every position could be longitude and latitude (these lie within
    // 20 m of the origin); beyond those ranges byte 89 is taken as wrong, as in
    // viking_small.segy (test_segy_real_files.cpp).
    // The same delay in a geometry file (positions alone are read) is no matter; in a
    // wavelet it is the fire time's, said as such; in single-trace gathers at their own
    // sources (rtm's model writer keeps z0 there) it is left to the plan, which refuses
    // the file as a velocity model.
    CHECK(io::ShotIndex(path, io::ShotIndex::Use::Geometry).size() == 1);
    ShotGather w = g;
    w.receivers.resize(1);
    w.data.resize(10);
    io::write_shots(path, {w});
    set_trace_field(path, 0, SEGY_TR_DELAY_REC_TIME, -50);
    check_message(error_of([&] { io::ShotIndex(path, io::ShotIndex::Use::Wavelet); }),
                  {path.c_str(), "starts -50 ms", "from the fire time", "first sample as the source's time 0"});
    ShotGather a = w, b = w;
    a.receivers[0] = {a.source.x, a.source.y, 0};
    b.id = 8, b.source.x = 100, b.receivers[0] = {100, b.source.y, 0};
    io::write_shots(path, {a, b});
    set_trace_field(path, -1, SEGY_TR_DELAY_REC_TIME, 10);
    CHECK(io::ShotIndex(path).size() == 2);
    io::write_shots(path, {g});
    set_trace_field(path, 0, SEGY_TR_COORD_UNITS, 3);
    check_message(error_of([&] { io::read_shots(path); }), {path.c_str(), "read as degrees: trace 1", "byte 89"});
    ShotGather far = g;
    for (auto& r : far.receivers) r.x += 5000;
    io::write_shots(path, {far});
    set_trace_field(path, -1, SEGY_TR_COORD_UNITS, 3);
    CHECK(io::read_shots(path).size() == 1);
    io::write_shots(path, {g});
    set_binary_field(path, SEGY_BIN_MEASUREMENT_SYSTEM, 2);
    check_message(error_of([&] { io::read_shots(path); }), {path.c_str(), "in feet", "byte 3255"});
    const std::string cube = write_cube("volume-feet");
    set_binary_field(cube, SEGY_BIN_MEASUREMENT_SYSTEM, 2);
    check_message(error_of([&] { io::read_volume(cube); }), {cube.c_str(), "in feet", "byte 3255"});
    // Metres (1) and unspecified units (0) are read.
    io::write_shots(path, {g});
    set_binary_field(path, SEGY_BIN_MEASUREMENT_SYSTEM, 1);
    set_trace_field(path, -1, SEGY_TR_COORD_UNITS, 1);
    CHECK(io::read_shots(path).size() == 1);

    // A dead trace (trace identification code 2) is zeros, whatever it holds (a NaN here).
    ShotGather noisy = g;
    noisy.data[1 * 10 + 3] = std::numeric_limits<float>::quiet_NaN();
    noisy.data[1 * 10 + 4] = 5.f;
    io::write_shots(path, {noisy});
    set_trace_field(path, 1, SEGY_TR_TRACE_ID, 2);
    const io::ShotIndex index(path);
    CHECK(index.dead_traces() == 1);
    const ShotGather read = index.load(0);
    for (int t = 0; t < 10; ++t) {
        CHECK(read.trace(0)[t] == 1.f);
        CHECK(read.trace(1)[t] == 0.f);
    }
}

TEST_CASE("a shot file rewritten after it was indexed is refused when a gather is loaded") {
    // A job read some shots from the old file and the rest from the new one, exit 0.
    const std::string path = (scratch("shots-rewritten") / "shots.sgy").string();
    ShotGather g;
    g.id = 7, g.nt = 10, g.dt = 0.004;
    g.receivers = {{0, 0, 0}, {10, 0, 0}};
    g.data.assign(20, 1.f);
    io::write_shots(path, {g});
    const io::ShotIndex index(path);
    CHECK(index.load(0).data == g.data);
    g.data.assign(20, 2.f);  // the same size and geometry, other samples
    io::write_shots(path, {g});
    check_message(error_of([&] { index.load(0); }), {path.c_str(), "changed since it was indexed", "Do not replace"});
}
