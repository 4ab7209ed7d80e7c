#include "pipeline/shot_window.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/error.h"

namespace rtm {

namespace {

// A position's model-local (x, y) (y = 0 on a 2D line) and its distance off a 2D model's
// line, as the model's frame gives them.
struct Local {
    double x, y, off_line;
};
Local local_of(const Grid& g, const Position& p) {
    Local l{};
    g.frame.to_local(p.x, p.y, l.x, l.y);
    l.off_line = g.ndim() == 2 ? std::abs(l.y) : 0;
    if (g.ndim() == 2) l.y = 0;
    return l;
}

PointStencil stencil_of(const Domain& d, const ShotWindow& w, const Model& m, const Position& p,
                        const std::string& what) {
    require_in_model(m, p, what);
    const Local l = local_of(m.grid(), p);
    return d.point(l.x - w.ix0 * w.grid.dx, l.y - w.iy0 * w.grid.dy, p.z, what);
}

}  // namespace

bool in_model(const Model& m, const Position& p) {
    const Grid& g = m.grid();
    const Local l = local_of(g, p);
    // Checked against the model, in the survey's terms, before any window is involved.
    // (Written as "inside", so that a position that is not a number is outside.)
    const double t = kPositionTolerance;
    return l.off_line <= kOffLineTolerance && l.x >= -t && l.x <= g.x_max() + t &&
           (g.ndim() == 2 || (l.y >= -t && l.y <= g.y_max() + t)) && p.z >= g.z0 - t && p.z <= g.z_max() + t;
}

void require_in_model(const Model& m, const Position& p, const std::string& what, const std::string& or_else) {
    if (in_model(m, p)) return;
    const Grid& g = m.grid();
    const Local l = local_of(g, p);
    // A 2D model is a line: a position off it is projected onto it, which is right for
    // the metres of a crooked line's feathering and wrong for a survey somewhere else.
    if (l.off_line > kOffLineTolerance) {
        std::ostringstream os;
        os << "at world X " << p.x << " m, Y " << p.y << " m lies " << l.off_line << " m off the 2D model's line"
           << " (more than " << kOffLineTolerance << " m)";
        fail(what, os.str(),
             "Check the coordinates and their scalar (bytes 71, 73-88) against the model's trace coordinates, or "
             "migrate with a 3D model" + or_else);
    }
    std::ostringstream os;
    os << "at world X " << p.x << " m, Y " << p.y << " m, depth " << p.z << " m (x " << l.x << " m"
       << (g.ndim() == 3 ? ", y " + std::to_string(l.y) + " m" : std::string()) << " from the model's first trace)"
       << " lies outside the model, which spans x 0.." << g.x_max() << " m"
       << (g.ndim() == 3 ? ", y 0.." + std::to_string(g.y_max()) + " m" : std::string()) << ", depth " << g.z0
       << ".." << g.z_max() << " m";
    fail(what, os.str(),
         "Check the positions (a shot file's coordinates and their scalars, or the acquisition options) against the "
         "model's extent, or extend the model" + or_else);
}

ShotWindow window_extent(const Model& model, const ShotGather& shot, double aperture) {
    const Grid& g = model.grid();
    ShotWindow w;
    int x0 = 0, x1 = g.nx - 1, y0 = 0, y1 = g.ny - 1;
    if (aperture >= 0) {
        const Local s = local_of(g, shot.source);
        double xmin = s.x, ymin = s.y, xmax = s.x, ymax = s.y;
        for (const auto& r : shot.receivers) {
            const Local l = local_of(g, r);
            xmin = std::min(xmin, l.x);
            xmax = std::max(xmax, l.x);
            ymin = std::min(ymin, l.y);
            ymax = std::max(ymax, l.y);
        }
        // Clamped as doubles: an aperture beyond the model (1e30 m) is the whole model, not
        // an integer overflow.
        const auto node = [](double v, int lo, int hi) { return int(std::clamp(v, double(lo), double(hi))); };
        x0 = node(std::floor((xmin - aperture) / g.dx), 0, g.nx - 1);
        x1 = node(std::ceil((xmax + aperture) / g.dx), x0, g.nx - 1);
        if (g.ny > 1) {
            y0 = node(std::floor((ymin - aperture) / g.dy), 0, g.ny - 1);
            y1 = node(std::ceil((ymax + aperture) / g.dy), y0, g.ny - 1);
        }
    }
    w.ix0 = x0;
    w.iy0 = y0;
    w.grid = g;
    w.grid.nx = x1 - x0 + 1;
    w.grid.ny = y1 - y0 + 1;
    // The window's frame starts at its first node.
    g.frame.to_world(x0 * g.dx, y0 * g.dy, w.grid.frame.ox, w.grid.frame.oy);
    return w;
}

ShotWindow shot_window(const Model& model, const ShotGather& shot, double aperture) {
    const Grid& g = model.grid();
    ShotWindow w = window_extent(model, shot, aperture);
    const int x0 = w.ix0, y0 = w.iy0;
    // Row by row on every core: a 3D window is the whole model as often as not (48 M
    // nodes for 400 x 400 x 300), cut for every shot (0.25 s of one thread before each
    // 3D shot's steps, H200 host, 2026-11-23).
    auto cut = [&](const Volume& v) {
        std::vector<float> out(w.grid.size());
        const int nx = w.grid.nx;
#pragma omp parallel for collapse(2)
        for (int iz = 0; iz < g.nz; ++iz)
            for (int iy = 0; iy < w.grid.ny; ++iy)
                std::copy_n(v.data.data() + g.index(x0, iy + y0, iz), nx, out.data() + w.grid.index(0, iy, iz));
        return out;
    };
    w.vp = cut(model.vp);
    for (const auto& [name, v] : model.extra) w.extra[name] = cut(v);
    return w;
}

PointStencil source_stencil(const Domain& d, const ShotWindow& w, const Model& m, const ShotGather& shot) {
    return stencil_of(d, w, m, shot.source, "shot " + std::to_string(shot.id) + " source");
}

std::vector<PointStencil> receiver_stencils(const Domain& d, const ShotWindow& w, const Model& m,
                                            const ShotGather& shot) {
    std::vector<PointStencil> out;
    out.reserve(shot.receivers.size());
    for (std::size_t r = 0; r < shot.receivers.size(); ++r)
        out.push_back(stencil_of(d, w, m, shot.receivers[r],
                                 "shot " + std::to_string(shot.id) + " receiver " + std::to_string(r + 1)));
    return out;
}

}  // namespace rtm
