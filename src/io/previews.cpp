#include "io/previews.h"

#include <cmath>
#include <cstdio>
#include <filesystem>

namespace rtm::io {

namespace {

// Receivers within this many metres in y are one line (SEG-Y coordinates in cm round).
constexpr double kSameLine = 0.5;
// The most traces a gather's preview shows (columns of pixels): beyond, every k-th.
constexpr std::size_t kMostPreviewTraces = 4000;

std::string metres(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

}  // namespace

void write_gather_png(const std::string& path, const ShotGather& shot, const std::string& title, const Frame& frame) {
    // A 3D spread shows the receiver line (equal y along the model's axes) nearest the
    // source: a gather of every receiver would be tens of thousands of pixels wide,
    // seconds to encode (4.5 s for 20 000 traces on the GPU machine), and unreadable.
    // Along the model's axes, not world X and Y: a spread on a rotated grid has no two
    // receivers of equal world Y (it showed one trace).
    std::vector<double> rx(shot.ntraces()), ry(shot.ntraces());
    for (std::size_t r = 0; r < shot.ntraces(); ++r) frame.to_local(shot.receivers[r].x, shot.receivers[r].y, rx[r], ry[r]);
    double sx, sy;
    frame.to_local(shot.source.x, shot.source.y, sx, sy);
    std::vector<std::size_t> line;
    double y_line = 0;
    if (!shot.receivers.empty()) {
        y_line = ry.front();
        for (double y : ry)
            if (std::abs(y - sy) < std::abs(y_line - sy)) y_line = y;
        for (std::size_t r = 0; r < shot.ntraces(); ++r)
            if (std::abs(ry[r] - y_line) <= kSameLine) line.push_back(r);
    }
    // At most kMostPreviewTraces columns: a line of a million receivers was a million
    // pixels wide, beyond what libpng writes (it failed after the gathers were written).
    const std::size_t on_line = line.size(), every = (on_line + kMostPreviewTraces - 1) / kMostPreviewTraces;
    if (every > 1) {
        std::vector<std::size_t> kept;
        for (std::size_t c = 0; c < on_line; c += every) kept.push_back(line[c]);
        line = std::move(kept);
    }
    // A t^2 gain (spherical divergence, for display only) so late reflections show
    // beside the direct wave.
    const int w = int(line.size()), h = shot.nt;
    std::vector<float> img(std::size_t(w) * h);
    for (int t = 0; t < h; ++t) {
        const float gain = float((t * shot.dt) * (t * shot.dt));
        for (int c = 0; c < w; ++c) img[std::size_t(t) * w + c] = shot.trace(line[c])[t] * gain;
    }
    PngLabels l;
    l.title = title;
    l.note = "display gain t^2 (t in s)";
    if (on_line < shot.ntraces())
        l.note += "; the receiver line at y = " + metres(y_line) + " m, " + std::to_string(on_line) + " of " +
                  std::to_string(shot.ntraces()) + " traces";
    if (every > 1) l.note += "; 1 trace in " + std::to_string(every) + " shown";
    l.x_label = "offset along x (m)";
    l.y_label = "time (s)";
    if (w > 0) {
        l.x0 = rx[line.front()] - sx;
        l.dx = w > 1 ? (rx[line.back()] - rx[line.front()]) / (w - 1) : 1;
    }
    if (l.dx == 0) l.dx = 1;  // a spread along Y: channels
    l.dy = shot.dt;
    write_png(path, img, w, h, PngStyle{}, &l);
}

std::vector<std::string> write_volume_png(const std::string& path, const Volume& v, const PngStyle& style,
                                          const std::string& title, const std::string& note, int ix, int iy, int iz) {
    const Grid& g = v.grid;
    PngLabels l;
    l.title = title;
    l.note = note;
    l.x_label = "x (m)";
    l.y_label = "depth (m)";
    l.dx = g.dx;
    l.y0 = g.z0;
    l.dy = g.dz;
    if (g.ny == 1) {
        write_png(path, v.data, g.nx, g.nz, style, &l);
        return {path};
    }
    if (ix < 0) ix = g.nx / 2;
    if (iy < 0) iy = g.ny / 2;
    if (iz < 0) iz = g.nz / 2;
    const std::filesystem::path p(path);
    auto named = [&](const std::string& tag) {
        return (p.parent_path() / (p.stem().string() + "_" + tag + p.extension().string())).string();
    };
    std::vector<std::string> out;
    std::vector<float> img;
    // Inline section (constant y): x across, depth down.
    img.resize(std::size_t(g.nx) * g.nz);
    for (int z = 0; z < g.nz; ++z)
        for (int x = 0; x < g.nx; ++x) img[std::size_t(z) * g.nx + x] = v.at(x, iy, z);
    out.push_back(named("inline"));
    l.title = title + ", inline at y " + metres(iy * g.dy) + " m";
    write_png(out.back(), img, g.nx, g.nz, style, &l);
    // Crossline section (constant x): y across, depth down.
    img.resize(std::size_t(g.ny) * g.nz);
    for (int z = 0; z < g.nz; ++z)
        for (int y = 0; y < g.ny; ++y) img[std::size_t(z) * g.ny + y] = v.at(ix, y, z);
    out.push_back(named("crossline"));
    l.title = title + ", crossline at x " + metres(ix * g.dx) + " m";
    l.x_label = "y (m)";
    l.dx = g.dy;
    write_png(out.back(), img, g.ny, g.nz, style, &l);
    // Depth slice: x across, y down.
    img.resize(std::size_t(g.nx) * g.ny);
    for (int y = 0; y < g.ny; ++y)
        for (int x = 0; x < g.nx; ++x) img[std::size_t(y) * g.nx + x] = v.at(x, y, iz);
    out.push_back(named("depth"));
    l.title = title + ", depth slice at " + metres(g.z0 + iz * g.dz) + " m";
    l.x_label = "x (m)";
    l.dx = g.dx;
    l.y_label = "y (m)";
    l.y0 = 0;
    l.dy = g.dy;
    write_png(out.back(), img, g.nx, g.ny, style, &l);
    return out;
}

}  // namespace rtm::io
