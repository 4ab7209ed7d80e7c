#include "io/model_io.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <set>

#include "core/error.h"
#include "io/grid_placement.h"
#include "io/segy_file.h"
#include "physics/anisotropy.h"

namespace rtm::io {

namespace {

using detail::num;
using detail::upper;

void check_options(const GridReadOptions& opt) {
    // (GridReadOptions mirrors the model.* options of the command line; errors name those.)
    for (auto [byte, name] : {std::pair{opt.inline_byte, "inline-byte"}, std::pair{opt.crossline_byte, "crossline-byte"}})
        if (!detail::is_trace_field(byte))
            fail(std::string("option model.") + name,
                 std::to_string(byte) + " is not the first byte of a trace-header field",
                 "Use the byte where the field starts, e.g. 189 (inline), 193 (crossline), 9 (field record) or 21 (CDP)");
    if (!(opt.depth_unit > 0)) fail("option model.depth-unit", "must be positive, got " + num(opt.depth_unit), "Use 1e-3 for mm");
    // (Infinite spacings made a model of all-zero gathers.)
    if (!(opt.dz >= 0) || !std::isfinite(opt.dz))
        fail("option model.dz", "must be 0 (from the file) or a positive number of metres, got " + num(opt.dz));
    for (auto [h, name] : {std::pair{opt.dx, "dx"}, std::pair{opt.dy, "dy"}})
        if (!(h >= 0) || !std::isfinite(h))
            fail(std::string("option model.") + name,
                 "must be 0 (from the coordinates) or a positive number of metres, got " + num(h));
}

// Whole number of `unit`s in `value`, or a clear error.
long whole(double value, double unit, long lo, long hi, const std::string& path, const std::string& what,
           const std::string& field) {
    const double n = value / unit;
    const double r = std::round(n);
    const std::string act = unit == 1e-3 ? "Resample the model in depth" : "Shift the model's first depth";
    if (!(std::abs(n - r) <= 1e-6 * std::max(1.0, std::abs(n))))
        fail(path, what + " = " + num(value) + " m is not a whole number of " + (unit == 1e-3 ? "millimetres" : "metres") +
                       ", and SEG-Y stores it as an integer in " + field,
             act + " so that it is");
    if (r < lo || r > hi)
        fail(path, what + " = " + num(value) + " m does not fit " + field + " (" + std::to_string(lo) + ".." +
                       std::to_string(hi) + " " + (unit == 1e-3 ? "mm" : "m") + ")",
             act + " so that it fits");
    return long(r);
}

// The sample interval a volume's file states (0: none), which model.dz overrides.
int stated_interval(const std::string& path) {
    const detail::SegyReader file(path);
    return file.interval(file.header(0));
}

std::int64_t centimetres(double metres, const std::string& path, const char* what) {
    const double cm = std::round(metres * 100.0);
    if (!(std::abs(cm) < 2147483647.0))
        fail(path, std::string(what) + " = " + num(metres) + " m does not fit a 32-bit SEG-Y coordinate in centimetres",
             "Shift the grid's frame origin closer to 0");
    return std::int64_t(cm);
}

// The frame's numbers for the textual header, to 1 / per_unit (1000: the origin to the
// millimetre; 1e9: the axes' cosines to 1e-9): an origin or a cosine fitted to
// coordinates carries rounding (ORIGIN Y=7.96e-13, an axis -1.7e-17), which made the same
// model in another trace order write a different textual header. Divided (not
// multiplied by 1 / per_unit) so that decimals come out as the nearest double; + 0.0
// turns -0 into 0.
double snapped(double v, double per_unit) { return std::round(v * per_unit) / per_unit + 0.0; }

// Shot gathers rather than a model: sources (source X/Y) each shared by several traces,
// and most traces' receivers (group X/Y, given) away from their source. A model's
// placement would only call them irregular. (A model with source X/Y filled and group
// X/Y zero is no shot file.)
bool looks_like_shots(const std::vector<detail::TraceHeader>& headers) {
    std::set<std::pair<std::int32_t, std::int32_t>> sources;
    std::size_t moved = 0;
    for (const auto& h : headers) {
        const auto sx = h.get(SEGY_TR_SOURCE_X), sy = h.get(SEGY_TR_SOURCE_Y);
        if (sx != 0 || sy != 0) sources.insert({sx, sy});
        const auto gx = h.get(SEGY_TR_GROUP_X), gy = h.get(SEGY_TR_GROUP_Y);
        moved += (gx != 0 || gy != 0) && (gx != sx || gy != sy);
    }
    return !sources.empty() && 2 * sources.size() <= headers.size() && 2 * moved > headers.size();
}

}  // namespace

Volume read_volume(const std::string& path, const GridReadOptions& opt) {
    check_options(opt);
    const detail::SegyReader file(path, true);  // (mapped: a volume is read at once)
    detail::require_metres(file);
    const auto headers = file.headers();
    const detail::GridPlacement place = [&] {
        try {
            return detail::place_traces(detail::read_spots(headers, opt), opt, path);
        } catch (const Error& e) {
            if (!looks_like_shots(headers)) throw;
            fail(path,
                 "its traces look like shot gathers (receivers, group X/Y at bytes 81/85, away from their sources, "
                 "source X/Y at bytes 73/77), not a model with one trace per grid node (placed as a grid: " +
                     std::string(e.what()) + ")",
                 "Give shot records with data.shots and the velocity model with model.vp");
        }
    }();

    Grid grid = place.grid;
    grid.nz = file.samples();
    int interval_byte = 0;
    const int interval = file.interval(headers.front(), &interval_byte);
    const int first = headers.front().get(SEGY_TR_SAMPLE_INTER);
    for (std::size_t i = 1; i < headers.size(); ++i) {
        const int v = headers[i].get(SEGY_TR_SAMPLE_INTER);
        if (v != 0 && v != first)
            fail(path, "trace " + std::to_string(i + 1) + " has " + detail::trace_field_name(SEGY_TR_SAMPLE_INTER) + " " +
                           std::to_string(v) + " where trace 1 has " + std::to_string(first),
                 "All traces of a volume must share one sample interval");
    }
    if (opt.dz > 0) {
        grid.dz = opt.dz;
    } else if (interval <= 0) {
        fail(path, "the sample interval is zero or negative: " + detail::trace_field_name(SEGY_TR_SAMPLE_INTER) + " = " +
                       std::to_string(first) + " in trace 1 and " + detail::binary_field_name(SEGY_BIN_INTERVAL) + " = " +
                       std::to_string(file.binary().get(SEGY_BIN_INTERVAL)) +
                       " (values over 32767 do not fit the signed 16-bit field)",
             "Set the sample interval in the file (dz in mm for depth models), or give the depth step with option "
             "model.dz (metres)");
    } else {
        grid.dz = interval * opt.depth_unit;
    }
    grid.z0 = headers.front().get(SEGY_TR_DELAY_REC_TIME) * 1000.0 * opt.depth_unit;

    Volume v(grid);
    // A block of traces read in turn, then put in place depth by depth on every core: a
    // trace is a column of the volume, a sample per plane (written a trace at a time,
    // a cache miss a sample).
    const int nz = grid.nz, block = std::max(1, (1 << 20) / nz);
    std::vector<float> traces(std::size_t(block) * nz);
    const std::size_t plane = std::size_t(grid.nx) * grid.ny;
    for (int i0 = 0; i0 < file.traces(); i0 += block) {
        const int count = std::min(block, file.traces() - i0);
        for (int k = 0; k < count; ++k) {
            const int i = i0 + k;
            float* trace = traces.data() + std::size_t(k) * nz;
            file.read(i, trace);
            // A NaN or infinity would spread through every wavefield it touches.
            const float* bad = std::find_if(trace, trace + nz, [](float x) { return !std::isfinite(x); });
            if (bad != trace + nz) {
                const long iz = long(bad - trace);
                fail(path, "trace " + std::to_string(i + 1) + " (node ix " + std::to_string(place.node[i] % grid.nx) +
                               ", iy " + std::to_string(place.node[i] / grid.nx) + ") sample " + std::to_string(iz + 1) +
                               " (depth " + num(grid.z0 + iz * grid.dz) + " m) is " + num(*bad),
                     "Every sample of a model volume must be finite: fix the file where it was made");
            }
        }
#pragma omp parallel for schedule(static)
        for (int iz = 0; iz < nz; ++iz) {
            float* out = v.data.data() + std::size_t(iz) * plane;
            for (int k = 0; k < count; ++k) out[place.node[std::size_t(i0 + k)]] = traces[std::size_t(k) * nz + iz];
        }
    }
    return v;
}

Model read_model(const ModelPaths& paths, const GridReadOptions& opt) {
    if (paths.vp.empty()) fail("model", "no vp file given", "Give the P-velocity model (SEG-Y, m/s)");
    Model m;
    m.vp = read_volume(paths.vp, opt);
    const Grid& g = m.vp.grid;
    std::size_t bad = 0, first_bad = 0;
    for (std::size_t k = 0; k < m.vp.data.size(); ++k) {
        const float v = m.vp.data[k];
        if (!(std::isfinite(v) && v > 0) && bad++ == 0) first_bad = k;
    }
    if (bad) {
        const std::size_t ix = first_bad % g.nx, iy = (first_bad / g.nx) % g.ny, iz = first_bad / (std::size_t(g.nx) * g.ny);
        fail(paths.vp, "vp at node (ix " + std::to_string(ix) + ", iy " + std::to_string(iy) + ", iz " + std::to_string(iz) +
                           ") is " + num(m.vp.data[first_bad]) + " (" + std::to_string(bad) + " of " +
                           std::to_string(m.vp.data.size()) + " samples are not finite and > 0)",
             "Velocities must be finite and positive m/s: fix the model (e.g. give water or air a real velocity)");
    }

    const std::pair<const char*, const std::string*> extras[] = {
        {"epsilon", &paths.epsilon}, {"delta", &paths.delta}, {"theta", &paths.theta}, {"phi", &paths.phi}};
    if (!paths.phi.empty() && paths.theta.empty())
        fail("option model.phi", "an azimuth without a tilt (model.theta)", "Give model.theta too, or leave out model.phi");
    if (!paths.phi.empty() && g.ndim() == 2)
        fail("option model.phi", "a 2D model has no azimuth: its symmetry axis tilts in the x-z plane",
             "Leave out model.phi (model.theta alone tilts towards +x)");
    const int vp_interval = opt.dz > 0 ? stated_interval(paths.vp) : 0;
    for (const auto& [name, path] : extras) {
        if (path->empty()) continue;
        Volume v;
        // A number is a constant on vp's grid, else a file.
        const std::optional<double> constant = as_constant(*path);
        const std::string where = constant ? "option model." + std::string(name) : *path;
        if (constant) {
            v = Volume(g, float(*constant));
        } else {
            v = read_volume(*path, opt);
            require_vp_grid(v.grid, *path, name, g, paths.vp);
            // model.dz replaces every volume's depth step: a file that states one must
            // state vp's, or model.dz itself where vp's states none, or it would be
            // stretched onto vp's depths. (One that states none takes model.dz.)
            if (opt.dz > 0) {
                const int own = stated_interval(*path);
                const bool other = own > 0 && (vp_interval > 0 ? own != vp_interval
                                                               : std::abs(own * opt.depth_unit - opt.dz) > 1e-6 * opt.dz);
                if (other)
                    fail(*path,
                         "its sample interval field says " + std::to_string(own) + " where " +
                             (vp_interval > 0 ? "vp's in " + paths.vp + " says " + std::to_string(vp_interval)
                                              : "vp's in " + paths.vp + " says none and option model.dz gives " +
                                                    num(opt.dz) + " m") +
                             " (" + detail::binary_field_name(SEGY_BIN_INTERVAL) + " or trace byte 117): option model.dz (" +
                             num(opt.dz) + " m) replaces both, and would stretch " + name + " onto vp's depths",
                         "Give " + std::string(name) + " on vp's depth step, as its file says, or leave out model.dz");
            }
        }
        // Thomsen's epsilon and delta: 1 + 2 eps and 1 + 2 delta are squared velocity
        // ratios (> 0); angles in degrees (tilt from vertical, azimuth from x to y).
        const bool angle = name == std::string("theta") || name == std::string("phi");
        const double lo = angle ? -(name == std::string("theta") ? kThetaMaxDegrees : kPhiMaxDegrees) : kAnisotropyMin;
        const double hi = angle ? -lo : kAnisotropyMax;
        for (std::size_t k = 0; k < v.data.size(); ++k) {
            const double x = v.data[k];
            const bool ok = std::isfinite(x) && (angle ? x >= lo : x > lo) && x <= hi;
            if (!ok)
                fail(where, std::string(name) + " at node (ix " + std::to_string(k % g.nx) + ", iy " +
                                std::to_string((k / g.nx) % g.ny) + ", iz " + std::to_string(k / (std::size_t(g.nx) * g.ny)) +
                                ") is " + num(x) + ", outside " + (angle ? "[" : "(") + num(lo) + ", " + num(hi) + "]" +
                                (angle ? " degrees" : ""),
                     angle ? "Give the angle in degrees (tilt from vertical, azimuth from x towards y)"
                           : "Give Thomsen's parameter as a fraction (0.1, not 10%), above -0.5");
        }
        if (angle)
            for (auto& x : v.data) x = float(x * M_PI / 180);
        m.extra[name] = std::move(v);
    }
    return m;
}

std::optional<double> as_constant(const std::string& text) {
    // strtod, not stod: a number beyond double's range (1e400, 1e-400) is still a number
    // (inf, or 0), which the range checks then name, not "neither a number nor a file".
    const char* begin = text.c_str();
    char* end = nullptr;
    const double value = std::strtod(begin, &end);
    if (end == begin || std::size_t(end - begin) != text.size()) return std::nullopt;
    return value;
}

void require_vp_grid(const Grid& h, const std::string& path, const std::string& what, const Grid& g,
                     const std::string& vp_path) {
    auto near = [](double a, double b, double tol) { return std::abs(a - b) <= tol; };
    const bool same = h.nx == g.nx && h.ny == g.ny && h.nz == g.nz && near(h.dx, g.dx, 1e-3) &&
                      near(h.dy, g.dy, 1e-3) && near(h.dz, g.dz, 1e-3) && near(h.z0, g.z0, 1e-3) &&
                      near(h.frame.ox, g.frame.ox, 0.01) && near(h.frame.oy, g.frame.oy, 0.01) &&
                      near(h.frame.exx, g.frame.exx, 1e-4) && near(h.frame.exy, g.frame.exy, 1e-4) &&
                      near(h.frame.eyx, g.frame.eyx, 1e-4) && near(h.frame.eyy, g.frame.eyy, 1e-4);
    // The axes' directions too where they differ (a volume whose traces run along y first,
    // without line numbers, is placed with x and y swapped: otherwise the same grid).
    const bool axes = !(near(h.frame.exx, g.frame.exx, 1e-4) && near(h.frame.exy, g.frame.exy, 1e-4) &&
                        near(h.frame.eyx, g.frame.eyx, 1e-4) && near(h.frame.eyy, g.frame.eyy, 1e-4));
    const auto c = [](double v) { return num(std::abs(v) < 1e-6 ? 0.0 : v); };  // (rounding's 1e-17s as 0)
    const auto text = [&](const Grid& x) {
        return std::to_string(x.nx) + " x " + std::to_string(x.ny) + " x " + std::to_string(x.nz) + ", dx " + num(x.dx) +
               ", dy " + num(x.dy) + ", dz " + num(x.dz) + " m, origin " + c(x.frame.ox) + ", " + c(x.frame.oy) +
               ", first depth " + num(x.z0) + " m" +
               (axes ? ", x axis towards (" + c(x.frame.exx) + ", " + c(x.frame.exy) + "), y axis towards (" +
                           c(x.frame.eyx) + ", " + c(x.frame.eyy) + ")"
                     : std::string());
    };
    // A file without trace coordinates is placed at origin 0, 0 (model.dx gives its spacing).
    const bool unplaced = h.frame.ox == 0 && h.frame.oy == 0 && !(g.frame.ox == 0 && g.frame.oy == 0);
    if (!same)
        fail(path, what + "'s grid (" + text(h) + ") differs from vp's in " + vp_path + " (" + text(g) + ")",
             axes ? "Write all model volumes on vp's grid with their traces in one order (x fastest, as vp's), or "
                    "give their line numbers (options model.inline-byte and model.crossline-byte)"
             : unplaced ? "Write all model volumes on vp's grid, with vp's trace coordinates (CDP X/Y, bytes 181/185): "
                          "without them a volume lies at origin 0, 0"
                        : "Write all model volumes on vp's grid");
}

VolumeFields volume_fields(const Grid& g, const std::string& path) {
    if (g.nx < 1 || g.ny < 1 || g.nz < 1)
        fail(path, "cannot write a volume of " + std::to_string(g.nx) + " x " + std::to_string(g.ny) + " x " +
                       std::to_string(g.nz) + " nodes", "Give at least one node along each axis");
    if (!(g.dx > 0) || (g.ny > 1 && !(g.dy > 0)))
        fail(path, "grid spacing dx " + num(g.dx) + ", dy " + num(g.dy) + " m must be positive");
    if (g.nz > 65535)
        fail(path, "nz = " + std::to_string(g.nz) + " depth samples do not fit SEG-Y's 16-bit sample count",
             "Resample the model coarser in depth");
    return {whole(g.dz, 1e-3, 1, 32767, path, "dz", detail::binary_field_name(SEGY_BIN_INTERVAL) + " (in mm)"),
            whole(g.z0, 1.0, -32768, 32767, path, "the first depth z0",
                  detail::trace_field_name(SEGY_TR_DELAY_REC_TIME) + " (in m)")};
}

void write_volume(const std::string& path, const Volume& v, const std::string& description) {
    const Grid& g = v.grid;
    if (v.data.size() != g.size())
        fail(path, "the volume holds " + std::to_string(v.data.size()) + " values for a grid of " + std::to_string(g.size()),
             "Internal error: resize the data to the grid");
    const auto [dz_mm, delay] = volume_fields(g, path);

    const auto& f = g.frame;
    const std::vector<std::string> text = {
        "C 1 RTM " + upper(description.empty() ? "VOLUME" : description),
        "C 2 SEG-Y REV 1, IEEE FLOAT (FORMAT 5), BIG-ENDIAN, WRITTEN BY RTM",
        "C 3 GRID NX=" + std::to_string(g.nx) + " NY=" + std::to_string(g.ny) + " NZ=" + std::to_string(g.nz) +
            " DX=" + num(g.dx) + " DY=" + num(g.dy) + " DZ=" + num(g.dz) + " M",
        "C 4 ONE TRACE PER (X,Y) NODE, X FASTEST; SAMPLES ALONG DEPTH",
        "C 5 SAMPLE INTERVAL (117, 3217) = DZ IN MM; DELAY (109) = Z0 IN M",
        "C 6 CROSSLINE (193) = IX+1, INLINE (189) = IY+1",
        "C 7 CDP X/Y (181/185) = SOURCE X/Y = GROUP X/Y: NODE X/Y IN CM, SCALAR -100",
        "C 8 ORIGIN X=" + num(snapped(f.ox, 1e3)) + " Y=" + num(snapped(f.oy, 1e3)),
        "C 9 X AXIS (" + num(snapped(f.exx, 1e9)) + ", " + num(snapped(f.exy, 1e9)) + ") Y AXIS (" +
            num(snapped(f.eyx, 1e9)) + ", " + num(snapped(f.eyy, 1e9)) + ")",
        "C40 END TEXTUAL HEADER",
    };
    std::vector<std::string> card(40);
    for (const auto& line : text) card[std::stoi(line.substr(1, 2)) - 1] = line;
    for (int i = 0; i < 40; ++i)
        if (card[i].empty()) card[i] = (i < 9 ? "C " : "C") + std::to_string(i + 1);

    detail::BinaryHeader bin;
    bin.set(SEGY_BIN_TRACES, std::min(g.nx, 32767), path);
    bin.set(SEGY_BIN_INTERVAL, dz_mm, path);
    bin.set(SEGY_BIN_INTERVAL_ORIG, dz_mm, path);
    bin.set(SEGY_BIN_SAMPLES, g.nz, path);
    bin.set(SEGY_BIN_SAMPLES_ORIG, g.nz, path);
    bin.set(SEGY_BIN_SORTING_CODE, 4, path);  // horizontally stacked: one trace per position
    bin.set(SEGY_BIN_MEASUREMENT_SYSTEM, 1, path);  // metres
    bin.set(SEGY_BIN_SEGY_REVISION, 0x0100, path);
    bin.set(SEGY_BIN_TRACE_FLAG, 1, path);  // fixed-length traces
    detail::SegyWriter out(path, card, bin, g.nx * g.ny);

    detail::TraceHeader h;
    h.set(SEGY_TR_TRACE_ID, 1, path);
    h.set(SEGY_TR_SOURCE_GROUP_SCALAR, -100, path);
    h.set(SEGY_TR_COORD_UNITS, 1, path);  // length (metres)
    h.set(SEGY_TR_SAMPLE_COUNT, g.nz, path);
    h.set(SEGY_TR_SAMPLE_INTER, dz_mm, path);
    h.set(SEGY_TR_DELAY_REC_TIME, delay, path);
    // One inline's traces gathered at once, plane by plane: the volume is read along x
    // (contiguous) rather than a trace at a time down a column (a cache miss a sample:
    // 1.5 s of a 400 x 400 x 300 image on an H200 host).
    std::vector<float> traces(std::size_t(g.nx) * g.nz);
    const std::size_t plane = std::size_t(g.nx) * g.ny;
    for (int iy = 0; iy < g.ny; ++iy) {
        for (int iz = 0; iz < g.nz; ++iz) {
            const float* row = v.data.data() + iz * plane + std::size_t(iy) * g.nx;
            for (int ix = 0; ix < g.nx; ++ix) traces[std::size_t(ix) * g.nz + iz] = row[ix];
        }
        for (int ix = 0; ix < g.nx; ++ix) {
            const int k = iy * g.nx + ix;
            double X, Y;
            f.to_world(ix * g.dx, iy * g.dy, X, Y);
            const std::int64_t cx = centimetres(X, path, "node X"), cy = centimetres(Y, path, "node Y");
            h.set(SEGY_TR_SEQ_LINE, k + 1, path);
            h.set(SEGY_TR_SEQ_FILE, k + 1, path);
            h.set(SEGY_TR_ENSEMBLE, k + 1, path);
            h.set(SEGY_TR_INLINE, iy + 1, path);
            h.set(SEGY_TR_CROSSLINE, ix + 1, path);
            for (auto [xb, yb] : {std::pair{SEGY_TR_CDP_X, SEGY_TR_CDP_Y}, std::pair{SEGY_TR_SOURCE_X, SEGY_TR_SOURCE_Y},
                                  std::pair{SEGY_TR_GROUP_X, SEGY_TR_GROUP_Y}}) {
                h.set(xb, cx, path);
                h.set(yb, cy, path);
            }
            out.write(k, h, traces.data() + std::size_t(ix) * g.nz);
        }
    }
    out.commit();
}

}  // namespace rtm::io
