#pragma once
// Velocity models and images as SEG-Y: one trace per surface position, samples
// along depth. Reading places every trace on its (x, y) node from the headers;
// writing fills complete geometry headers so other tools read the result.
#include <string>

#include "core/grid.h"
#include "core/survey.h"

namespace rtm::io {

struct GridReadOptions {
    // Where each trace sits: by inline/crossline numbers, by CDP X/Y (or source X/Y)
    // coordinates with the coordinate scalar, or "auto" (line numbers when they vary
    // across traces, else coordinates).
    enum class Placement { Auto, LineNumbers, Coordinates };
    Placement placement = Placement::Auto;
    int inline_byte = 189;     // trace-header byte of the inline number
    int crossline_byte = 193;  // trace-header byte of the crossline number
    // Depth sampling. Depth models conventionally store dz in the sample-interval
    // field in millimetres: dz[m] = interval * depth_unit. dz > 0 overrides it.
    double depth_unit = 1e-3;
    double dz = 0;
    // Spacing along x and y when coordinates are missing (line-number placement
    // with no CDP X/Y); 0 means "required from the headers".
    double dx = 0, dy = 0;
};

// Reads a gridded volume (2D line or 3D cube). Errors name the file and field.
Volume read_volume(const std::string& path, const GridReadOptions& opt = {});

// Reads vp (m/s) and the optional anisotropy volumes, checking they share vp's
// grid. Empty paths are skipped. Checks that vp is finite and positive.
struct ModelPaths {
    std::string vp, epsilon, delta, theta, phi;
};
Model read_model(const ModelPaths& paths, const GridReadOptions& opt = {});

// Writes a volume as SEG-Y rev 1, IEEE float: inline/crossline numbers (1-based) at
// bytes 189/193, CDP X/Y and source/group X/Y with scalar -100 (cm), dz in mm in the
// sample-interval fields. The file is written to PATH.tmp and renamed, so a reader
// never sees half a file.
void write_volume(const std::string& path, const Volume& v);

}  // namespace rtm::io
