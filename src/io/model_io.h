#pragma once
// Velocity models and images as SEG-Y: one trace per surface position, samples
// along depth. Reading places every trace on its (x, y) node from the headers;
// writing fills complete geometry headers so other tools read the result.
//
// Axes of a cube placed by line numbers: x runs along increasing CROSSLINE number
// (byte 193 by default: the traces of one inline, which vary fastest in
// inline-sorted files such as f3.sgy), y along increasing INLINE number (byte 189).
// ix = (crossline - first crossline) / crossline step, iy likewise for inlines.
// write_volume writes crossline = ix + 1 and inline = iy + 1, so a volume read back
// keeps its orientation.
//
// A 2D line (ny == 1) is recognised when all traces share one inline number (or none
// carry line numbers): x runs along increasing crossline number (or inline number,
// when only that varies), else along the line through the traces' coordinates in
// increasing CDP number (byte 21) or, when that is constant, from the file's first
// trace towards its last; with neither coordinates nor line numbers, by CDP number.
// For a 2D line dy = dx and the frame's y axis is x turned 90 degrees counter-clockwise.
//
// Coordinates: CDP X/Y (bytes 181/185) when any trace has them non-zero, else source
// X/Y (73/77), with the coordinate scalar (byte 71: negative divides, positive
// multiplies, 0 means 1). dx, dy and the frame (origin of node (0,0), unit axes in
// world X/Y) are a least-squares fit over all traces; a trace farther than
// 5% of the spacing (plus the coordinates' rounding) from its node is an error.
#include <optional>
#include <string>

#include "core/grid.h"
#include "core/survey.h"

namespace rtm::io {

struct GridReadOptions {
    // Where each trace sits: by inline/crossline numbers, by CDP X/Y (or source X/Y)
    // coordinates with the coordinate scalar, or "auto" (line numbers when they vary
    // across traces, else coordinates, else CDP numbers). Placement by coordinates
    // alone reads 2D lines only.
    enum class Placement { Auto, LineNumbers, Coordinates };
    Placement placement = Placement::Auto;
    int inline_byte = 189;     // trace-header byte of the inline number
    int crossline_byte = 193;  // trace-header byte of the crossline number
    // Depth sampling. Depth models conventionally store dz in the sample-interval
    // field in millimetres: dz[m] = interval * depth_unit. dz > 0 overrides it.
    // The interval is the first trace's byte 117, or binary byte 3217 when that is 0.
    // z0 = delay recording time (byte 109, "ms") * 1000 * depth_unit: metres for
    // depth models, in the same "thousand times the interval unit" convention.
    double depth_unit = 1e-3;
    double dz = 0;
    // Spacing along x and y when coordinates are missing (line-number placement
    // with no CDP X/Y); 0 means "required from the headers".
    double dx = 0, dy = 0;
};

// Reads a gridded volume (2D line or 3D cube). Errors name the file and field.
// Samples of any supported format (IBM float, int32, int16, IEEE float, int8) are
// returned as float, integers exactly up to 2^24. A sample that is not finite is an
// error naming the trace, its node and the sample.
Volume read_volume(const std::string& path, const GridReadOptions& opt = {});

// Reads vp (m/s) and the optional anisotropy volumes, checking they share vp's
// grid. Empty paths are skipped; a path that is a number ("0.1") is that constant on
// vp's grid. Checks that vp is finite and positive, epsilon and delta in (-0.5, 1],
// theta (degrees, tilt from vertical) in [-180, 180] and phi (degrees, azimuth from x
// towards y; 3D, with theta) in [-360, 360]; errors name the file (or option), the node
// and the value. The angles are returned in radians.
// A model parameter given as a number (the whole text, as std::stod reads it): its
// value; nullopt for anything else (a file's path).
std::optional<double> as_constant(const std::string& text);

// Refuses a volume of `what` (from `path`) whose grid h is not vp's g (from vp_path):
// node counts, spacings, first depth, origin and axes, naming both grids.
void require_vp_grid(const Grid& h, const std::string& path, const std::string& what, const Grid& g,
                     const std::string& vp_path);

struct ModelPaths {
    std::string vp, epsilon, delta, theta, phi;
};
Model read_model(const ModelPaths& paths, const GridReadOptions& opt = {});

// Writes a volume as SEG-Y rev 1, IEEE float: inline/crossline numbers (1-based) at
// bytes 189/193 (crossline = ix + 1, inline = iy + 1), CDP X/Y and source/group X/Y
// with scalar -100 (cm), dz in mm in the sample-interval fields (dz must be a whole
// number of mm up to 32767), z0 in whole metres in the delay field (byte 109).
// `description` goes into the textual header ("P velocity, m/s", "RTM image").
// The file is written to PATH.tmp and renamed, so a reader never sees half a file.
void write_volume(const std::string& path, const Volume& v, const std::string& description = "");
// The header fields write_volume would store grid g in: dz in whole millimetres (1 to
// 32767) and the first depth z0 in whole metres (-32768 to 32767). Throws, naming `path`
// and the field, for a grid SEG-Y cannot hold: a migration checks its image's grid so
// before its first shot, not after its last.
struct VolumeFields {
    long dz_mm, z0_m;
};
VolumeFields volume_fields(const Grid& g, const std::string& path);

}  // namespace rtm::io
