#include "io/png_preview.h"

#include <png.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "core/error.h"

namespace rtm::io {

namespace {

using Rgb = std::array<unsigned char, 3>;

// Perceptual ramp (viridis, five control points interpolated linearly): evenly
// increasing lightness, readable in grey and by colour-blind viewers.
Rgb ramp(double t) {
    static const double stops[5][3] = {{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
    t = std::clamp(t, 0.0, 1.0) * 4;
    const int i = std::min(int(t), 3);
    const double f = t - i;
    Rgb c;
    for (int k = 0; k < 3; ++k) c[k] = (unsigned char)std::lround(stops[i][k] + f * (stops[i + 1][k] - stops[i][k]));
    return c;
}

// Blue (negative) - white (zero) - red (positive); t in [-1, 1].
Rgb seismic(double t) {
    t = std::clamp(t, -1.0, 1.0);
    const auto fade = [](double a) { return (unsigned char)std::lround(255 * (1 - a)); };
    if (t < 0) return {fade(-t), fade(-t), 255};
    return {255, fade(t), fade(t)};
}

// Writes rows of RGB with libpng; returns an error text, empty on success. libpng
// reports errors by longjmp, so nothing here owns resources that need destructors.
std::string write_rgb(std::FILE* fp, const unsigned char* rgb, int width, int height) {
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
    if (!png) return "libpng could not start";
    png_infop info = png_create_info_struct(png);
    if (!info) {
        png_destroy_write_struct(&png, nullptr);
        return "libpng could not start";
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        return "libpng failed while writing (disk full?)";
    }
    png_init_io(png, fp);
    png_set_IHDR(png, info, png_uint_32(width), png_uint_32(height), 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (int r = 0; r < height; ++r) png_write_row(png, rgb + std::size_t(r) * width * 3);
    png_write_end(png, nullptr);
    png_destroy_write_struct(&png, &info);
    return {};
}

}  // namespace

void write_png(const std::string& path, const std::vector<float>& values, int width, int height, const PngStyle& style) {
    if (width < 1 || height < 1 || values.size() != std::size_t(width) * height)
        fail(path, "cannot draw " + std::to_string(values.size()) + " values as a " + std::to_string(width) + " x " +
                       std::to_string(height) + " image",
             "Give width x height values");

    // Colour scale from the finite values; NaN and infinities are drawn black.
    std::vector<float> finite;
    finite.reserve(values.size());
    for (float v : values)
        if (std::isfinite(v)) finite.push_back(v);
    double lo = 0, hi = 1, clip = 1;
    if (!finite.empty()) {
        if (style.symmetric) {
            for (auto& v : finite) v = std::abs(v);
            const double p = std::clamp(style.clip_percentile, 0.0, 100.0) / 100.0;
            const std::size_t k = std::min(finite.size() - 1, std::size_t(p * double(finite.size() - 1) + 0.5));
            std::nth_element(finite.begin(), finite.begin() + k, finite.end());
            clip = finite[k] > 0 ? finite[k] : 1;
        } else {
            const auto [a, b] = std::minmax_element(finite.begin(), finite.end());
            lo = *a, hi = *b > *a ? *b : *a + 1;
        }
    }

    // Pixel replication up to min_size on the shorter side, keeping the longer side
    // within 16384 pixels so a thin array does not make a huge image.
    const int shorter = std::min(width, height), longer = std::max(width, height);
    int scale = std::max(1, (style.min_size + shorter - 1) / shorter);
    scale = std::max(1, std::min(scale, 16384 / longer));
    const int W = width * scale, H = height * scale;

    std::vector<unsigned char> rgb(std::size_t(W) * H * 3);
    for (int r = 0; r < H; ++r)
        for (int c = 0; c < W; ++c) {
            const float v = values[std::size_t(r / scale) * width + c / scale];
            Rgb px = {0, 0, 0};
            if (std::isfinite(v)) px = style.symmetric ? seismic(v / clip) : ramp((v - lo) / (hi - lo));
            std::memcpy(&rgb[(std::size_t(r) * W + c) * 3], px.data(), 3);
        }

    const std::string tmp = path + ".tmp";
    errno = 0;
    std::FILE* fp = std::fopen(tmp.c_str(), "wb");
    if (!fp) fail(path, "unable to create " + tmp + ": " + std::strerror(errno), "Check that the folder exists and is writable");
    std::string err = write_rgb(fp, rgb.data(), W, H);
    if (std::fclose(fp) != 0 && err.empty()) err = std::string("unable to finish writing: ") + std::strerror(errno);
    std::error_code ec;
    if (err.empty()) {
        std::filesystem::rename(tmp, path, ec);
        if (ec) err = "unable to rename " + tmp + " to it: " + ec.message();
    }
    if (!err.empty()) {
        std::filesystem::remove(tmp, ec);
        fail(path, err, "Check free disk space and that the folder is writable");
    }
}

}  // namespace rtm::io
