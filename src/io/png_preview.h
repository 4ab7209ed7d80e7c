#pragma once
// PNG previews of gathers, sections and slices, so results can be looked at.
#include <string>
#include <vector>

namespace rtm::io {

// Writes a 2D array (width columns fastest, height rows) as a PNG image.
// Seismic style (symmetric = true): blue-white-red centred on zero, clipped at the
// `clip_percentile` of |values|.
// Field style (symmetric = false): a perceptual colour ramp from min to max (velocities).
// The image is scaled by pixel replication to at least min_size pixels on its
// shorter side when small (the longer side is kept within 16384 pixels, 2048 with labels). NaN and
// infinite values are drawn black. Row 0 is the top of the image (depth 0 of a
// section: pass values with x fastest, z slowest). Written to PATH.tmp and renamed.
struct PngStyle {
    bool symmetric = true;
    double clip_percentile = 99.0;
    int min_size = 400;
};

// What a preview shows around the data (labels != nullptr): the title above, axes with
// ticks in their units (the value at column or row 0 and per column or row), a colour
// bar with the clip (or the range) on the right, and a note below (e.g. the gain). They
// are also stored in the PNG's text chunks (Title, Description), which viewers list.
struct PngLabels {
    std::string title, note;
    std::string x_label, y_label;  // e.g. "offset (m)", "time (s)"
    double x0 = 0, dx = 1, y0 = 0, dy = 1;
};

void write_png(const std::string& path, const std::vector<float>& values, int width, int height,
               const PngStyle& style = {}, const PngLabels* labels = nullptr);

}  // namespace rtm::io
