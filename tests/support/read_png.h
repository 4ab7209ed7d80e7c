#pragma once
// A PNG as libpng reads it back (the tests' previews are 8-bit RGB): its pixels and its
// text chunks, each with libpng's kind (compression field: PNG_TEXT_COMPRESSION_NONE for
// tEXt, PNG_ITXT_COMPRESSION_NONE for iTXt), in file order.
#include <png.h>

#include <array>
#include <csetjmp>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "support/catch.hpp"

namespace rtm::test {

struct Png {
    struct Text {
        std::string key, text;
        int compression = 0;
    };
    int width = 0, height = 0;
    std::vector<unsigned char> rgb;
    std::vector<Text> chunks;
    std::map<std::string, std::string> text;  // the chunks' text by key
    std::array<int, 3> at(int x, int y) const {
        const unsigned char* p = &rgb[(std::size_t(y) * width + x) * 3];
        return {p[0], p[1], p[2]};
    }
};

inline Png read_png(const std::string& path) {
    Png out;
    std::FILE* fp = std::fopen(path.c_str(), "rb");
    REQUIRE(fp);
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
    png_infop info = png_create_info_struct(png);
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, nullptr);
        std::fclose(fp);
        FAIL("libpng could not read " << path);
    }
    png_init_io(png, fp);
    png_read_info(png, info);
    REQUIRE(png_get_color_type(png, info) == PNG_COLOR_TYPE_RGB);
    REQUIRE(png_get_bit_depth(png, info) == 8);
    out.width = int(png_get_image_width(png, info));
    out.height = int(png_get_image_height(png, info));
    out.rgb.resize(std::size_t(out.width) * out.height * 3);
    for (int r = 0; r < out.height; ++r) png_read_row(png, &out.rgb[std::size_t(r) * out.width * 3], nullptr);
    png_read_end(png, info);
    png_textp t = nullptr;
    const int n = png_get_text(png, info, &t, nullptr);
    for (int i = 0; i < n; ++i) {
        out.chunks.push_back({t[i].key, t[i].text, t[i].compression});
        out.text[t[i].key] = t[i].text;
    }
    png_destroy_read_struct(&png, &info, nullptr);
    std::fclose(fp);
    return out;
}

}  // namespace rtm::test
