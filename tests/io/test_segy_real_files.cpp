// The real files in shared/data (skipped, visibly, when the folder is absent):
// int16 post-stack cube, IBM-float shot gathers, IEEE-float 2D depth models.
#include <chrono>
#include <cmath>
#include <map>
#include <sstream>

#include "io/model_io.h"
#include "io/segy_info.h"
#include "io/shot_io.h"
#include "segy_test_files.h"
#include "support/test_data.h"

using namespace rtm;
using namespace rtm::test;

TEST_CASE("f3.sgy reads as a 23 x 18 x 75 cube with every trace on its inline/crossline node") {
    const auto path = shared_file("field/f3.sgy");
    if (path.empty()) return;
    const Volume v = io::read_volume(path.string());
    const Grid& g = v.grid;
    // x runs along crosslines (875..892), y along inlines (111..133).
    REQUIRE(g.nx == 18);
    REQUIRE(g.ny == 23);
    REQUIRE(g.nz == 75);
    CHECK(g.dz == Approx(4.0));  // 4000 us read with the default depth unit

    // Each trace's raw int16 samples, read here through segyio, sit on the node named
    // by its inline/crossline, and the frame puts that node at the trace's CDP X/Y.
    SegyHandle f(path.string(), "rb");
    REQUIRE(f.traces == 414);
    std::map<std::pair<int, int>, std::pair<double, double>> xy;  // (iline, xline) -> CDP X/Y
    std::vector<char> header(SEGY_TRACE_HEADER_SIZE), raw(f.trsize);
    double worst = 0;
    for (int i = 0; i < f.traces; ++i) {
        REQUIRE(segy_traceheader(f.fp, i, header.data(), f.trace0, f.trsize) == SEGY_OK);
        REQUIRE(segy_readtrace(f.fp, i, raw.data(), f.trace0, f.trsize) == SEGY_OK);
        REQUIRE(segy_to_native(SEGY_SIGNED_SHORT_2_BYTE, 75, raw.data()) == SEGY_OK);
        std::int32_t il, xl, cx, cy;
        segy_get_field(header.data(), SEGY_TR_INLINE, &il);
        segy_get_field(header.data(), SEGY_TR_CROSSLINE, &xl);
        segy_get_field(header.data(), SEGY_TR_CDP_X, &cx);
        segy_get_field(header.data(), SEGY_TR_CDP_Y, &cy);
        const auto* samples = reinterpret_cast<const std::int16_t*>(raw.data());
        for (int iz = 0; iz < 75; ++iz) REQUIRE(v.at(xl - 875, il - 111, iz) == float(samples[iz]));
        xy[{il, xl}] = {cx / 10.0, cy / 10.0};
        double X, Y;
        g.frame.to_world((xl - 875) * g.dx, (il - 111) * g.dy, X, Y);
        worst = std::max(worst, std::hypot(X - cx / 10.0, Y - cy / 10.0));
    }
    CHECK(worst < 0.5);

    // dx, dy: the coordinate distance between neighbouring nodes (about 25 m).
    auto dist = [&](std::pair<int, int> a, std::pair<int, int> b) {
        return std::hypot(xy[a].first - xy[b].first, xy[a].second - xy[b].second);
    };
    CHECK(g.dx == Approx(dist({111, 875}, {111, 892}) / 17).margin(0.05));
    CHECK(g.dy == Approx(dist({111, 875}, {133, 875}) / 22).margin(0.05));
    CHECK(g.dx == Approx(25).margin(0.1));
    CHECK(g.dy == Approx(25).margin(0.1));
}

TEST_CASE("viking_small.segy reads as 4 gathers of 120 IBM-float traces with offsets matching their geometry") {
    const auto path = shared_file("field/viking_small.segy");
    if (path.empty()) return;
    const auto shots = io::read_shots(path.string());
    REQUIRE(shots.size() == 4);
    for (int k = 0; k < 4; ++k) {
        const ShotGather& g = shots[k];
        CHECK(g.id == k + 3);
        CHECK(g.nt == 600);
        CHECK(g.dt == Approx(0.004));
        REQUIRE(g.ntraces() == 120);
        for (int r = 0; r < 120; ++r) CHECK(g.channels[r] == r + 1);
    }
    // Every trace's offset field (byte 37, metres, negative behind the source) is the
    // signed source-to-group distance of the geometry read_shots returns.
    SegyHandle f(path.string(), "rb");
    REQUIRE(f.traces == 480);
    std::vector<char> header(SEGY_TRACE_HEADER_SIZE);
    for (int i = 0; i < f.traces; ++i) {
        REQUIRE(segy_traceheader(f.fp, i, header.data(), f.trace0, f.trsize) == SEGY_OK);
        std::int32_t ffid, channel, offset;
        segy_get_field(header.data(), SEGY_TR_FIELD_RECORD, &ffid);
        segy_get_field(header.data(), SEGY_TR_NUMBER_ORIG_FIELD, &channel);
        segy_get_field(header.data(), SEGY_TR_OFFSET, &offset);
        const ShotGather& g = shots[ffid - 3];
        const Position& rec = g.receivers[channel - 1];
        const double d = std::hypot(rec.x - g.source.x, rec.y - g.source.y);
        CHECK(std::abs(offset) == Approx(d).margin(0.5));
        CHECK((offset < 0) == (rec.x < g.source.x));
    }
    // The IBM floats convert to plausible amplitudes (not byte-swapped garbage).
    float peak = 0;
    for (float s : shots[0].data) peak = std::max(peak, std::abs(s));
    CHECK(peak > 1);
    CHECK(peak < 1e4);
}

TEST_CASE("the Marmousi model reads as a 1601 x 401 line at 7.5 m with velocities in m/s") {
    const auto path = shared_file("models/marmousi_vp_nx1601_nz401_d7.5m_ms.segy");
    if (path.empty()) return;
    io::ModelPaths paths;
    paths.vp = path.string();
    const Model m = io::read_model(paths);
    const Grid& g = m.grid();
    CHECK(g.nx == 1601);
    CHECK(g.ny == 1);
    CHECK(g.nz == 401);
    CHECK(g.dx == Approx(7.5));
    CHECK(g.dz == Approx(7.5));
    CHECK(g.frame.ox == Approx(0).margin(0.01));
    CHECK(g.frame.exx == Approx(1));
    const auto [lo, hi] = std::minmax_element(m.vp.data.begin(), m.vp.data.end());
    // This version of Marmousi (devito's vp_marmousi_bi) spans 1028..4700 m/s.
    CHECK(*lo >= 1000);
    CHECK(*hi <= 5500);
    CHECK(m.vp.at(0, 0, 0) == 1500);  // water at the surface
}

TEST_CASE("the Overthrust models read as 401 x 121 lines at 25 m") {
    for (const char* name : {"models/overthrust2d_vp_true_nx401_nz121_d25m.segy",
                             "models/overthrust2d_vp_smooth_initial_nx401_nz121_d25m.segy"}) {
        const auto path = shared_file(name);
        if (path.empty()) return;
        io::ModelPaths paths;
        paths.vp = path.string();
        const Model m = io::read_model(paths);
        INFO(name);
        CHECK(m.grid().nx == 401);
        CHECK(m.grid().ny == 1);
        CHECK(m.grid().nz == 121);
        CHECK(m.grid().dx == Approx(25));
        CHECK(m.grid().dz == Approx(25));
        const auto [lo, hi] = std::minmax_element(m.vp.data.begin(), m.vp.data.end());
        CHECK(*lo >= 1400);
        CHECK(*hi <= 6000);
    }
}

TEST_CASE("describe_segy tells what each real file holds, quickly") {
    const struct {
        const char* file;
        std::vector<std::string> says;
    } cases[] = {
        {"field/f3.sgy",
         {"int16 (code 3)", "traces:          414", "75 per trace", "4 ms", "3D cube: 23 inlines x 18 crosslines",
          "111..133", "875..892", "dx 25", "dy 25", "time:            4..300 ms", "rms"}},
        {"field/viking_small.segy",
         {"IBM float (code 1)", "600 per trace", "4 ms", "shot gathers: 4 shots", "field records 3..6",
          "120 channels per shot", "offsets:       -3237..-262 m", "time:            0..2396 ms"}},
        {"models/marmousi_vp_nx1601_nz401_d7.5m_ms.segy",
         {"IEEE float (code 5)", "revision:  1.0", "2D line: 1601 traces, dx 7.5 m", "401 per trace", "7500",
          "7.5 m", "depth:           0..3000 m", "min 1028"}},
        {"models/overthrust2d_vp_true_nx401_nz121_d25m.segy",
         {"2D line: 401 traces, dx 25 m", "121 per trace", "25000", "25 m", "depth:           0..3000 m"}},
        {"models/overthrust2d_vp_smooth_initial_nx401_nz121_d25m.segy", {"2D line: 401 traces, dx 25 m", "25 m"}},
    };
    for (const auto& c : cases) {
        const auto path = shared_file(c.file);
        if (path.empty()) continue;
        std::ostringstream out;
        const auto start = std::chrono::steady_clock::now();
        io::describe_segy(path.string(), out);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        INFO(out.str());
        CHECK(seconds < 2);
        for (const auto& s : c.says) {
            INFO("expected: " << s);
            CHECK(contains(out.str(), s));
        }
    }
}
