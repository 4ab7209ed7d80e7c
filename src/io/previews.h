#pragma once
// PNG previews of rtm's own data: shot gathers (traces across, time down) and
// volumes (a 2D section, or three orthogonal slices of a 3D cube).
#include <string>
#include <vector>

#include "core/grid.h"
#include "core/survey.h"
#include "io/png_preview.h"

namespace rtm::io {

// Traces across, time down, with a t^2 display gain.
void write_gather_png(const std::string& path, const ShotGather& shot);

// 2D: one PNG at `path`. 3D: three PNGs, PATH with "_inline", "_crossline" and
// "_depth" before the extension, through the middle of the cube (or through the
// given node when ix/iy/iz >= 0). Returns the files written.
std::vector<std::string> write_volume_png(const std::string& path, const Volume& v, const PngStyle& style,
                                          int ix = -1, int iy = -1, int iz = -1);

}  // namespace rtm::io
