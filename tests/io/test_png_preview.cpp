// PNG previews: read back with libpng to check size and colours.
#include <png.h>

#include <array>
#include <cstdio>
#include <vector>

#include "io/png_preview.h"
#include "segy_test_files.h"
#include "support/test_data.h"

using namespace rtm;
using namespace rtm::test;

namespace {

struct Image {
    int width = 0, height = 0;
    std::vector<unsigned char> rgb;
    std::array<int, 3> at(int x, int y) const {
        const unsigned char* p = &rgb[(std::size_t(y) * width + x) * 3];
        return {p[0], p[1], p[2]};
    }
};

Image read_png(const std::string& path) {
    png_image img{};
    img.version = PNG_IMAGE_VERSION;
    REQUIRE(png_image_begin_read_from_file(&img, path.c_str()));
    img.format = PNG_FORMAT_RGB;
    Image out;
    out.width = int(img.width), out.height = int(img.height);
    out.rgb.resize(PNG_IMAGE_SIZE(img));
    REQUIRE(png_image_finish_read(&img, nullptr, out.rgb.data(), 0, nullptr));
    return out;
}

}  // namespace

TEST_CASE("a small seismic section is drawn blue-white-red and scaled up to the minimum size") {
    const std::string path = (scratch("png-seismic") / "section.png").string();
    // 10 x 5 values: column 0 negative, column 9 positive, the rest zero.
    std::vector<float> v(50, 0.f);
    for (int r = 0; r < 5; ++r) v[r * 10] = -1.f, v[r * 10 + 9] = 1.f;
    io::write_png(path, v, 10, 5);
    const Image img = read_png(path);
    CHECK(img.width == 800);  // 400 / 5 rows = 80x replication
    CHECK(img.height == 400);
    CHECK(img.at(0, 0) == std::array<int, 3>{0, 0, 255});
    CHECK(img.at(799, 399) == std::array<int, 3>{255, 0, 0});
    CHECK(img.at(400, 200) == std::array<int, 3>{255, 255, 255});
    CHECK_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST_CASE("a velocity preview runs a perceptual ramp from the minimum to the maximum") {
    const std::string path = (scratch("png-velocity") / "vp.png").string();
    std::vector<float> v = {1500, 2500, 3500, 4500};
    io::PngStyle style;
    style.symmetric = false;
    style.min_size = 4;
    io::write_png(path, v, 4, 1, style);
    const Image img = read_png(path);
    CHECK(img.width == 16);
    CHECK(img.height == 4);
    CHECK(img.at(0, 0) == std::array<int, 3>{68, 1, 84});      // dark purple: slowest
    CHECK(img.at(15, 3) == std::array<int, 3>{253, 231, 37});  // yellow: fastest
}

TEST_CASE("write_png refuses a width and height that do not match the values") {
    const std::string path = (scratch("png-bad-size") / "x.png").string();
    const std::string msg = error_of([&] { io::write_png(path, std::vector<float>(10), 4, 3); });
    INFO(msg);
    CHECK(contains(msg, path));
    CHECK(contains(msg, "4 x 3"));
    CHECK_FALSE(std::filesystem::exists(path));
}
