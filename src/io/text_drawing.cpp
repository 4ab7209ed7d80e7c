#include "io/text_drawing.h"

#include <ft2build.h>
#include FT_FREETYPE_H

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>

namespace rtm::io {

namespace {

// RTM_FONT, else DejaVu Sans where Debian, Arch and Fedora put it.
std::string find_font() {
    if (const char* f = std::getenv("RTM_FONT"); f && *f) return f;
    for (const char* p : {"/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "/usr/share/fonts/TTF/DejaVuSans.ttf",
                          "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf", "/usr/share/fonts/dejavu/DejaVuSans.ttf"}) {
        std::error_code ec;
        if (std::filesystem::exists(p, ec)) return p;
    }
    return {};
}

}  // namespace

TextDrawing::TextDrawing(int pixels) : font_(find_font()) {
    FT_Library lib = nullptr;
    if (font_.empty() || FT_Init_FreeType(&lib)) return;
    library_ = lib;
    FT_Face face = nullptr;
    if (FT_New_Face(lib, font_.c_str(), 0, &face) || FT_Set_Pixel_Sizes(face, 0, FT_UInt(pixels))) {
        if (face) FT_Done_Face(face);
        return;
    }
    face_ = face;
}

TextDrawing::~TextDrawing() {
    if (face_) FT_Done_Face(static_cast<FT_Face>(face_));
    if (library_) FT_Done_FreeType(static_cast<FT_Library>(library_));
}

int TextDrawing::width(const std::string& text) const {
    if (!face_) return 0;
    const FT_Face face = static_cast<FT_Face>(face_);
    long w = 0;
    for (unsigned char c : text)
        if (!FT_Load_Char(face, c, FT_LOAD_DEFAULT)) w += face->glyph->advance.x >> 6;
    return int(w);
}

void TextDrawing::draw(std::vector<unsigned char>& rgb, int w, int h, int x, int y, const std::string& text) const {
    if (!face_) return;
    const FT_Face face = static_cast<FT_Face>(face_);
    for (unsigned char c : text) {
        if (FT_Load_Char(face, c, FT_LOAD_RENDER)) continue;
        const FT_GlyphSlot g = face->glyph;
        const FT_Bitmap& b = g->bitmap;
        for (unsigned r = 0; r < b.rows; ++r)
            for (unsigned k = 0; k < b.width; ++k) {
                const int px = x + g->bitmap_left + int(k), py = y - g->bitmap_top + int(r);
                if (px < 0 || py < 0 || px >= w || py >= h) continue;
                const double a = b.buffer[r * b.pitch + k] / 255.0;  // coverage: blend towards black
                unsigned char* p = &rgb[(std::size_t(py) * w + px) * 3];
                for (int ch = 0; ch < 3; ++ch) p[ch] = (unsigned char)std::lround(p[ch] * (1 - a));
            }
        x += int(g->advance.x >> 6);
    }
}

}  // namespace rtm::io
