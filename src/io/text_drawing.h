#pragma once
// Text on RGB images through FreeType (for the labels of PNG previews), in DejaVu Sans
// (Debian's fonts-dejavu-core; RTM_FONT names another TrueType file).
#include <string>
#include <vector>

namespace rtm::io {

class TextDrawing {
public:
    // `pixels`: the font's height in pixels.
    explicit TextDrawing(int pixels);
    ~TextDrawing();
    TextDrawing(const TextDrawing&) = delete;
    TextDrawing& operator=(const TextDrawing&) = delete;

    // False when no font could be loaded (then draw() does nothing; the caller says so).
    bool ready() const { return face_ != nullptr; }
    const std::string& font() const { return font_; }
    // Width in pixels of `text`.
    int width(const std::string& text) const;
    // Draws `text` in black with its baseline at row `y`, starting at column `x`, onto
    // an RGB image of w x h pixels (clipped at its edges).
    void draw(std::vector<unsigned char>& rgb, int w, int h, int x, int y, const std::string& text) const;

private:
    void* library_ = nullptr;  // FT_Library
    void* face_ = nullptr;     // FT_Face
    std::string font_;
};

}  // namespace rtm::io
