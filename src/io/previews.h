#pragma once
// PNG previews of rtm's own data: shot gathers (traces across, time down) and
// volumes (a 2D section, or three orthogonal slices of a 3D cube).
#include <string>
#include <vector>

#include "core/grid.h"
#include "core/survey.h"
#include "io/png_preview.h"

namespace rtm::io {

// Traces across (offset from the source along x, m), time down (s), with a t^2 display
// gain (stated below the picture); `title` above it. A 3D spread shows the receiver
// line (equal y) nearest the source, and says so below the picture. x and y are along
// the axes of `frame` (the model's grid; world X and Y by default).
void write_gather_png(const std::string& path, const ShotGather& shot, const std::string& title,
                      const Frame& frame = Frame{});

// 2D: one PNG at `path`. 3D: three PNGs, PATH with "_inline", "_crossline" and
// "_depth" before the extension, through the middle of the cube (or through the
// given node when ix/iy/iz >= 0). Axes in metres from the first node (depth from the
// surface); `title` above (each slice says where it is), `note` below. Returns the files written.
std::vector<std::string> write_volume_png(const std::string& path, const Volume& v, const PngStyle& style,
                                          const std::string& title, const std::string& note,
                                          int ix = -1, int iy = -1, int iz = -1);

}  // namespace rtm::io
