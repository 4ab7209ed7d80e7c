#include "io/png_preview.h"

#include <png.h>

#include <algorithm>
#include <cstdint>
#include <array>
#include <cerrno>
#include <cmath>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "core/error.h"
#include "io/text_drawing.h"

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

// Whether `s` is well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, at most
// U+10FFFF).
bool valid_utf8(const std::string& s) {
    for (std::size_t i = 0; i < s.size();) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        const int n = c < 0x80 ? 0 : (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2 : (c & 0xF8) == 0xF0 ? 3 : -1;
        if (n < 0 || s.size() - i <= std::size_t(n)) return false;  // (a lead byte, or one cut short)
        std::uint32_t cp = n == 0 ? c : n == 1 ? c & 0x1F : n == 2 ? c & 0x0F : c & 0x07;
        for (int k = 1; k <= n; ++k) {
            const unsigned char d = static_cast<unsigned char>(s[i + std::size_t(k)]);
            if ((d & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (d & 0x3F);
        }
        const std::uint32_t least[4] = {0, 0x80, 0x800, 0x10000};
        if (cp < least[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
        i += std::size_t(n) + 1;
    }
    return true;
}

// Writes rows of RGB with libpng; returns an error text, empty on success. libpng
// reports errors by longjmp, so nothing here owns resources that need destructors.
std::string write_rgb(std::FILE* fp, const unsigned char* rgb, int width, int height,
                      const std::vector<std::pair<std::string, std::string>>& text) {
    // libpng's own message for its failure (it printed it and we said "disk full?").
    std::string why = "an error it did not describe";
    png_structp png = png_create_write_struct(
        PNG_LIBPNG_VER_STRING, &why,
        [](png_structp p, png_const_charp msg) {
            *static_cast<std::string*>(png_get_error_ptr(p)) = msg;
            png_longjmp(p, 1);
        },
        [](png_structp, png_const_charp) {});  // (its warnings precede its errors: the error says it)
    if (!png) return "libpng could not start";
    png_infop info = png_create_info_struct(png);
    if (!info) {
        png_destroy_write_struct(&png, nullptr);
        return "libpng could not start";
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        return "libpng failed while writing: " + why;
    }
    png_init_io(png, fp);
    // Fast compression with one row filter: a preview is written at the end of every
    // job, which waits for it; a 2D image's preview took 0.107 s at libpng's defaults
    // and 0.045 s so, for a file of 285 kB instead of 144 kB (1601 x 401, 2026-11-23).
    png_set_compression_level(png, 1);
    png_set_filter(png, 0, PNG_FILTER_SUB);
    png_set_IHDR(png, info, png_uint_32(width), png_uint_32(height), 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    // tEXt holds Latin-1 only (PNG spec, 11.3.4.3), and labels are UTF-8 (file names,
    // "µs"), which a viewer reading tEXt shows as other letters: UTF-8 text beyond ASCII
    // goes in iTXt, whose text must be UTF-8 (uncompressed, no language). ASCII is the same
    // in both, and tEXt is what every reader lists; text that is not UTF-8 (a file name in
    // a legacy encoding) stays in tEXt, whose Latin-1 is the likeliest reading of it.
    static char none[] = "";
    std::vector<png_text> chunks(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        const std::string& t = text[i].second;
        const bool ascii = std::all_of(t.begin(), t.end(), [](unsigned char c) { return c < 0x80; });
        chunks[i].compression = ascii || !valid_utf8(t) ? PNG_TEXT_COMPRESSION_NONE : PNG_ITXT_COMPRESSION_NONE;
        chunks[i].key = const_cast<char*>(text[i].first.c_str());
        chunks[i].text = const_cast<char*>(t.c_str());
        chunks[i].lang = none;
        chunks[i].lang_key = none;
    }
    if (!chunks.empty()) png_set_text(png, info, chunks.data(), int(chunks.size()));
    png_write_info(png, info);
    for (int r = 0; r < height; ++r) png_write_row(png, rgb + std::size_t(r) * width * 3);
    png_write_end(png, nullptr);
    png_destroy_write_struct(&png, &info);
    return {};
}


std::string number(double v, int digits = 3) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    return buf;
}

// Ticks at 1, 2 or 5 x 10^k, about one per `every` pixels of an axis of `pixels`
// pixels running from a to b.
std::vector<double> ticks(double a, double b, int pixels, int every) {
    const double span = std::abs(b - a);
    if (!(span > 0)) return {a};
    const double raw = span / std::max(1, pixels / every);
    const double p10 = std::pow(10.0, std::floor(std::log10(raw)));
    const double step = raw <= p10 ? p10 : raw <= 2 * p10 ? 2 * p10 : raw <= 5 * p10 ? 5 * p10 : 10 * p10;
    std::vector<double> t;
    for (double v = std::ceil(std::min(a, b) / step) * step; v <= std::max(a, b) + 1e-9 * step; v += step)
        t.push_back(std::abs(v) < 1e-12 * step ? 0.0 : v);
    return t;
}

// The plot (W x H RGB) framed: title, axes, colour bar (`bar` maps t in [0, 1] bottom to
// top; its ends are labelled lo and hi), note.
std::vector<unsigned char> framed(const std::vector<unsigned char>& plot, int W, int H, int scale, const PngLabels& l,
                                  Rgb (*bar)(double), double lo, double hi, int& CW, int& CH) {
    static bool warned = false;
    const TextDrawing font(13);
    if (!font.ready() && !warned) {
        warned = true;
        std::fprintf(stderr, "rtm: no font for the previews' labels (install fonts-dejavu-core or set RTM_FONT); "
                             "they are in the PNG's text chunks only\n");
    }
    const int left = 70, right = 100, top = 42, bottom = 58;
    CW = std::max({left + W + right, left + font.width(l.title) + 10, left + font.width(l.note) + 10});
    CH = top + H + bottom;
    std::vector<unsigned char> rgb(std::size_t(CW) * CH * 3, 255);
    for (int r = 0; r < H; ++r) std::memcpy(&rgb[(std::size_t(r + top) * CW + left) * 3], &plot[std::size_t(r) * W * 3], std::size_t(W) * 3);
    auto dot = [&](int x, int y) {
        if (x >= 0 && y >= 0 && x < CW && y < CH) std::memset(&rgb[(std::size_t(y) * CW + x) * 3], 0, 3);
    };
    // Frame and ticks: columns carry x0 + dx * (pixel / scale), rows y0 + dy * (pixel / scale).
    for (int x = left - 1; x <= left + W; ++x) dot(x, top - 1), dot(x, top + H);
    for (int y = top - 1; y <= top + H; ++y) dot(left - 1, y), dot(left + W, y);
    const double xa = l.x0, xb = l.x0 + l.dx * (W / scale - 1), ya = l.y0, yb = l.y0 + l.dy * (H / scale - 1);
    for (double v : ticks(xa, xb, W, 90)) {
        const int x = left + int(std::lround((v - l.x0) / l.dx * scale + scale / 2.0));
        for (int k = 1; k <= 5; ++k) dot(x, top + H + k);
        const std::string t = number(v, 6);
        font.draw(rgb, CW, CH, x - font.width(t) / 2, top + H + 19, t);
    }
    for (double v : ticks(ya, yb, H, 60)) {
        const int y = top + int(std::lround((v - l.y0) / l.dy * scale + scale / 2.0));
        for (int k = 1; k <= 5; ++k) dot(left - 1 - k, y);
        const std::string t = number(v, 6);
        font.draw(rgb, CW, CH, left - 8 - font.width(t), y + 5, t);
    }
    font.draw(rgb, CW, CH, left + W / 2 - font.width(l.x_label) / 2, top + H + 36, l.x_label);
    font.draw(rgb, CW, CH, 4, top - 6, l.y_label);
    font.draw(rgb, CW, CH, left, 18, l.title);
    font.draw(rgb, CW, CH, left, top + H + 53, l.note);
    // Colour bar: 16 px wide, the plot's height (at most 300 px), labelled at its ends and middle.
    const int bx = left + W + 14, bh = std::min(H, 300);
    for (int r = 0; r < bh; ++r) {
        const Rgb c = bar(1.0 - double(r) / std::max(1, bh - 1));
        for (int k = 0; k < 16; ++k) std::memcpy(&rgb[(std::size_t(top + r) * CW + bx + k) * 3], c.data(), 3);
    }
    font.draw(rgb, CW, CH, bx + 20, top + 10, number(hi));
    font.draw(rgb, CW, CH, bx + 20, top + bh / 2 + 5, number((lo + hi) / 2));
    font.draw(rgb, CW, CH, bx + 20, top + bh, number(lo));
    return rgb;
}

Rgb seismic_bar(double t) { return seismic(2 * t - 1); }

}  // namespace

void write_png(const std::string& path, const std::vector<float>& values, int width, int height, const PngStyle& style,
               const PngLabels* labels) {
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
    // within 16384 pixels so a thin array does not make a huge image (2048 for a labelled
    // preview: a picture to look at, framed in a second canvas of its size).
    const int shorter = std::min(width, height), longer = std::max(width, height);
    int scale = std::max(1, (style.min_size + shorter - 1) / shorter);
    scale = std::max(1, std::min(scale, (labels ? 2048 : 16384) / longer));
    const int W = width * scale, H = height * scale;

    std::vector<unsigned char> rgb(std::size_t(W) * H * 3);
    // On every core, a row each: a gather's preview (401 x 2001 pixels) took 0.08 s on one,
    // at the end of every rtm model run (H200 host, 2026-11-25).
#pragma omp parallel for schedule(static)
    for (int r = 0; r < H; ++r)
        for (int c = 0; c < W; ++c) {
            const float v = values[std::size_t(r / scale) * width + c / scale];
            Rgb px = {0, 0, 0};
            if (std::isfinite(v)) px = style.symmetric ? seismic(v / clip) : ramp((v - lo) / (hi - lo));
            std::memcpy(&rgb[(std::size_t(r) * W + c) * 3], px.data(), 3);
        }

    // The labels around it, and in the file's text chunks.
    std::vector<std::pair<std::string, std::string>> text;
    int CW = W, CH = H;
    if (labels) {
        const double lo_bar = style.symmetric ? -clip : lo, hi_bar = style.symmetric ? clip : hi;
        PngLabels shown = *labels;
        shown.note += std::string(shown.note.empty() ? "" : "; ") +
                      (style.symmetric ? "colour clipped at +-" + number(clip) + " (the " + number(style.clip_percentile) +
                                             "th percentile of |values|)"
                                       : "colour from " + number(lo) + " to " + number(hi));
        rgb = framed(rgb, W, H, scale, shown, style.symmetric ? seismic_bar : ramp, lo_bar, hi_bar, CW, CH);
        text = {{"Title", labels->title},
                {"Description", shown.note + "; axes: " + labels->x_label + " " + number(labels->x0) + ".." +
                                    number(labels->x0 + labels->dx * (width - 1)) + ", " + labels->y_label + " " +
                                    number(labels->y0) + ".." + number(labels->y0 + labels->dy * (height - 1)) +
                                    "; colour bar " + number(style.symmetric ? -clip : lo) + " to " +
                                    number(style.symmetric ? clip : hi)}};
    }

    const std::string tmp = path + ".tmp";
    errno = 0;
    std::FILE* fp = std::fopen(tmp.c_str(), "wb");
    if (!fp) fail(path, "unable to create " + tmp + ": " + std::strerror(errno), "Check that the folder exists and is writable");
    std::string err = write_rgb(fp, rgb.data(), CW, CH, text);
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
