#include "io/grid_placement.h"

#include <algorithm>
#include <tuple>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/error.h"

namespace rtm::io::detail {

namespace {

// Coordinates to the millimetre.
std::string num(double v) { return detail::num(std::round(v * 1000.0) / 1000.0); }

std::string at_xy(const TraceSpot& t) { return "(X " + num(t.X) + ", Y " + num(t.Y) + ")"; }

std::string trace_no(std::size_t i) { return "trace " + std::to_string(i + 1); }

const char* regular_fix =
    "rtm reads regular grids with one trace per node: regularise the geometry (or fix the headers) first";

// A regular axis of line numbers: first, step, count.
struct Axis {
    std::int64_t first = 0, step = 1, n = 1;
};

Axis key_axis(std::vector<std::int64_t> keys, const std::string& name, const std::string& path) {
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    Axis a;
    a.first = keys.front();
    if (keys.size() == 1) return a;
    a.step = keys[1] - keys[0];
    for (std::size_t i = 1; i < keys.size(); ++i) a.step = std::min(a.step, keys[i] - keys[i - 1]);
    for (std::size_t i = 1; i < keys.size(); ++i)
        if ((keys[i] - a.first) % a.step != 0)
            fail(path,
                 "the " + name + " values are not evenly spaced: " + std::to_string(keys[i - 1]) + " and " +
                     std::to_string(keys[i]) + " do not fit a step of " + std::to_string(a.step) + " from " +
                     std::to_string(a.first),
                 regular_fix);
    a.n = (keys.back() - a.first) / a.step + 1;
    return a;
}

double coordinate_tolerance(double spacing, double resolution) { return 0.05 * spacing + 2 * resolution; }

// Spacing from the options when the file has no coordinates.
double spacing_from_options(double value, const char* name, const std::string& path) {
    if (value > 0) return value;
    fail(path,
         "the file has no trace coordinates (CDP X/Y at bytes 181/185 and source X/Y at bytes 73/77 are all zero), so "
         "the trace spacing " + std::string(name) + " is unknown",
         "Give the spacing with option model." + std::string(name) + " (metres), or fill the coordinates in the file");
}

// Fills g.node from the per-trace keys (named x_name and y_name in messages; y_name
// empty for a line); duplicate and missing nodes are errors.
void fill_nodes(GridPlacement& g, const Axis& ax, const Axis& ay, const std::vector<std::int64_t>& xk,
                const std::vector<std::int64_t>& yk, const std::string& x_name, const std::string& y_name,
                const std::string& path) {
    const std::size_t n = xk.size();
    // Checked one axis at a time first: line numbers far apart must not overflow.
    const std::int64_t cap = 4 * std::int64_t(n) + 16;
    const std::int64_t nodes = (ax.n > cap || ay.n > cap) ? cap + 1 : ax.n * ay.n;
    auto key_text = [&](std::int64_t x, std::int64_t y) {
        std::string s = x_name + " " + std::to_string(x);
        if (!y_name.empty()) s = y_name + " " + std::to_string(y) + ", " + s;
        return s;
    };
    if (nodes > cap)
        fail(path,
             "the line numbers span " + std::to_string(ax.n) + " x " + std::to_string(ay.n) + " nodes (" + x_name +
                 (y_name.empty() ? std::string() : " and " + y_name) + ") but the file has only " + std::to_string(n) +
                 " traces: most nodes have no trace",
             regular_fix);
    std::vector<std::int64_t> owner(nodes, -1);
    g.node.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        const std::int64_t ix = (xk[i] - ax.first) / ax.step, iy = (yk[i] - ay.first) / ay.step;
        const std::size_t k = std::size_t(iy * ax.n + ix);
        if (owner[k] >= 0)
            fail(path,
                 trace_no(std::size_t(owner[k])) + " and " + trace_no(i) + " are both at " + key_text(xk[i], yk[i]) +
                     ": duplicate trace positions",
                 regular_fix);
        owner[k] = std::int64_t(i);
        g.node[i] = k;
    }
    for (std::int64_t k = 0; k < nodes; ++k)
        if (owner[k] < 0)
            fail(path,
                 "no trace at " + key_text(ax.first + (k % ax.n) * ax.step, ay.first + (k / ax.n) * ay.step) + " (" +
                     std::to_string(nodes - std::int64_t(n)) + " of " + std::to_string(nodes) +
                     " grid nodes have no trace): the grid is irregular",
                 regular_fix);
    g.grid.nx = int(ax.n);
    g.grid.ny = int(ay.n);
}

// Spacing and frame of a complete lattice from the trace coordinates: a least-squares
// fit of P = o + ix * a + iy * b. On a complete lattice ix and iy are uncorrelated, so
// each slope is a plain regression on its own index.
void fit_frame(GridPlacement& g, const TraceSpots& ts, const GridReadOptions& opt, const std::string& path) {
    const auto& s = ts.spots;
    const std::size_t n = s.size();
    const int nx = g.grid.nx, ny = g.grid.ny;
    double mx = 0, my = 0, mX = 0, mY = 0;
    for (std::size_t i = 0; i < n; ++i) {
        mx += double(g.node[i] % nx) / n;
        my += double(g.node[i] / nx) / n;
        mX += s[i].X / n;
        mY += s[i].Y / n;
    }
    double sxx = 0, syy = 0, aX = 0, aY = 0, bX = 0, bY = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const double ix = double(g.node[i] % nx) - mx, iy = double(g.node[i] / nx) - my;
        const double X = s[i].X - mX, Y = s[i].Y - mY;
        sxx += ix * ix, syy += iy * iy;
        aX += ix * X, aY += ix * Y, bX += iy * X, bY += iy * Y;
    }
    Frame& f = g.grid.frame;
    const std::string where_x = g.x_byte ? trace_field_name(g.x_byte) : std::string("the line");
    if (nx > 1) {
        aX /= sxx, aY /= sxx;
        g.grid.dx = std::hypot(aX, aY);
        if (g.grid.dx < ts.resolution)
            fail(path,
                 "the coordinates (bytes " + std::to_string(ts.x_byte) + "/" + std::to_string(ts.y_byte) +
                     ") do not change along " + where_x + ", so the spacing dx cannot be taken from them",
                 "Fix the coordinates in the file");
        f.exx = aX / g.grid.dx, f.exy = aY / g.grid.dx;
    } else {
        aX = aY = 0;
        g.grid.dx = opt.dx > 0 ? opt.dx : 1.0;
    }
    if (ny > 1) {
        bX /= syy, bY /= syy;
        g.grid.dy = std::hypot(bX, bY);
        if (g.grid.dy < ts.resolution)
            fail(path,
                 "the coordinates (bytes " + std::to_string(ts.x_byte) + "/" + std::to_string(ts.y_byte) +
                     ") do not change along " + trace_field_name(g.y_byte) + ", so the spacing dy cannot be taken from them",
                 "Fix the coordinates in the file");
        f.eyx = bX / g.grid.dy, f.eyy = bY / g.grid.dy;
        if (std::abs(f.exx * f.eyy - f.exy * f.eyx) < 0.1)
            fail(path, "the grid's x and y axes are (nearly) parallel in world coordinates", "Fix the coordinates in the file");
    } else {
        // A 2D line: y is the horizontal direction 90 degrees counter-clockwise from x.
        bX = bY = 0;
        g.grid.dy = g.grid.dx;
        f.eyx = -f.exy, f.eyy = f.exx;
    }
    f.ox = mX - mx * aX - my * bX;
    f.oy = mY - mx * aY - my * bY;

    // Every trace must sit where the regular grid puts it.
    // The worst trace is reported: a fit pulled by one displaced trace shifts its
    // neighbours a little too.
    const double tol = coordinate_tolerance(ny > 1 ? std::min(g.grid.dx, g.grid.dy) : g.grid.dx, ts.resolution);
    std::size_t worst = 0;
    double worst_r = -1;
    for (std::size_t i = 0; i < n; ++i) {
        const double ix = double(g.node[i] % nx), iy = double(g.node[i] / nx);
        const double r = std::hypot(s[i].X - (f.ox + ix * aX + iy * bX), s[i].Y - (f.oy + ix * aY + iy * bY));
        if (r > worst_r) worst = i, worst_r = r;
    }
    {
        const std::size_t i = worst;
        const double ix = double(g.node[i] % nx), iy = double(g.node[i] / nx), r = worst_r;
        if (r > tol)
            fail(path,
                 trace_no(i) + " (node ix " + num(ix) + ", iy " + num(iy) + ") is at " + at_xy(s[i]) + ", " + num(r) +
                     " m from where a regular grid through all traces puts it (spacing dx " + num(g.grid.dx) +
                     (ny > 1 ? ", dy " + num(g.grid.dy) : std::string()) + " m): inconsistent trace spacing in bytes " +
                     std::to_string(ts.x_byte) + "/" + std::to_string(ts.y_byte),
                 regular_fix);
    }
}

// Lattice indices of every trace from its coordinates alone, for a cube without line
// numbers. The x step a runs from the first trace to its nearest neighbour, the y step b
// to the nearest trace off that line; nearest within the coordinates' tolerance, ties
// to the trace first in the file (square bins: the file's order picks x, not rounding).
// Each trace's indices solve P - P0 = ix a + iy b, rounded. On a skewed lattice the
// nearest trace off the line can be a diagonal neighbour: b, b - a and b + a are tried,
// and the first whose indices fill their bounding box exactly is kept. Each axis runs the
// way the file's order runs (first trace to last).
// False for a line: fewer than half the traces off the first line (a cube of two or more
// rows has at least half; a crooked 2D line has a few, which place_along_line names).
// The indices are then checked as line numbers are (fill_nodes) and the spacing and
// frame fitted to every trace (fit_frame, which bounds how far any is off its node).
bool lattice_indices(const TraceSpots& ts, std::vector<std::int64_t>& xk, std::vector<std::int64_t>& yk) {
    const auto& s = ts.spots;
    const std::size_t n = s.size();
    auto rel = [&](std::size_t i) { return std::pair<double, double>(s[i].X - s[0].X, s[i].Y - s[0].Y); };
    auto dist = [&](std::size_t i) { return std::hypot(rel(i).first, rel(i).second); };
    // The first trace (in file order) among those nearest to trace 1 that pass `keep`.
    auto nearest = [&](auto keep) {
        double best = std::numeric_limits<double>::infinity();
        for (std::size_t i = 1; i < n; ++i)
            if (keep(i) && dist(i) > 2 * ts.resolution) best = std::min(best, dist(i));
        for (std::size_t i = 1; i < n; ++i)
            if (keep(i) && dist(i) > 2 * ts.resolution && dist(i) <= best + coordinate_tolerance(best, ts.resolution))
                return i;
        return std::size_t(0);
    };
    const std::size_t ia = nearest([](std::size_t) { return true; });
    if (ia == 0) return false;
    const auto [ax, ay] = rel(ia);
    const double la = std::hypot(ax, ay), tol = coordinate_tolerance(la, ts.resolution);
    auto off_line = [&](std::size_t i) { return std::abs(rel(i).first * ay - rel(i).second * ax) / la > tol; };
    std::size_t off = 0;
    for (std::size_t i = 1; i < n; ++i) off += off_line(i);
    if (2 * off < n) return false;
    const std::size_t ib = nearest(off_line);
    xk.resize(n), yk.resize(n);
    for (const int k : {0, -1, 1}) {
        const double bx = rel(ib).first + k * ax, by = rel(ib).second + k * ay, det = ax * by - ay * bx;
        for (std::size_t i = 0; i < n; ++i) {
            const auto [x, y] = rel(i);
            xk[i] = std::llround((x * by - y * bx) / det);
            yk[i] = std::llround((ax * y - ay * x) / det);
        }
        const auto [x0, x1] = std::minmax_element(xk.begin(), xk.end());
        const auto [y0, y1] = std::minmax_element(yk.begin(), yk.end());
        if ((*x1 - *x0 + 1) * (*y1 - *y0 + 1) == std::int64_t(n)) break;  // (else fill_nodes names the gap)
    }
    for (auto* k : {&xk, &yk})
        if (k->back() < k->front())
            for (auto& v : *k) v = -v;
    return true;
}

// A straight 2D line placed by coordinates alone, ordered by distance along it.
void place_along_line(GridPlacement& g, const TraceSpots& ts, bool cdp_varies, const std::string& path) {
    const auto& s = ts.spots;
    const std::size_t n = s.size();
    auto dist = [&](std::size_t i, std::size_t j) { return std::hypot(s[i].X - s[j].X, s[i].Y - s[j].Y); };
    std::size_t a = 0, b = 0;
    for (std::size_t i = 0; i < n; ++i) if (dist(0, i) > dist(0, a)) a = i;
    for (std::size_t i = 0; i < n; ++i) if (dist(a, i) > dist(a, b)) b = i;
    // Orientation: increasing CDP number when present, else file order.
    bool flip = cdp_varies ? s[a].cdp > s[b].cdp : false;
    double ux = (s[b].X - s[a].X) / dist(a, b), uy = (s[b].Y - s[a].Y) / dist(a, b);
    if (!cdp_varies) flip = (s[n - 1].X - s[0].X) * ux + (s[n - 1].Y - s[0].Y) * uy < 0;
    if (flip) ux = -ux, uy = -uy, std::swap(a, b);

    std::vector<double> t(n), d(n);
    for (std::size_t i = 0; i < n; ++i) {
        t[i] = (s[i].X - s[a].X) * ux + (s[i].Y - s[a].Y) * uy;
        d[i] = (s[i].Y - s[a].Y) * ux - (s[i].X - s[a].X) * uy;
    }
    std::vector<std::size_t> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t i, std::size_t j) { return t[i] < t[j]; });
    std::vector<double> gaps(n - 1);
    for (std::size_t k = 0; k + 1 < n; ++k) gaps[k] = t[order[k + 1]] - t[order[k]];
    std::vector<double> sorted = gaps;
    std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
    const double typical = sorted[sorted.size() / 2];
    const double tol = coordinate_tolerance(typical, ts.resolution);
    // Off the line first: a trace moved across a line also moves along it.
    for (std::size_t i = 0; i < n; ++i)
        if (std::abs(d[i]) > tol)
            fail(path,
                 trace_no(i) + " " + at_xy(s[i]) + " is " + num(std::abs(d[i])) +
                     " m off the straight line through the end traces " + at_xy(s[a]) + " and " + at_xy(s[b]),
                 "rtm reads straight 2D lines and regular cubes: fix the coordinates or give line numbers");
    for (std::size_t k = 0; k + 1 < n; ++k) {
        const std::size_t i = order[k], j = order[k + 1];
        if (gaps[k] <= tol)
            fail(path,
                 trace_no(i) + " and " + trace_no(j) + " are both at " + at_xy(s[j]) + " (bytes " +
                     std::to_string(ts.x_byte) + "/" + std::to_string(ts.y_byte) + "): duplicate trace positions",
                 regular_fix);
        if (std::abs(gaps[k] - typical) > tol)
            fail(path,
                 trace_no(i) + " " + at_xy(s[i]) + " and " + trace_no(j) + " " + at_xy(s[j]) + " are " + num(gaps[k]) +
                     " m apart along the line where neighbouring traces are " + num(typical) + " m apart: " +
                     (gaps[k] > 1.5 * typical ? "a position is missing between them" : "inconsistent trace spacing"),
                 regular_fix);
    }

    g.node.resize(n);
    for (std::size_t k = 0; k < n; ++k) g.node[order[k]] = k;
    g.grid.nx = int(n);
    g.grid.ny = 1;
    const double t0 = t[order.front()];
    g.grid.dx = (t[order.back()] - t0) / double(n - 1);
    g.grid.dy = g.grid.dx;
    Frame& f = g.grid.frame;
    f.ox = s[a].X + t0 * ux, f.oy = s[a].Y + t0 * uy;
    f.exx = ux, f.exy = uy, f.eyx = -uy, f.eyy = ux;
}

}  // namespace

TraceSpots read_spots(const std::vector<TraceHeader>& headers, const GridReadOptions& opt) {
    TraceSpots ts;
    bool any_cdp = false, any_src = false;
    for (const auto& h : headers) {
        any_cdp = any_cdp || h.get(SEGY_TR_CDP_X) != 0 || h.get(SEGY_TR_CDP_Y) != 0;
        any_src = any_src || h.get(SEGY_TR_SOURCE_X) != 0 || h.get(SEGY_TR_SOURCE_Y) != 0;
    }
    if (any_cdp) ts.x_byte = SEGY_TR_CDP_X, ts.y_byte = SEGY_TR_CDP_Y;
    else if (any_src) ts.x_byte = SEGY_TR_SOURCE_X, ts.y_byte = SEGY_TR_SOURCE_Y;
    ts.spots.reserve(headers.size());
    ts.resolution = 0;
    for (const auto& h : headers) {
        TraceSpot t;
        t.inline_no = h.get(opt.inline_byte);
        t.crossline_no = h.get(opt.crossline_byte);
        t.cdp = h.get(SEGY_TR_ENSEMBLE);
        if (ts.x_byte) {
            const std::int32_t scalar = h.get(SEGY_TR_SOURCE_GROUP_SCALAR);
            t.X = apply_scalar(h.get(ts.x_byte), scalar);
            t.Y = apply_scalar(h.get(ts.y_byte), scalar);
            ts.resolution = std::max(ts.resolution, apply_scalar(1, scalar));
        }
        ts.spots.push_back(t);
    }
    if (ts.resolution == 0) ts.resolution = 1;
    return ts;
}

GridPlacement place_traces(const TraceSpots& ts, const GridReadOptions& opt, const std::string& path) {
    const auto& s = ts.spots;
    const std::size_t n = s.size();
    auto varies = [&](auto key) {
        for (const auto& t : s)
            if (key(t) != key(s.front())) return true;
        return false;
    };
    const bool il_varies = varies([](const TraceSpot& t) { return t.inline_no; });
    const bool xl_varies = varies([](const TraceSpot& t) { return t.crossline_no; });
    const bool cdp_varies = varies([](const TraceSpot& t) { return t.cdp; });
    const bool xy_varies = ts.x_byte && (varies([](const TraceSpot& t) { return t.X; }) ||
                                         varies([](const TraceSpot& t) { return t.Y; }));
    const std::string coords = ts.x_byte == SEGY_TR_CDP_X ? "CDP X/Y (bytes 181/185)" : "source X/Y (bytes 73/77)";

    enum class How { Lines, Coordinates, Cdp, Single } how = How::Single;
    switch (opt.placement) {
        case GridReadOptions::Placement::Auto:
            if (il_varies || xl_varies) how = How::Lines;
            else if (xy_varies) how = How::Coordinates;
            else if (cdp_varies) how = How::Cdp;
            else if (n == 1) how = How::Single;
            else
                fail(path,
                     "all " + std::to_string(n) + " traces have the same inline/crossline numbers (bytes " +
                         std::to_string(opt.inline_byte) + "/" + std::to_string(opt.crossline_byte) +
                         "), coordinates (CDP X/Y 181/185, source X/Y 73/77) and CDP number (byte 21), so their "
                         "positions are unknown",
                     "Fill the inline/crossline numbers or the coordinates in the trace headers (or set "
                     "options model.inline-byte and model.crossline-byte to the fields that hold them)");
            break;
        case GridReadOptions::Placement::LineNumbers: how = How::Lines; break;
        case GridReadOptions::Placement::Coordinates:
            if (!xy_varies && n > 1)
                fail(path, "placement by coordinates was asked for, but CDP X/Y (bytes 181/185) and source X/Y (bytes 73/77) do not vary",
                     "Place the traces by inline/crossline numbers instead");
            how = n > 1 ? How::Coordinates : How::Single;
            break;
    }

    GridPlacement g;
    if (how == How::Single) {
        // One trace has no neighbour to take a spacing from, and the propagation needs one
        // (its time step and absorbing layers scale with it): the user gives it.
        if (!(opt.dx > 0))
            fail(path, "the file holds a single trace, so the trace spacing dx is unknown",
                 "Give the spacing with option model.dx (metres)");
        g.node = {0};
        g.grid.dx = opt.dx;
        g.grid.dy = opt.dy > 0 ? opt.dy : g.grid.dx;
        g.grid.frame.ox = s[0].X, g.grid.frame.oy = s[0].Y;
        g.method = "a single trace";
        return g;
    }
    std::vector<std::int64_t> xk(n), yk(n, 0);
    std::string x_name, y_name;  // what the keys are, for messages
    if (how == How::Coordinates) {
        if (!lattice_indices(ts, xk, yk)) {
            place_along_line(g, ts, cdp_varies, path);
            g.method = "distance along the line from " + coords;
            return g;
        }
        x_name = "lattice column (from " + coords + ")";
        y_name = "lattice row";
    } else if (how == How::Cdp) {
        g.x_byte = SEGY_TR_ENSEMBLE;
        for (std::size_t i = 0; i < n; ++i) xk[i] = s[i].cdp;
    } else if (il_varies && !xl_varies) {  // a 2D line along the inline numbers
        g.x_byte = opt.inline_byte;
        for (std::size_t i = 0; i < n; ++i) xk[i] = s[i].inline_no;
    } else {  // x along the crossline numbers; y along the inline numbers when they vary
        g.x_byte = opt.crossline_byte;
        for (std::size_t i = 0; i < n; ++i) xk[i] = s[i].crossline_no;
        if (il_varies) {
            g.y_byte = opt.inline_byte;
            for (std::size_t i = 0; i < n; ++i) yk[i] = s[i].inline_no;
        }
    }
    if (g.x_byte) x_name = trace_field_name(g.x_byte);
    if (g.y_byte) y_name = trace_field_name(g.y_byte);
    const Axis ax = key_axis(xk, x_name, path);
    const Axis ay = y_name.empty() ? Axis{} : key_axis(yk, y_name, path);
    if (g.x_byte) g.x_first = ax.first, g.x_step = ax.step;
    if (g.y_byte) g.y_first = ay.first, g.y_step = ay.step;
    fill_nodes(g, ax, ay, xk, yk, x_name, y_name, path);
    g.method = how == How::Coordinates ? "a lattice of " + coords
               : g.y_byte ? "inline/crossline numbers (bytes " + std::to_string(g.y_byte) + "/" + std::to_string(g.x_byte) + ")"
                          : trace_field_name(g.x_byte) + " values";
    if (xy_varies) {
        fit_frame(g, ts, opt, path);
        if (how != How::Coordinates) g.method += " with spacing from " + coords;
        // The coordinates give the spacing: another one given beside them was dropped
        // without a word.
        for (const auto& [given, taken, name, n] : {std::tuple{opt.dx, g.grid.dx, "dx", g.grid.nx},
                                                    std::tuple{opt.dy, g.grid.dy, "dy", g.grid.ny}})
            if (given > 0 && n > 1 && std::abs(given - taken) > 1e-3 * taken)
                fail("option model." + std::string(name),
                     detail::num(given) + " m differs from the spacing of " + path + "'s trace coordinates (" + detail::num(taken) +
                         " m), which place its traces",
                     "Leave model." + std::string(name) + " out: it is for files without trace coordinates");
    } else {
        g.grid.dx = g.grid.nx > 1 ? spacing_from_options(opt.dx, "dx", path) : (opt.dx > 0 ? opt.dx : 1.0);
        g.grid.dy = g.grid.ny > 1 ? spacing_from_options(opt.dy, "dy", path) : g.grid.dx;
        if (ts.x_byte) g.grid.frame.ox = s[0].X, g.grid.frame.oy = s[0].Y;
        g.method += " with spacing from the options";
    }
    return g;
}

}  // namespace rtm::io::detail
