#include "io/segy_info.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <tuple>

#include "core/error.h"
#include "io/grid_placement.h"
#include "io/segy_file.h"

namespace rtm::io {

namespace {

std::string num(double v, int digits = 6) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    return buf;
}

// Lengths to the centimetre, without trailing zeros: "25", "7.5", "620181.88".
std::string metres(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2f", v);
    std::string t = buf;
    t.erase(t.find_last_not_of('0') + 1);
    if (t.back() == '.') t.pop_back();
    return t == "-0" ? "0" : t;
}

std::string metres_range(double lo, double hi) {
    return metres(lo) == metres(hi) ? metres(lo) : metres(lo) + ".." + metres(hi);
}

std::string range(double lo, double hi, int digits = 8) {
    return lo == hi ? num(lo, digits) : num(lo, digits) + ".." + num(hi, digits);
}

constexpr double kPi = 3.14159265358979323846;

struct MinMax {
    double lo = std::numeric_limits<double>::infinity(), hi = -std::numeric_limits<double>::infinity();
    void add(double v) { lo = std::min(lo, v), hi = std::max(hi, v); }
    std::string text() const { return metres_range(lo, hi); }
};

// Shot gathers: records (by field record number, or by source position when that is
// all zero) of several traces each, one source per record, receivers that move.
struct ShotSummary {
    bool is_shots = false;
    std::size_t shots = 0, min_traces = 0, max_traces = 0;
    long first_id = 0, last_id = 0;
    bool by_ffid = true;
    MinMax sx, sy, sz, gx, gy, gz, offset;
};

ShotSummary summarise_shots(const std::vector<detail::TraceHeader>& headers) {
    struct Rec {
        std::vector<std::size_t> traces;
        bool one_source = true, moving_receivers = false;
    };
    ShotSummary s;
    s.by_ffid = std::any_of(headers.begin(), headers.end(), [](const auto& h) { return h.get(SEGY_TR_FIELD_RECORD) != 0; });
    std::map<long, Rec> recs;
    std::map<std::tuple<int, int, int>, long> by_source;
    for (std::size_t i = 0; i < headers.size(); ++i) {
        const auto& h = headers[i];
        long id = h.get(SEGY_TR_FIELD_RECORD);
        const auto src = std::make_tuple(h.get(SEGY_TR_SOURCE_X), h.get(SEGY_TR_SOURCE_Y), h.get(SEGY_TR_SOURCE_DEPTH));
        if (!s.by_ffid) id = by_source.emplace(src, long(by_source.size()) + 1).first->second;
        Rec& r = recs[id];
        if (!r.traces.empty()) {
            const auto& f = headers[r.traces.front()];
            r.one_source = r.one_source && src == std::make_tuple(f.get(SEGY_TR_SOURCE_X), f.get(SEGY_TR_SOURCE_Y),
                                                                  f.get(SEGY_TR_SOURCE_DEPTH));
            r.moving_receivers = r.moving_receivers || h.get(SEGY_TR_GROUP_X) != f.get(SEGY_TR_GROUP_X) ||
                                 h.get(SEGY_TR_GROUP_Y) != f.get(SEGY_TR_GROUP_Y);
        }
        r.traces.push_back(i);
    }
    s.is_shots = !recs.empty();
    for (const auto& [id, r] : recs) s.is_shots = s.is_shots && r.traces.size() > 1 && r.one_source && r.moving_receivers;
    if (!s.is_shots) return s;
    s.shots = recs.size();
    s.first_id = recs.begin()->first;
    s.last_id = recs.rbegin()->first;
    s.min_traces = headers.size();
    for (const auto& [id, r] : recs) {
        s.min_traces = std::min(s.min_traces, r.traces.size());
        s.max_traces = std::max(s.max_traces, r.traces.size());
    }
    for (const auto& h : headers) {
        const auto xy = h.get(SEGY_TR_SOURCE_GROUP_SCALAR), z = h.get(SEGY_TR_ELEV_SCALAR);
        const double sx = detail::apply_scalar(h.get(SEGY_TR_SOURCE_X), xy), sy = detail::apply_scalar(h.get(SEGY_TR_SOURCE_Y), xy);
        const double gx = detail::apply_scalar(h.get(SEGY_TR_GROUP_X), xy), gy = detail::apply_scalar(h.get(SEGY_TR_GROUP_Y), xy);
        s.sx.add(sx), s.sy.add(sy), s.gx.add(gx), s.gy.add(gy);
        s.sz.add(detail::apply_scalar(h.get(SEGY_TR_SOURCE_DEPTH), z));
        s.gz.add(-detail::apply_scalar(h.get(SEGY_TR_RECV_GROUP_ELEV), z));
        s.offset.add(std::hypot(gx - sx, gy - sy) * ((gx < sx || (gx == sx && gy < sy)) ? -1 : 1));
    }
    return s;
}

struct Values {
    double lo = std::numeric_limits<double>::infinity(), hi = -std::numeric_limits<double>::infinity(), sum2 = 0;
    std::size_t finite = 0, bad = 0;
};

// Time or depth along the samples, and the evidence, in words.
struct SampleDomain {
    bool depth = false;
    std::string why;
};

// The textual header's card (1-based) holding `word` (upper case), or 0.
int card_of(const std::string& text, const std::string& word) {
    const std::size_t at = text.find(word);
    return at == std::string::npos ? 0 : int(at / 80) + 1;
}

// Shot gathers are recorded in time. Otherwise the textual header is read for DEPTH
// and for TIME, TWT or MS once the phrases that describe the survey rather than the
// samples (a water depth, as USGS-style headers give, a source or cable depth) are set
// aside; the values settle what the text leaves open: velocities (100..20000, never
// negative) make a depth model, values that change sign are seismic amplitudes.
SampleDomain sample_domain(std::string text, const Values& v, bool shots) {
    if (shots) return {false, "shot gathers are recorded in time"};
    std::string set_aside;
    for (const char* phrase : {"WATER DEPTH", "DEPTH OF WATER", "WATER-DEPTH", "SOURCE DEPTH", "GUN DEPTH", "CABLE DEPTH",
                               "STREAMER DEPTH", "RECEIVER DEPTH", "HYDROPHONE DEPTH", "SHOT DEPTH", "DEPTH OF SOURCE"})
        for (std::size_t at; (at = text.find(phrase)) != std::string::npos;) {
            if (set_aside.find(phrase) == std::string::npos)
                set_aside += std::string(set_aside.empty() ? "" : ", ") + "'" + phrase + "' (card " +
                             std::to_string(at / 80 + 1) + ")";
            text.replace(at, std::string(phrase).size(), std::string(std::string(phrase).size(), ' '));
        }
    const int depth_card = card_of(text, "DEPTH");
    int time_card = 0;
    std::string time_word;
    for (const char* w : {"TWO-WAY", "TWT", "TIME", " MSEC", " MS "})
        if (int c = card_of(text, w); c && (!time_card || c < time_card)) time_card = c, time_word = w;
    const bool velocities = v.finite > 0 && v.lo >= 100 && v.hi <= 20000;
    const bool signed_values = v.finite > 0 && v.lo < 0 && v.hi > 0;
    std::string why;
    bool depth;
    if (depth_card && !time_card) {
        depth = true;
        why = "the textual header says DEPTH (card " + std::to_string(depth_card) + ")";
    } else if (time_card && !depth_card) {
        depth = false;
        why = "the textual header says '" + time_word.substr(time_word.find_first_not_of(' '),
                                                               time_word.find_last_not_of(' ') - time_word.find_first_not_of(' ') + 1) +
              "' (card " + std::to_string(time_card) + ")";
    } else {
        depth = velocities;
        why = std::string(depth_card ? "the textual header says both DEPTH and time" : "the textual header says neither") +
              (velocities ? "; the values look like velocities in m/s (100..20000, none negative)"
                          : signed_values ? "; the values change sign, as seismic amplitudes do"
                                          : "; the values do not look like velocities");
    }
    if (!set_aside.empty()) why += "; " + set_aside + ": about the survey, not the samples";
    return {depth, why};
}

// Revision 0 leaves bytes 181-240 unassigned; revision 1 gave 181/185 to CDP X/Y.
// What a revision-0 file holds there, said as it is.
std::string revision0_cdp(const std::vector<detail::TraceHeader>& headers) {
    MinMax x, y;
    for (const auto& h : headers) {
        const auto scalar = h.get(SEGY_TR_SOURCE_GROUP_SCALAR);
        x.add(detail::apply_scalar(h.get(SEGY_TR_CDP_X), scalar));
        y.add(detail::apply_scalar(h.get(SEGY_TR_CDP_Y), scalar));
    }
    const std::string head = "revision 0 leaves bytes 181-240 unassigned (revision 1 gave 181/185 to CDP X/Y): ";
    if (x.lo == 0 && x.hi == 0 && y.lo == 0 && y.hi == 0) return head + "this file holds 0 there in every trace";
    return head + "this file holds X " + x.text() + ", Y " + y.text() +
           " there (with the scalar of byte 71), which rtm reads as CDP X/Y; a writer may have meant something else";
}

// The first 3600 bytes as they are (the textual and binary headers); empty when the file
// is shorter (SegyReader says so).
std::string raw_headers(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::string raw(SEGY_TEXT_HEADER_SIZE + SEGY_BINARY_HEADER_SIZE, '\0');
    if (!in.read(raw.data(), std::streamsize(raw.size()))) return {};
    return raw;
}

// The textual header as text. SEG-Y revisions 0 and 1 write it in EBCDIC, which segyio
// turns into ASCII, but many writers (and revision 2) use ASCII, which that turned into
// nonsense: a header saying "SAMPLES IN DEPTH" went unread. Every card starts with 'C':
// 0x43 in ASCII, 0xC3 in EBCDIC. Where the first byte is neither (blanks, no card
// numbers), the blanks decide: 0x20 in ASCII; 0x40 in EBCDIC, whose letters and digits
// are all 0x81 and above.
std::string text_header(const detail::SegyReader& file, const std::string& raw) {
    if (raw.empty()) return file.text_header();
    const std::string text = raw.substr(0, SEGY_TEXT_HEADER_SIZE);
    const unsigned char first = static_cast<unsigned char>(text[0]);
    bool ascii = first == 0x43;
    if (first != 0x43 && first != 0xC3) {
        std::size_t a = 0, e = 0;
        for (unsigned char c : text) a += c == 0x20, e += c == 0x40 || c >= 0x80;
        ascii = a > e;
    }
    if (!ascii) return file.text_header();
    std::string out = text;
    std::replace(out.begin(), out.end(), '\0', ' ');
    return out;
}

}  // namespace

void describe_segy(const std::string& path, std::ostream& out) {
    detail::require_regular_file(path);  // (before the raw read: a FIFO would wait for a writer)
    const std::string raw = raw_headers(path);
    const detail::SegyReader file(path);
    const auto headers = file.headers();
    const detail::BinaryHeader& bin = file.binary();

    Values values;
    std::vector<float> trace(file.samples());
    for (int i = 0; i < file.traces(); ++i) {
        file.read(i, trace.data());
        for (float v : trace) {
            if (!std::isfinite(v)) {
                ++values.bad;
                continue;
            }
            values.lo = std::min(values.lo, double(v)), values.hi = std::max(values.hi, double(v));
            values.sum2 += double(v) * v;
            ++values.finite;
        }
    }

    const ShotSummary shots = summarise_shots(headers);
    std::string text = text_header(file, raw);
    // Upper case, so that "samples in depth" counts as DEPTH.
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return char(std::toupper(c)); });
    const SampleDomain domain = sample_domain(text, values, shots.is_shots);
    const bool depth = domain.depth;

    const int rev = bin.get(SEGY_BIN_SEGY_REVISION);
    out << "file:            " << path << " (" << std::filesystem::file_size(path) << " bytes)\n";
    out << "SEG-Y revision:  " << (rev >> 8) << "." << (rev & 0xff) << " (binary-header byte 3501 = " << rev << ")";
    if (rev == 0) out << "; " << revision0_cdp(headers);
    out << "\n";
    out << "sample format:   " << detail::format_name(file.format()) << " (code " << file.format() << ")\n";
    out << "traces:          " << file.traces() << "\n";
    out << "samples:         " << file.samples() << " per trace ("
        << (file.samples_byte() == SEGY_BIN_SAMPLES ? "binary-header byte 3221" : "trace-header byte 115");
    const int stale = headers.front().get(SEGY_TR_SAMPLE_COUNT);
    if (file.samples_byte() == SEGY_BIN_SAMPLES && stale != file.samples())
        out << "; trace-header byte 115 says " << stale << ", which the file size rules out";
    out << ")\n";

    int interval_byte = 0;
    const int interval = file.interval(headers.front(), &interval_byte);
    const std::string from =
        interval_byte == SEGY_TR_SAMPLE_INTER ? "trace-header byte 117" : "binary-header byte 3217";
    const double delay = headers.front().get(SEGY_TR_DELAY_REC_TIME);
    std::string axis;
    if (interval <= 0) {
        out << "sample interval: missing (0 in trace-header byte 117 and binary-header byte 3217)\n";
    } else if (depth) {
        out << "sample interval: " << interval << " (" << from << "): as a depth model's dz in mm, "
            << num(interval * 1e-3) << " m (as time, " << num(interval * 1e-3) << " ms)\n";
        axis = "depth:           " + range(delay, delay + (file.samples() - 1) * interval * 1e-3) + " m\n";
    } else {
        out << "sample interval: " << num(interval * 1e-3) << " ms (" << interval << " us, " << from << ")\n";
        axis = "time:            " + range(delay, delay + (file.samples() - 1) * interval * 1e-3) + " ms\n";
    }

    if (shots.is_shots) {
        out << "geometry:        shot gathers: " << shots.shots << " shots ("
            << (shots.by_ffid ? "field records " + range(shots.first_id, shots.last_id) + ", byte 9"
                              : "grouped by source position: field record numbers are 0")
            << "), " << range(shots.min_traces, shots.max_traces) << " channels per shot\n";
        out << "  sources:       X " << shots.sx.text() << " m, Y " << shots.sy.text() << " m, depth " << shots.sz.text() << " m\n";
        out << "  receivers:     X " << shots.gx.text() << " m, Y " << shots.gy.text() << " m, depth " << shots.gz.text() << " m\n";
        out << "  offsets:       " << shots.offset.text() << " m (source to group distance, negative when group X < source X)\n";
    } else {
        try {
            const GridReadOptions opt;
            const detail::TraceSpots spots = detail::read_spots(headers, opt);
            const detail::GridPlacement p = detail::place_traces(spots, opt, path);
            const Grid& g = p.grid;
            auto keys = [](std::int64_t first, std::int64_t step, int n) {
                return range(double(first), double(first + step * (n - 1)), 12) +
                       (step != 1 && n > 1 ? " step " + std::to_string(step) : std::string());
            };
            if (g.ny > 1 && !p.y_byte) {  // a lattice of coordinates, without line numbers
                out << "geometry:        3D cube: " << g.ny << " rows x " << g.nx << " columns, dx " << metres(g.dx)
                    << " m, dy " << metres(g.dy) << " m\n";
            } else if (g.ny > 1) {
                out << "geometry:        3D cube: " << g.ny << " inlines x " << g.nx << " crosslines\n";
                out << "  inlines:       " << keys(p.y_first, p.y_step, g.ny) << " (byte " << p.y_byte << "): y, dy "
                    << metres(g.dy) << " m\n";
                out << "  crosslines:    " << keys(p.x_first, p.x_step, g.nx) << " (byte " << p.x_byte << "): x, dx "
                    << metres(g.dx) << " m\n";
            } else {
                out << "geometry:        2D line: " << g.nx << " traces, dx " << metres(g.dx) << " m";
                if (p.x_byte) out << " (" << detail::trace_field_name(p.x_byte) << " " << keys(p.x_first, p.x_step, g.nx) << ")";
                out << "\n";
            }
            out << "  placed by:     " << p.method << "\n";
            MinMax X, Y;
            for (int iy : {0, g.ny - 1})
                for (int ix : {0, g.nx - 1}) {
                    double wx, wy;
                    g.frame.to_world(ix * g.dx, iy * g.dy, wx, wy);
                    X.add(wx), Y.add(wy);
                }
            out << "  extent:        x 0.." << metres(g.x_max()) << " m";
            if (g.ny > 1) out << ", y 0.." << metres(g.y_max()) << " m";
            if (spots.x_byte) {
                const double azimuth = std::fmod(std::atan2(g.frame.exx, g.frame.exy) * 180 / kPi + 360, 360);
                out << "; world X " << metres_range(X.lo, X.hi) << " m, Y " << metres_range(Y.lo, Y.hi) << " m; x axis azimuth " << metres(azimuth)
                    << " deg from north";
            }
            out << "\n";
        } catch (const rtm::Error& e) {
            out << "geometry:        unstructured: neither shot gathers nor a regular grid (" << e.what() << ")\n";
        }
    }
    if (!axis.empty()) out << axis;
    out << "samples along:   " << (depth ? "depth" : "time") << ": " << domain.why << "\n";

    out << "values:          ";
    if (values.finite)
        out << "min " << num(values.lo) << ", max " << num(values.hi) << ", rms " << num(std::sqrt(values.sum2 / values.finite));
    else
        out << "no finite values";
    if (values.bad) out << "; " << values.bad << " samples are NaN or infinite";
    out << "\n";
}

}  // namespace rtm::io
