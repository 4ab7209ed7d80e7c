// Previews a geophysicist can read (issue 9, item 5): gathers and images with axes in
// seconds or metres, a title (file, shots, condition), a colour bar with the clip and
// the gain stated; partial images say how many shots they hold; per-shot images on
// request. The labels are drawn and also kept in the PNG's text chunks, read here.
#include <cstdio>
#include <filesystem>
#include <map>

#include "io/previews.h"
#include "io/shot_io.h"
#include "run_rtm.h"
#include "support/catch.hpp"
#include "support/read_png.h"
#include "support/test_data.h"

using namespace rtm;
using namespace rtm::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

// Dark pixels (text, axes) in rows y0..y1 of the picture.
int dark(const Png& p, int y0, int y1) {
    int n = 0;
    for (int y = y0; y < y1; ++y)
        for (int x = 0; x < p.width; ++x) n += p.rgb[(std::size_t(y) * p.width + x) * 3] < 100;
    return n;
}

bool have_font() { return fs::exists("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf") || std::getenv("RTM_FONT"); }

}  // namespace

TEST_CASE("rtm model's gather preview has a title, time and offset axes, the clip and the gain", "[previews]") {
    const auto dir = scratch("cli-preview-gather");
    const auto model = (source_dir() / "velocity_models" / "layers2d_vp.segy").string();
    const auto r = run_rtm("model --model.vp " + model + " --acquisition.source-x0 1000 --acquisition.source-dx 1000"
                           " --acquisition.source-nx 3 --acquisition.receiver-x0 500 --acquisition.receiver-dx 50"
                           " --acquisition.receiver-nx 41 --acquisition.record-length 0.3 --acquisition.record-dt 0.004"
                           " --propagation.device cpu --output.shots " + (dir / "s.sgy").string());
    INFO(r.output);
    REQUIRE(r.status == 0);
    const Png p = read_png(dir / "s.png");
    CHECK_THAT(p.text.at("Title"), Contains((dir / "s.sgy").string() + ": shot 2 (the middle of 3), modelled"));
    // Receivers 500..2500 m, the source at 2000 m: offsets -1500..500; 76 samples at 4 ms.
    CHECK_THAT(p.text.at("Description"), Contains("display gain t^2") && Contains("colour clipped at +-") &&
                                          Contains("offset along x (m) -1.5e+03..500") && Contains("time (s) 0..0.3"));
    // 41 x 76 samples replicated 10x to at least 400 pixels, inside a frame.
    CHECK(p.width > 410);
    CHECK(p.height > 760);
    if (have_font()) CHECK(dark(p, 0, 30) > 50);  // the title drawn above the plot
}

TEST_CASE("a 3D gather's preview shows the receiver line nearest the source and says so", "[previews]") {
    const auto dir = scratch("cli-preview-3d-gather");
    ShotGather g;
    g.id = 7, g.nt = 50, g.dt = 0.004;
    g.source = {260, 130, 10};  // nearest the line at y = 100 m
    for (int line = 0; line < 3; ++line)
        for (int i = 0; i < 5; ++i) g.receivers.push_back({100.0 + 50 * i, 100.0 * line, 10});
    g.data.assign(15 * 50, 0.f);
    for (int r = 0; r < 15; ++r) g.data[r * 50 + 20] = 1.f + r;
    const fs::path png = dir / "g.png";
    io::write_gather_png(png.string(), g, "a 3D gather");
    const Png p = read_png(png);
    // Receivers 100..300 m of that line, the source at 260 m: offsets -160..40.
    CHECK_THAT(p.text.at("Description"), Contains("the receiver line at y = 100 m, 5 of 15 traces") &&
                                          Contains("offset along x (m) -160..40"));
    // 5 columns (not 15) replicated to at least 400 pixels: 80 each.
    CHECK(p.width < 15 * 80);
    // The same spread on a grid whose x axis points 60 degrees east of north, in world
    // coordinates: the lines are the grid's, which no two receivers' world Y share.
    Frame f;
    f.ox = 500000, f.oy = 6000000;
    f.exx = std::sin(M_PI / 3), f.exy = std::cos(M_PI / 3), f.eyx = -std::cos(M_PI / 3), f.eyy = std::sin(M_PI / 3);
    ShotGather w = g;
    f.to_world(g.source.x, g.source.y, w.source.x, w.source.y);
    for (std::size_t r = 0; r < w.receivers.size(); ++r)
        f.to_world(g.receivers[r].x, g.receivers[r].y, w.receivers[r].x, w.receivers[r].y);
    const fs::path rotated = dir / "rotated.png";
    io::write_gather_png(rotated.string(), w, "a 3D gather on a rotated grid", f);
    CHECK_THAT(read_png(rotated).text.at("Description"), Contains("the receiver line at y = 100 m, 5 of 15 traces") &&
                                                             Contains("offset along x (m) -160..40"));
}

// A line of a million receivers made a PNG a million pixels wide, which libpng refuses:
// the preview shows one trace in k, and says so.
TEST_CASE("a gather preview of a very long line shows one trace in k and a preview that cannot be drawn is a warning", "[previews]") {
    const auto dir = scratch("cli-preview-long-line");
    ShotGather g;
    g.id = 1, g.nt = 20, g.dt = 0.004;
    g.source = {0, 0, 10};
    const int n = 10001;
    for (int i = 0; i < n; ++i) g.receivers.push_back({double(i), 0, 10});
    g.data.assign(std::size_t(n) * 20, 0.f);
    for (int r = 0; r < n; ++r) g.data[std::size_t(r) * 20 + 10] = 1.f;
    const fs::path png = dir / "long.png";
    io::write_gather_png(png.string(), g, "a long line");
    const Png p = read_png(png.string());
    CHECK_THAT(p.text.at("Description"), Contains("1 trace in 3 shown"));  // ceil(10001 / 4000)
    CHECK(p.width < 4000 + 400);  // 3334 columns and the axes

    // rtm model's preview on a device that is always full: a warning, and the gathers.
    const std::string model = (source_dir() / "velocity_models" / "layers2d_vp.segy").string();
    fs::create_symlink("/dev/full", dir / "full.png.tmp");
    const auto r = run_rtm("model --model.vp " + model + " --acquisition.source-x0 1000 --acquisition.receiver-x0 500"
                           " --acquisition.receiver-dx 50 --acquisition.receiver-nx 11 --acquisition.record-length 0.2"
                           " --acquisition.record-dt 0.004 --propagation.device cpu --output.shots " +
                           (dir / "s.sgy").string() + " --output.preview " + (dir / "full.png").string());
    INFO(r.output);
    CHECK(r.status == 0);
    CHECK_THAT(r.output, Contains("the preview was not drawn") && Contains("libpng failed while writing"));
    CHECK(io::read_shots((dir / "s.sgy").string()).size() == 1);
}

TEST_CASE("a partial migration's image says how many shots it holds, and keep-shot-images writes each shot's", "[previews]") {
    const auto dir = scratch("cli-preview-image");
    const auto model = (source_dir() / "velocity_models" / "layers2d_vp_smooth.segy").string();
    std::vector<ShotGather> shots(2);
    for (int k = 0; k < 2; ++k) {
        ShotGather& g = shots[k];
        g.id = k + 1, g.nt = 150, g.dt = 0.004;
        g.source = {1800.0 + 400 * k, 0, 10};
        for (int i = 0; i < 21; ++i) g.receivers.push_back({1500.0 + 50 * i, 0, 10});
        g.data.assign(21 * 150, 0.f);
        for (int i = 0; i < 21; ++i) g.data[i * 150 + 100] = 1.f;  // an event at 0.4 s
    }
    const std::string file = (dir / "shots.sgy").string();
    io::write_shots(file, shots);
    const auto r = run_rtm("migrate --model.vp " + model + " --data.shots " + file +
                           " --migration.aperture 500 --migration.max-shots 1 --migration.keep-shot-images true"
                           " --propagation.device cpu --output.job " + (dir / "job").string());
    INFO(r.output);
    REQUIRE(r.status == 0);
    const Png p = read_png(dir / "job" / "image.png");
    CHECK_THAT(p.text.at("Title"), Contains("image.sgy: partial, 1 of 2 shots, cross-correlation"));
    CHECK_THAT(p.text.at("Description"), Contains("stack / source illumination, -Laplacian") &&
                                          Contains("x (m) 0..4e+03") && Contains("depth (m) 0..1.5e+03"));
    const Png s = read_png(dir / "job" / "shots" / "shot-1-shots.png");
    CHECK_THAT(s.text.at("Title"), Contains("shot 1 from " + file + ", cross-correlation"));
    CHECK_FALSE(fs::exists(dir / "job" / "shots" / "shot-2-shots.png"));  // not migrated in this run
    // Two files of one name in other folders (or one stem, s.sgy and s.segy) hold the same
    // shot numbers: each shot's picture is its own (b's overwrote a's).
    fs::create_directories(dir / "a");
    fs::create_directories(dir / "b");
    fs::copy_file(file, dir / "a" / "s.sgy");
    io::write_shots((dir / "b" / "s.sgy").string(), {shots[1], shots[0]});
    const auto two = run_rtm("migrate --model.vp " + model + " --data.shots " + (dir / "a" / "s.sgy").string() + " " +
                             (dir / "b" / "s.sgy").string() + " --migration.aperture 500 --migration.keep-shot-images "
                             "true --propagation.device cpu --output.job " + (dir / "two").string());
    INFO(two.output);
    REQUIRE(two.status == 0);
    for (const char* f : {"shot-1-s-1.png", "shot-2-s-1.png", "shot-1-s-2.png", "shot-2-s-2.png"})
        CHECK(fs::exists(dir / "two" / "shots" / f));
    CHECK_THAT(read_png(dir / "two" / "shots" / "shot-1-s-2.png").text.at("Title"),
               Contains("shot 1 from " + (dir / "b" / "s.sgy").string()));
}
