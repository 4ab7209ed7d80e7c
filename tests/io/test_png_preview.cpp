// PNG previews: read back with libpng to check size and colours.
#include <array>
#include <string>
#include <vector>

#include "io/png_preview.h"
#include "segy_test_files.h"
#include "support/read_png.h"
#include "support/test_data.h"

using namespace rtm;
using namespace rtm::test;

TEST_CASE("a small seismic section is drawn blue-white-red and scaled up to the minimum size") {
    const std::string path = (scratch("png-seismic") / "section.png").string();
    // 10 x 5 values: column 0 negative, column 9 positive, the rest zero.
    std::vector<float> v(50, 0.f);
    for (int r = 0; r < 5; ++r) v[r * 10] = -1.f, v[r * 10 + 9] = 1.f;
    io::write_png(path, v, 10, 5);
    const Png img = read_png(path);
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
    const Png img = read_png(path);
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

TEST_CASE("a label beyond ASCII is stored as UTF-8 in an iTXt chunk and an ASCII one in tEXt") {
    const std::string path = (scratch("png-utf8") / "gather.png").string();
    io::PngLabels labels;
    // tEXt is Latin-1: these UTF-8 bytes (a file name, a unit) there read as "Ã©" and "Âµs".
    labels.title = "shot 3 of r\xC3\xA9plica.sgy, dip 5\xC2\xB0";
    labels.note = "gain t^2";
    labels.x_label = "offset (m)", labels.y_label = "time (s)";
    std::vector<float> v(50, 0.f);
    v[7] = 1.f;
    io::write_png(path, v, 10, 5, {}, &labels);
    const auto chunks = read_png(path).chunks;
    REQUIRE(chunks.size() == 2);
    CHECK(chunks[0].key == "Title");
    CHECK(chunks[0].compression == PNG_ITXT_COMPRESSION_NONE);
    CHECK(chunks[0].text == labels.title);  // the same bytes, not re-encoded
    CHECK(chunks[1].key == "Description");
    CHECK(chunks[1].compression == PNG_TEXT_COMPRESSION_NONE);
    CHECK_THAT(chunks[1].text, Catch::Matchers::StartsWith("gain t^2; colour clipped at +-"));
    // Text that is not UTF-8 (a Latin-1 file name; a truncated sequence; an overlong
    // form; a surrogate) would make an invalid iTXt chunk: it stays in tEXt, byte for byte.
    for (const std::string title : {std::string("caf\xE9.sgy"), std::string("r\xC3"), std::string("\xC0\xAF"),
                                    std::string("\xED\xA0\x80")}) {
        labels.title = title;
        io::write_png(path, v, 10, 5, {}, &labels);
        const auto latin = read_png(path).chunks;
        REQUIRE(!latin.empty());
        CHECK(latin[0].compression == PNG_TEXT_COMPRESSION_NONE);
        CHECK(latin[0].text == title);
    }
}
