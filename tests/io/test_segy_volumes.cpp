// Velocity models and images through SEG-Y: write_volume then read_volume/read_model
// on small purpose-made grids.
#include <algorithm>
#include <numeric>
#include <random>
#include <tuple>

#include "io/model_io.h"
#include "segy_test_files.h"
#include "support/test_data.h"

using namespace rtm;
using namespace rtm::test;

namespace {

// Coordinates are stored in whole centimetres, so positions and spacings come back
// within 1 cm; dz and z0 (the sample interval and delay, exact in their fields for these
// grids) to rounding. The frame's unit vectors are a least-squares fit over the
// lattice's traces of coordinates rounded to 1 cm (rms 1 cm / sqrt(12) = 2.9 mm): a
// slope within 3 x 2.9 mm / sqrt(sum (i - mean)^2) per node, over dx >= 12.5 m and the
// 35 traces of the 7 x 5 grids here 6e-5 of a unit: 1e-4.
void check_same_grid(const Grid& a, const Grid& b) {
    CHECK(a.nx == b.nx);
    CHECK(a.ny == b.ny);
    CHECK(a.nz == b.nz);
    CHECK(a.dx == Approx(b.dx).margin(0.01));
    CHECK(a.dz == Approx(b.dz).margin(1e-9));
    CHECK(a.z0 == Approx(b.z0).margin(1e-9));
    CHECK(a.frame.ox == Approx(b.frame.ox).margin(0.01));
    CHECK(a.frame.oy == Approx(b.frame.oy).margin(0.01));
    CHECK(a.frame.exx == Approx(b.frame.exx).margin(1e-4));
    CHECK(a.frame.exy == Approx(b.frame.exy).margin(1e-4));
    if (a.ny > 1) {
        CHECK(a.dy == Approx(b.dy).margin(0.01));
        CHECK(a.frame.eyx == Approx(b.frame.eyx).margin(1e-4));
        CHECK(a.frame.eyy == Approx(b.frame.eyy).margin(1e-4));
    }
}

Grid cube_grid() {
    Grid g;
    g.nx = 7, g.ny = 5, g.nz = 11;
    g.dx = 12.5, g.dy = 20, g.dz = 5;
    g.z0 = 100;
    g.frame = rotated_frame(30);
    return g;
}

Grid line_grid() {
    Grid g;
    g.nx = 9, g.nz = 6;
    g.dx = 7.5, g.dz = 7.5;
    g.frame = rotated_frame(-20);
    return g;
}

std::vector<int> shuffled(int n, unsigned seed) {
    std::vector<int> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), std::mt19937(seed));
    return order;
}

}  // namespace

TEST_CASE("a 3D cube written and read back keeps every sample and its geometry") {
    const auto dir = scratch("cube-roundtrip");
    const Volume v = numbered_volume(cube_grid());
    io::write_volume((dir / "cube.sgy").string(), v, "test cube");
    const Volume r = io::read_volume((dir / "cube.sgy").string());
    check_same_grid(r.grid, v.grid);
    CHECK(r.data == v.data);
    CHECK_FALSE(std::filesystem::exists(dir / "cube.sgy.tmp"));
}

TEST_CASE("a 2D line written and read back keeps every sample, its spacing and its direction") {
    const auto dir = scratch("line-roundtrip");
    const Volume v = numbered_volume(line_grid());
    io::write_volume((dir / "line.sgy").string(), v);
    const Volume r = io::read_volume((dir / "line.sgy").string());
    check_same_grid(r.grid, v.grid);
    CHECK(r.grid.ny == 1);
    CHECK(r.data == v.data);
}

TEST_CASE("write_volume fills inline, crossline, coordinates and the depth sampling in the headers") {
    const auto dir = scratch("cube-headers");
    const std::string path = (dir / "cube.sgy").string();
    const Volume v = numbered_volume(cube_grid());
    io::write_volume(path, v);
    const int trace = 2 * 7 + 3;  // node ix 3, iy 2
    CHECK(trace_field(path, trace, SEGY_TR_CROSSLINE) == 4);
    CHECK(trace_field(path, trace, SEGY_TR_INLINE) == 3);
    CHECK(trace_field(path, trace, SEGY_TR_SOURCE_GROUP_SCALAR) == -100);
    CHECK(trace_field(path, trace, SEGY_TR_SAMPLE_INTER) == 5000);
    CHECK(trace_field(path, trace, SEGY_TR_SAMPLE_COUNT) == 11);
    CHECK(trace_field(path, trace, SEGY_TR_SEQ_FILE) == trace + 1);
    double X, Y;
    v.grid.frame.to_world(3 * 12.5, 2 * 20.0, X, Y);
    CHECK(trace_field(path, trace, SEGY_TR_CDP_X) == std::lround(X * 100));
    CHECK(trace_field(path, trace, SEGY_TR_CDP_Y) == std::lround(Y * 100));
    CHECK(trace_field(path, trace, SEGY_TR_GROUP_X) == std::lround(X * 100));
    CHECK(trace_field(path, trace, SEGY_TR_SOURCE_Y) == std::lround(Y * 100));
}

TEST_CASE("traces of a cube in any order land on the node named by their inline and crossline") {
    const auto dir = scratch("cube-shuffled");
    const Volume v = numbered_volume(cube_grid());
    io::write_volume((dir / "sorted.sgy").string(), v);
    copy_traces((dir / "sorted.sgy").string(), (dir / "shuffled.sgy").string(), shuffled(7 * 5, 42));
    const Volume r = io::read_volume((dir / "shuffled.sgy").string());
    check_same_grid(r.grid, v.grid);
    CHECK(r.data == v.data);
}

TEST_CASE("a 2D line without line numbers is ordered by distance along its coordinates") {
    const auto dir = scratch("line-by-coordinates");
    const Volume v = numbered_volume(line_grid());
    io::write_volume((dir / "sorted.sgy").string(), v);
    const std::string path = (dir / "shuffled.sgy").string();
    // Shuffled, with the first trace of the line first in the file (which orients it).
    auto order = shuffled(9, 7);
    std::iter_swap(order.begin(), std::find(order.begin(), order.end(), 0));
    copy_traces((dir / "sorted.sgy").string(), path, order);
    set_trace_field(path, -1, SEGY_TR_INLINE, 0);
    set_trace_field(path, -1, SEGY_TR_CROSSLINE, 0);
    set_trace_field(path, -1, SEGY_TR_ENSEMBLE, 0);
    const Volume r = io::read_volume(path);
    check_same_grid(r.grid, v.grid);
    CHECK(r.data == v.data);
}

TEST_CASE("a cube without line numbers is placed by its coordinates alone") {
    const auto dir = scratch("cube-by-coordinates");
    const Volume v = numbered_volume(cube_grid());  // rotated 30 degrees, dx 12.5, dy 20
    io::write_volume((dir / "sorted.sgy").string(), v);
    for (const bool shuffle : {false, true}) {
        const std::string path = (dir / (shuffle ? "shuffled.sgy" : "plain.sgy")).string();
        // Shuffled: the first and last traces of the cube stay first and last in the file
        // (the file's order orients the axes).
        std::vector<int> order(7 * 5);
        std::iota(order.begin(), order.end(), 0);
        if (shuffle) std::shuffle(order.begin() + 1, order.end() - 1, std::mt19937(3));
        copy_traces((dir / "sorted.sgy").string(), path, order);
        for (int byte : {SEGY_TR_INLINE, SEGY_TR_CROSSLINE, SEGY_TR_ENSEMBLE}) set_trace_field(path, -1, byte, 0);
        for (const auto placement : {io::GridReadOptions::Placement::Auto, io::GridReadOptions::Placement::Coordinates}) {
            io::GridReadOptions opt;
            opt.placement = placement;
            const Volume r = io::read_volume(path, opt);
            check_same_grid(r.grid, v.grid);
            CHECK(r.data == v.data);
        }
    }
    SECTION("a skewed lattice, whose nearest trace off the first line is a diagonal neighbour") {
        // Axes 105 degrees apart, dx 12.5, dy 25: from node (0, 0) node (1, 1) is nearer
        // (24.9 m) than node (0, 1) (25 m).
        Grid g = cube_grid();
        g.dy = 25;
        const double a = 30 * std::acos(-1.0) / 180, b = a + 105 * std::acos(-1.0) / 180;
        g.frame.eyx = std::cos(b), g.frame.eyy = std::sin(b);
        g.frame.exx = std::cos(a), g.frame.exy = std::sin(a);
        const Volume w = numbered_volume(g);
        const std::string path = (dir / "skewed.sgy").string();
        io::write_volume(path, w);
        for (int byte : {SEGY_TR_INLINE, SEGY_TR_CROSSLINE, SEGY_TR_ENSEMBLE}) set_trace_field(path, -1, byte, 0);
        const Volume r = io::read_volume(path);
        check_same_grid(r.grid, w.grid);
        CHECK(r.data == w.data);
    }
    SECTION("a trace off its node by more than the tolerance is named") {
        const std::string path = (dir / "displaced.sgy").string();
        std::vector<int> order(7 * 5);
        std::iota(order.begin(), order.end(), 0);
        copy_traces((dir / "sorted.sgy").string(), path, order);
        for (int byte : {SEGY_TR_INLINE, SEGY_TR_CROSSLINE, SEGY_TR_ENSEMBLE}) set_trace_field(path, -1, byte, 0);
        // Node (3, 2), away from the three traces that span the lattice. Coordinates are in
        // centimetres (scalar -100): 3 m off its node along X, a quarter of dx, beyond the
        // tolerance (5% of the spacing and two centimetres).
        REQUIRE(trace_field(path, 17, SEGY_TR_SOURCE_GROUP_SCALAR) == -100);
        set_trace_field(path, 17, SEGY_TR_CDP_X, trace_field(path, 17, SEGY_TR_CDP_X) + 300);
        const std::string msg = error_of([&] { io::read_volume(path); });
        INFO(msg);
        CHECK(contains(msg, path));
        CHECK(contains(msg, "trace 18"));
    }
}

TEST_CASE("a crooked 2D line without line numbers names the trace off the line") {
    const auto dir = scratch("line-crooked");
    const std::string path = (dir / "line.sgy").string();
    io::write_volume(path, numbered_volume(line_grid()));
    for (int byte : {SEGY_TR_INLINE, SEGY_TR_CROSSLINE, SEGY_TR_ENSEMBLE}) set_trace_field(path, -1, byte, 0);
    // Trace 5 moved 3 m (0.4 dx) across the line: one trace off it is a crooked line,
    // not a second row of a cube.
    REQUIRE(trace_field(path, 4, SEGY_TR_SOURCE_GROUP_SCALAR) == -100);
    set_trace_field(path, 4, SEGY_TR_CDP_Y, trace_field(path, 4, SEGY_TR_CDP_Y) + 300);
    const std::string msg = error_of([&] { io::read_volume(path); });
    INFO(msg);
    CHECK(contains(msg, path));
    CHECK(contains(msg, "trace 5"));
    CHECK(contains(msg, "off the straight line"));
}

TEST_CASE("a cube without coordinates takes its spacing from the options") {
    const auto dir = scratch("cube-no-coordinates");
    const std::string path = (dir / "cube.sgy").string();
    io::write_volume(path, numbered_volume(cube_grid()));
    for (int byte : {SEGY_TR_CDP_X, SEGY_TR_CDP_Y, SEGY_TR_SOURCE_X, SEGY_TR_SOURCE_Y}) set_trace_field(path, -1, byte, 0);
    const std::string msg = error_of([&] { io::read_volume(path); });
    INFO(msg);
    CHECK(contains(msg, path));
    CHECK(contains(msg, "model.dx"));
    io::GridReadOptions opt;
    opt.dx = 10, opt.dy = 15;
    const Volume r = io::read_volume(path, opt);
    CHECK(r.grid.nx == 7);
    CHECK(r.grid.ny == 5);
    CHECK(r.grid.dx == 10);
    CHECK(r.grid.dy == 15);
}

TEST_CASE("the depth sampling can be overridden and scaled by the depth unit") {
    const auto dir = scratch("cube-depth-unit");
    const std::string path = (dir / "line.sgy").string();
    io::write_volume(path, numbered_volume(line_grid()));  // interval field 7500
    io::GridReadOptions opt;
    opt.depth_unit = 1e-4;
    CHECK(io::read_volume(path, opt).grid.dz == Approx(0.75));
    opt.dz = 2;
    CHECK(io::read_volume(path, opt).grid.dz == 2);
}

TEST_CASE("read_model returns vp and the anisotropy volumes on one grid") {
    const auto dir = scratch("model-with-anisotropy");
    Volume vp = numbered_volume(cube_grid()), eps(cube_grid(), 0.1f), delta(cube_grid(), -0.05f);
    io::write_volume((dir / "vp.sgy").string(), vp);
    io::write_volume((dir / "eps.sgy").string(), eps);
    io::write_volume((dir / "delta.sgy").string(), delta);
    io::ModelPaths paths;
    paths.vp = (dir / "vp.sgy").string();
    paths.epsilon = (dir / "eps.sgy").string();
    paths.delta = (dir / "delta.sgy").string();
    const Model m = io::read_model(paths);
    CHECK(m.vp.data == vp.data);
    REQUIRE(m.extra.count("epsilon") == 1);
    REQUIRE(m.extra.count("delta") == 1);
    CHECK(m.extra.count("theta") == 0);
    CHECK(m.extra.at("epsilon").data == eps.data);
    CHECK(m.extra.at("delta").data == delta.data);
}

TEST_CASE("read_model rejects an anisotropy volume on another grid than vp") {
    const auto dir = scratch("model-grid-mismatch");
    Grid other = cube_grid();
    other.dx = 10;
    io::write_volume((dir / "vp.sgy").string(), numbered_volume(cube_grid()));
    io::write_volume((dir / "eps.sgy").string(), Volume(other, 0.1f));
    io::ModelPaths paths;
    paths.vp = (dir / "vp.sgy").string();
    paths.epsilon = (dir / "eps.sgy").string();
    const std::string msg = error_of([&] { io::read_model(paths); });
    INFO(msg);
    CHECK(contains(msg, paths.epsilon));
    CHECK(contains(msg, "differs from vp's"));
}

TEST_CASE("read_model names the axes of an anisotropy volume placed with x and y swapped, and what fixes it") {
    // A square cube whose epsilon traces run along y first, without line numbers: placed
    // by its coordinates with x and y swapped, otherwise vp's grid. The message printed
    // two identical grids, and advised writing the volume on vp's grid, which it was.
    const auto dir = scratch("model-axes-swapped");
    Grid g;
    g.nx = g.ny = 4, g.nz = 3;
    g.dx = g.dy = g.dz = 10;
    io::write_volume((dir / "vp.sgy").string(), numbered_volume(g));
    io::write_volume((dir / "sorted.sgy").string(), Volume(g, 0.1f));
    std::vector<int> y_first;
    for (int ix = 0; ix < g.nx; ++ix)
        for (int iy = 0; iy < g.ny; ++iy) y_first.push_back(iy * g.nx + ix);
    const std::string eps = (dir / "eps.sgy").string();
    copy_traces((dir / "sorted.sgy").string(), eps, y_first);
    for (int byte : {SEGY_TR_INLINE, SEGY_TR_CROSSLINE, SEGY_TR_ENSEMBLE}) set_trace_field(eps, -1, byte, 0);
    io::ModelPaths paths;
    paths.vp = (dir / "vp.sgy").string();
    paths.epsilon = eps;
    const std::string msg = error_of([&] { io::read_model(paths); });
    INFO(msg);
    CHECK(contains(msg, "x axis towards (0, 1), y axis towards (1, 0)) differs from vp's"));
    CHECK(contains(msg, "x axis towards (1, 0), y axis towards (0, 1))"));
    CHECK(contains(msg, "model.inline-byte and model.crossline-byte"));
}

TEST_CASE("read_model tells an anisotropy volume without trace coordinates to take vp's") {
    // model.dx gives such a file its spacing, and it lies at origin 0, 0: the advice to
    // give the spacing was followed by a refusal that advised nothing new.
    const auto dir = scratch("model-unplaced");
    Grid g = line_grid();
    g.frame = Frame{};
    g.frame.ox = 1000;
    io::write_volume((dir / "vp.sgy").string(), numbered_volume(g));
    const std::string eps = (dir / "eps.sgy").string();
    io::write_volume(eps, Volume(g, 0.1f));
    for (int byte : {SEGY_TR_CDP_X, SEGY_TR_CDP_Y, SEGY_TR_SOURCE_X, SEGY_TR_SOURCE_Y, SEGY_TR_GROUP_X, SEGY_TR_GROUP_Y})
        set_trace_field(eps, -1, byte, 0);
    io::ModelPaths paths;
    paths.vp = (dir / "vp.sgy").string();
    paths.epsilon = eps;
    io::GridReadOptions opt;
    opt.dx = g.dx;
    const std::string msg = error_of([&] { io::read_model(paths, opt); });
    INFO(msg);
    CHECK(contains(msg, "origin 0, 0"));
    CHECK(contains(msg, "with vp's trace coordinates (CDP X/Y, bytes 181/185)"));
}

TEST_CASE("read_model with model.dz refuses an anisotropy volume whose file states another depth step than vp's") {
    // model.dz replaces the depth step of every volume read: epsilon sampled at 10 m
    // beside vp at 5 m was stretched onto vp's depths, silently.
    const auto dir = scratch("model-dz-mismatch");
    Grid coarse = cube_grid();
    coarse.dz = 10;
    io::write_volume((dir / "vp.sgy").string(), numbered_volume(cube_grid()));
    io::write_volume((dir / "eps.sgy").string(), Volume(coarse, 0.1f));
    io::write_volume((dir / "delta.sgy").string(), Volume(cube_grid(), 0.05f));
    io::ModelPaths paths;
    paths.vp = (dir / "vp.sgy").string();
    paths.epsilon = (dir / "eps.sgy").string();
    io::GridReadOptions opt;
    opt.dz = 4;
    const std::string msg = error_of([&] { io::read_model(paths, opt); });
    INFO(msg);
    CHECK(contains(msg, paths.epsilon + ": its sample interval field says 10000 where vp's in " + paths.vp + " says 5000"));
    CHECK(contains(msg, "option model.dz (4 m) replaces both"));
    // Files that state one step take the override together.
    paths.epsilon = (dir / "delta.sgy").string();
    const Model m = io::read_model(paths, opt);
    CHECK(m.vp.grid.dz == 4);
    CHECK(m.extra.at("epsilon").grid.dz == 4);
    // vp stating none (the usual reason for model.dz): a file stating model.dz's step is
    // on vp's grid; one stating another is refused.
    const std::string bare = (dir / "vp_bare.sgy").string();
    std::filesystem::copy_file(paths.vp, bare);
    set_binary_field(bare, SEGY_BIN_INTERVAL, 0);
    set_trace_field(bare, -1, SEGY_TR_SAMPLE_INTER, 0);
    paths.vp = bare;
    opt.dz = 5;
    CHECK(io::read_model(paths, opt).extra.at("epsilon").grid.dz == 5);
    paths.epsilon = (dir / "eps.sgy").string();
    const std::string bare_msg = error_of([&] { io::read_model(paths, opt); });
    INFO(bare_msg);
    CHECK(contains(bare_msg, "its sample interval field says 10000 where vp's in " + bare +
                                 " says none and option model.dz gives 5 m"));
}

TEST_CASE("write_volume refuses a dz that SEG-Y cannot hold in whole millimetres") {
    const auto dir = scratch("volume-bad-dz");
    Grid g = line_grid();
    g.dz = 2.5004;
    const std::string path = (dir / "line.sgy").string();
    std::string msg = error_of([&] { io::write_volume(path, Volume(g, 1.f)); });
    INFO(msg);
    CHECK(contains(msg, path));
    CHECK(contains(msg, "millimetres"));
    g.dz = 40;  // 40000 mm does not fit 16 bits
    msg = error_of([&] { io::write_volume(path, Volume(g, 1.f)); });
    CHECK(contains(msg, "does not fit"));
    CHECK_FALSE(std::filesystem::exists(path));
    CHECK_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST_CASE("every sample format rtm reads (IBM float, int32, int16, IEEE float, int8) gives back every sample, the last of each trace too") {
    const auto dir = scratch("volume-formats");
    const std::string path = (dir / "cube.sgy").string();
    const Volume v = numbered_volume(cube_grid());  // 11 samples a trace: no whole number of 4-byte words in int16 or int8
    io::write_volume(path, v);
    // (format, offset, scale): the volume's quarter steps become whole numbers that fit
    // the format, so every format holds them exactly.
    const std::tuple<int, float, float> formats[] = {{SEGY_IBM_FLOAT_4_BYTE, 0.f, 4.f},
                                                     {SEGY_SIGNED_INTEGER_4_BYTE, 0.f, 4.f},
                                                     {SEGY_SIGNED_SHORT_2_BYTE, 0.f, 4.f},
                                                     {SEGY_SIGNED_CHAR_1_BYTE, 1500.f, 0.25f}};
    for (const auto& [format, offset, scale] : formats) {
        const std::string coded = (dir / ("cube-" + std::to_string(format) + ".sgy")).string();
        rewrite_in_format(path, coded, format, offset, scale);
        const Volume r = io::read_volume(coded);
        INFO("format " << format);
        REQUIRE(r.data.size() == v.data.size());
        int wrong = 0;
        for (std::size_t k = 0; k < v.data.size(); ++k)
            wrong += r.data[k] != float(std::lround((v.data[k] - offset) * scale));
        CHECK(wrong == 0);
    }
}

TEST_CASE("a write that fails half way leaves neither the file nor its temporary") {
    const auto dir = scratch("volume-failed-write");
    const std::string path = (dir / "cube.sgy").string();
    Volume v = numbered_volume(cube_grid());
    // Node (0,0) fits a 32-bit field in cm (2^31 cm = 21474836.48 m), the last node
    // of the first inline, 65 m further east, does not.
    v.grid.frame.ox = 21474800.0;
    const std::string msg = error_of([&] { io::write_volume(path, v); });
    INFO(msg);
    CHECK(contains(msg, "does not fit a 32-bit SEG-Y coordinate"));
    CHECK_FALSE(std::filesystem::exists(path));
    CHECK_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST_CASE("the textual header gives the frame without its coordinates' rounding (the same model in another trace order, the same header)") {
    // A frame fitted to coordinates carries rounding far below their centimetres: an
    // origin of 7.96e-13 m and an axis cosine of -1.7e-17 printed so, and another trace
    // order of the same model gave another header. Origins to the millimetre, cosines
    // to 1e-9.
    Grid g;
    g.nx = 4, g.ny = 3, g.nz = 5, g.dx = g.dy = 20, g.dz = 10;
    g.frame.ox = 1000 + 3e-12, g.frame.oy = 7.96e-13;
    g.frame.exx = 1 - 2e-16, g.frame.exy = -1.7e-17, g.frame.eyx = 1.7e-17, g.frame.eyy = 1;
    const std::string path = (scratch("volume-header-frame") / "v.sgy").string();
    io::write_volume(path, numbered_volume(g));
    SegyHandle in(path, "rb");
    std::vector<char> text(SEGY_TEXT_HEADER_SIZE + 1);
    REQUIRE(segy_read_textheader(in.fp, text.data()) == SEGY_OK);
    const std::string t(text.data());
    INFO(t);
    CHECK(t.find("C 8 ORIGIN X=1000 Y=0 ") != std::string::npos);
    CHECK(t.find("C 9 X AXIS (1, 0) Y AXIS (0, 1) ") != std::string::npos);
}
