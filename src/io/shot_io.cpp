#include "io/shot_io.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

#include "core/error.h"
#include "io/segy_file.h"

namespace rtm::io {

namespace {

using detail::num;

// What read_shots takes from one trace header.
struct ShotTrace {
    long ffid = 0;
    int channel = 0;
    Position source, receiver;
};

ShotTrace shot_trace(const detail::TraceHeader& h) {
    ShotTrace t;
    t.ffid = h.get(SEGY_TR_FIELD_RECORD);
    t.channel = h.get(SEGY_TR_NUMBER_ORIG_FIELD);
    const std::int32_t xy = h.get(SEGY_TR_SOURCE_GROUP_SCALAR), z = h.get(SEGY_TR_ELEV_SCALAR);
    t.source.x = detail::apply_scalar(h.get(SEGY_TR_SOURCE_X), xy);
    t.source.y = detail::apply_scalar(h.get(SEGY_TR_SOURCE_Y), xy);
    t.source.z = detail::apply_scalar(h.get(SEGY_TR_SOURCE_DEPTH), z);
    t.receiver.x = detail::apply_scalar(h.get(SEGY_TR_GROUP_X), xy);
    t.receiver.y = detail::apply_scalar(h.get(SEGY_TR_GROUP_Y), xy);
    t.receiver.z = -detail::apply_scalar(h.get(SEGY_TR_RECV_GROUP_ELEV), z);
    return t;
}

// Refuses trace i (0-based, in file order) when a sample is not finite: one NaN would
// turn the whole stacked image into NaN.
void check_samples(const std::string& path, int i, const ShotTrace& t, const float* x, int nt, double dt) {
    const float* bad = std::find_if(x, x + nt, [](float v) { return !std::isfinite(v); });
    if (bad == x + nt) return;
    const long k = long(bad - x);
    std::string which = "trace " + std::to_string(i + 1);
    if (t.ffid || t.channel)
        which += " (field record " + std::to_string(t.ffid) + ", channel " + std::to_string(t.channel) + ")";
    fail(path, which + " sample " + std::to_string(k + 1) + " (t = " + num(k * dt) + " s) is " + num(*bad),
         "Every sample must be finite: fix the trace (or zero it) where the file was made");
}

std::string at(const Position& p) { return "(X " + num(p.x) + ", Y " + num(p.y) + ", depth " + num(p.z) + ")"; }

std::int64_t centimetres(double metres, const std::string& path, const std::string& what) {
    const double cm = std::round(metres * 100.0);
    if (!(std::abs(cm) < 2147483647.0))
        fail(path, what + " = " + num(metres) + " m does not fit a 32-bit SEG-Y field in centimetres",
             "Shift the survey coordinates closer to 0");
    return std::int64_t(cm);
}

}  // namespace

std::vector<ShotGather> read_shots(const std::string& path) {
    const detail::SegyReader file(path);
    const auto headers = file.headers();
    const int n = file.traces();

    // One sample interval for the whole file, in microseconds.
    const int first_dt = headers.front().get(SEGY_TR_SAMPLE_INTER);
    for (int i = 1; i < n; ++i) {
        const int v = headers[i].get(SEGY_TR_SAMPLE_INTER);
        if (v != 0 && v != first_dt)
            fail(path, "trace " + std::to_string(i + 1) + " has " + detail::trace_field_name(SEGY_TR_SAMPLE_INTER) + " " +
                           std::to_string(v) + " us where trace 1 has " + std::to_string(first_dt) + " us",
                 "All traces must share one sample interval: resample the file");
    }
    const int dt_us = file.interval(headers.front());
    if (dt_us <= 0)
        fail(path, "the sample interval is zero or negative: " + detail::trace_field_name(SEGY_TR_SAMPLE_INTER) + " = " +
                       std::to_string(first_dt) + " in trace 1 and " + detail::binary_field_name(SEGY_BIN_INTERVAL) + " = " +
                       std::to_string(file.binary().get(SEGY_BIN_INTERVAL)),
             "Set the sample interval (microseconds) in the file's headers");

    // Group traces by field record number, or by source position when that is all zero.
    std::vector<ShotTrace> traces(n);
    bool any_ffid = false;
    for (int i = 0; i < n; ++i) {
        traces[i] = shot_trace(headers[i]);
        any_ffid = any_ffid || traces[i].ffid != 0;
    }
    std::map<long, std::vector<int>> groups;
    std::map<std::tuple<double, double, double>, long> by_source;
    for (int i = 0; i < n; ++i) {
        long id = traces[i].ffid;
        if (!any_ffid) {
            const auto key = std::make_tuple(traces[i].source.x, traces[i].source.y, traces[i].source.z);
            id = by_source.emplace(key, long(by_source.size()) + 1).first->second;
        }
        groups[id].push_back(i);
    }

    std::vector<ShotGather> shots;
    shots.reserve(groups.size());
    std::vector<std::pair<std::size_t, std::size_t>> slot(n);  // gather and trace of each file trace
    for (auto& [id, members] : groups) {
        ShotGather g;
        g.id = id;
        g.nt = file.samples();
        g.dt = dt_us * 1e-6;
        g.source = traces[members.front()].source;
        for (int i : members) {
            const Position& s = traces[i].source;
            if (std::abs(s.x - g.source.x) > 1e-3 || std::abs(s.y - g.source.y) > 1e-3 || std::abs(s.z - g.source.z) > 1e-3)
                fail(path, "field record " + std::to_string(id) + " (" + detail::trace_field_name(SEGY_TR_FIELD_RECORD) +
                               ") has two source positions: trace " + std::to_string(members.front() + 1) + " at " +
                               at(g.source) + " and trace " + std::to_string(i + 1) + " at " + at(s) +
                               " (source X/Y bytes 73/77, depth byte 49)",
                     "One field record must be one shot: fix the field record numbers or source coordinates");
        }
        // Channels from byte 13 when every trace of the record has one, else file order.
        const bool numbered = std::all_of(members.begin(), members.end(), [&](int i) { return traces[i].channel > 0; });
        std::vector<int> channel(members.size());
        for (std::size_t k = 0; k < members.size(); ++k) channel[k] = numbered ? traces[members[k]].channel : int(k) + 1;
        std::vector<std::size_t> order(members.size());
        for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return channel[a] < channel[b]; });
        for (std::size_t r = 0; r < order.size(); ++r) {
            const int i = members[order[r]];
            g.receivers.push_back(traces[i].receiver);
            g.channels.push_back(channel[order[r]]);
            slot[i] = {shots.size(), r};
        }
        g.data.assign(members.size() * std::size_t(g.nt), 0.f);
        shots.push_back(std::move(g));
    }
    for (int i = 0; i < n; ++i) {
        ShotGather& g = shots[slot[i].first];
        file.read(i, g.trace(slot[i].second));
        check_samples(path, i, traces[i], g.trace(slot[i].second), g.nt, g.dt);
    }
    return shots;
}

void write_shots(const std::string& path, const std::vector<ShotGather>& shots) {
    if (shots.empty()) fail(path, "no shot gathers to write", "Give at least one gather");
    const int nt = shots.front().nt;
    const double dt = shots.front().dt;
    std::size_t max_traces = 0;
    for (const auto& s : shots) {
        const std::string which = "shot " + std::to_string(s.id);
        if (s.nt != nt || s.dt != dt)
            fail(path, which + " has nt " + std::to_string(s.nt) + ", dt " + num(s.dt) + " s where shot " +
                           std::to_string(shots.front().id) + " has nt " + std::to_string(nt) + ", dt " + num(dt) + " s",
                 "All gathers of a file must share nt and dt: resample them");
        if (s.data.size() != s.ntraces() * std::size_t(s.nt))
            fail(path, which + " holds " + std::to_string(s.data.size()) + " samples for " + std::to_string(s.ntraces()) +
                           " traces of " + std::to_string(s.nt),
                 "Internal error: size data to receivers x nt");
        if (!s.channels.empty() && s.channels.size() != s.ntraces())
            fail(path, which + " has " + std::to_string(s.channels.size()) + " channel numbers for " +
                           std::to_string(s.ntraces()) + " traces",
                 "Give one channel per receiver, or none");
        max_traces = std::max(max_traces, s.ntraces());
    }
    if (nt < 1 || nt > 65535) fail(path, "nt = " + std::to_string(nt) + " does not fit SEG-Y's 16-bit sample count", "Resample");
    const double us = dt * 1e6;
    const double dt_us = std::round(us);
    if (!(std::abs(us - dt_us) <= 1e-6 * std::max(1.0, us)) || dt_us < 1 || dt_us > 32767)
        fail(path, "dt = " + num(dt) + " s is not a whole number of microseconds in 1..32767, as SEG-Y's sample interval (" +
                       detail::trace_field_name(SEGY_TR_SAMPLE_INTER) + ") must be",
             "Resample the gathers to a dt in whole microseconds");

    const std::vector<std::string> text = {
        "C 1 RTM SHOT GATHERS",
        "C 2 SEG-Y REV 1, IEEE FLOAT (FORMAT 5), BIG-ENDIAN, WRITTEN BY RTM",
        "C 3 " + std::to_string(shots.size()) + " SHOTS, " + std::to_string(nt) + " SAMPLES AT " + num(dt_us) + " US",
        "C 4 FIELD RECORD (9) = SHOT ID; CHANNEL (13); TRACE SEQUENCE (1, 5)",
        "C 5 SOURCE X/Y (73/77), GROUP X/Y (81/85), CDP X/Y (181/185) = MIDPOINT:",
        "C 6 CENTIMETRES (COORDINATE SCALAR -100 AT 71)",
        "C 7 SOURCE DEPTH (49), GROUP ELEV (41) = -RECEIVER DEPTH: CM, SCALAR -100 AT 69",
        "C 8 OFFSET (37) IN M, NEGATIVE WHEN GROUP X < SOURCE X",
    };
    std::vector<std::string> card(40);
    for (std::size_t i = 0; i < 40; ++i) card[i] = i < text.size() ? text[i] : (i < 9 ? "C " : "C") + std::to_string(i + 1);
    card[39] = "C40 END TEXTUAL HEADER";

    detail::BinaryHeader bin;
    bin.set(SEGY_BIN_TRACES, std::int64_t(std::min<std::size_t>(max_traces, 32767)), path);
    bin.set(SEGY_BIN_INTERVAL, std::int64_t(dt_us), path);
    bin.set(SEGY_BIN_INTERVAL_ORIG, std::int64_t(dt_us), path);
    bin.set(SEGY_BIN_SAMPLES, nt, path);
    bin.set(SEGY_BIN_SAMPLES_ORIG, nt, path);
    bin.set(SEGY_BIN_SORTING_CODE, 1, path);  // as recorded: gather after gather
    bin.set(SEGY_BIN_MEASUREMENT_SYSTEM, 1, path);  // metres
    bin.set(SEGY_BIN_SEGY_REVISION, 0x0100, path);
    bin.set(SEGY_BIN_TRACE_FLAG, 1, path);
    detail::SegyWriter out(path, card, bin);

    detail::TraceHeader h;
    h.set(SEGY_TR_TRACE_ID, 1, path);
    h.set(SEGY_TR_ELEV_SCALAR, -100, path);
    h.set(SEGY_TR_SOURCE_GROUP_SCALAR, -100, path);
    h.set(SEGY_TR_COORD_UNITS, 1, path);
    h.set(SEGY_TR_SAMPLE_COUNT, nt, path);
    h.set(SEGY_TR_SAMPLE_INTER, std::int64_t(dt_us), path);
    int k = 0;
    for (const auto& s : shots) {
        const std::string which = "shot " + std::to_string(s.id);
        h.set(SEGY_TR_FIELD_RECORD, s.id, path);
        h.set(SEGY_TR_SOURCE_X, centimetres(s.source.x, path, which + " source X"), path);
        h.set(SEGY_TR_SOURCE_Y, centimetres(s.source.y, path, which + " source Y"), path);
        h.set(SEGY_TR_SOURCE_DEPTH, centimetres(s.source.z, path, which + " source depth"), path);
        for (std::size_t r = 0; r < s.ntraces(); ++r, ++k) {
            const Position& g = s.receivers[r];
            const double dx = g.x - s.source.x, dy = g.y - s.source.y;
            const bool behind = dx < 0 || (dx == 0 && dy < 0);
            const double offset = std::hypot(dx, dy) * (behind ? -1 : 1);
            h.set(SEGY_TR_SEQ_LINE, k + 1, path);
            h.set(SEGY_TR_SEQ_FILE, k + 1, path);
            h.set(SEGY_TR_NUMBER_ORIG_FIELD, s.channels.empty() ? int(r) + 1 : s.channels[r], path);
            h.set(SEGY_TR_OFFSET, std::llround(offset), path);
            h.set(SEGY_TR_GROUP_X, centimetres(g.x, path, which + " receiver X"), path);
            h.set(SEGY_TR_GROUP_Y, centimetres(g.y, path, which + " receiver Y"), path);
            h.set(SEGY_TR_RECV_GROUP_ELEV, centimetres(-g.z, path, which + " receiver elevation"), path);
            h.set(SEGY_TR_CDP_X, centimetres(0.5 * (g.x + s.source.x), path, which + " midpoint X"), path);
            h.set(SEGY_TR_CDP_Y, centimetres(0.5 * (g.y + s.source.y), path, which + " midpoint Y"), path);
            out.write(k, h, s.trace(r));
        }
    }
    out.commit();
}

}  // namespace rtm::io
