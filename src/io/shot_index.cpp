#include "io/shot_index.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "core/error.h"
#include "io/segy_file.h"

namespace rtm::io {

namespace {

using detail::num;

// What the index takes from one trace header.
struct ShotTrace {
    long ffid = 0;
    int channel = 0;
    bool dead = false;
    bool degrees = false;  // coordinate units (byte 89) 3 or 4: degrees
    int delay = 0;         // delay recording time (byte 109), ms
    Position source, receiver;
};

// Trace identification code 2: a dead trace (SEG-Y rev 1).
constexpr int kDeadTrace = 2;

ShotTrace shot_trace(const detail::TraceHeader& h) {
    ShotTrace t;
    t.delay = h.get(SEGY_TR_DELAY_REC_TIME);
    t.degrees = h.get(SEGY_TR_COORD_UNITS) == 3 || h.get(SEGY_TR_COORD_UNITS) == 4;
    t.ffid = h.get(SEGY_TR_FIELD_RECORD);
    t.channel = h.get(SEGY_TR_NUMBER_ORIG_FIELD);
    t.dead = h.get(SEGY_TR_TRACE_ID) == kDeadTrace;
    const std::int32_t xy = h.get(SEGY_TR_SOURCE_GROUP_SCALAR), z = h.get(SEGY_TR_ELEV_SCALAR);
    t.source.x = detail::apply_scalar(h.get(SEGY_TR_SOURCE_X), xy);
    t.source.y = detail::apply_scalar(h.get(SEGY_TR_SOURCE_Y), xy);
    t.source.z = detail::apply_scalar(h.get(SEGY_TR_SOURCE_DEPTH), z);
    t.receiver.x = detail::apply_scalar(h.get(SEGY_TR_GROUP_X), xy);
    t.receiver.y = detail::apply_scalar(h.get(SEGY_TR_GROUP_Y), xy);
    t.receiver.z = -detail::apply_scalar(h.get(SEGY_TR_RECV_GROUP_ELEV), z);
    return t;
}

// What tells a file rewritten or replaced: its device, inode, size and modification time.
std::string file_stamp(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return "";
    return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" +
           std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
}

std::string at(const Position& p) { return "(X " + num(p.x) + ", Y " + num(p.y) + ", depth " + num(p.z) + ")"; }

// Within the millimetre, as the source positions of one record are compared.
bool same_position(const Position& a, const Position& b) {
    return std::abs(a.x - b.x) <= 1e-3 && std::abs(a.y - b.y) <= 1e-3 && std::abs(a.z - b.z) <= 1e-3;
}

// Refuses trace i (0-based, in file order) of gather g (its r-th trace) when a sample is
// not finite: one NaN would turn the whole stacked image into NaN.
void check_samples(const std::string& path, int i, const ShotGather& g, std::size_t r) {
    const float* x = g.trace(r);
    const float* bad = std::find_if(x, x + g.nt, [](float v) { return !std::isfinite(v); });
    if (bad == x + g.nt) return;
    const long k = long(bad - x);
    fail(path,
         "trace " + std::to_string(i + 1) + " (field record " + std::to_string(g.id) + ", channel " +
             std::to_string(g.channels[r]) + ") sample " + std::to_string(k + 1) + " (t = " + num(k * g.dt) +
             " s) is " + num(*bad),
         "Every sample must be finite: fix the trace (or zero it) where the file was made");
}

// A trace's recording starts its delay (byte 109) after the shot, and rtm reads every
// trace, and a wavelet, from the shot's time 0: its arrivals would be imaged too shallow
// (and the wavelet fired late). A file whose gathers are each one trace at its own
// source is a velocity model (rtm's writer puts z0 in byte 109), which the plan refuses
// as such, with the better message.
void require_no_delay(const std::string& path, const std::vector<ShotGather>& gathers,
                      const std::vector<ShotTrace>& traces, ShotIndex::Use use) {
    using Use = ShotIndex::Use;
    if (use == Use::Geometry) return;  // (positions only)
    const auto late = std::find_if(traces.begin(), traces.end(), [](const ShotTrace& t) { return t.delay != 0; });
    if (late == traces.end()) return;
    const bool model_like = std::all_of(gathers.begin(), gathers.end(), [](const ShotGather& g) {
        return g.ntraces() == 1 && g.receivers[0].x == g.source.x && g.receivers[0].y == g.source.y;
    });
    if (use == Use::Records && model_like && gathers.size() > 1) return;
    const std::string field = detail::trace_field_name(SEGY_TR_DELAY_REC_TIME);
    const std::string i = std::to_string(late - traces.begin() + 1), delay = std::to_string(late->delay);
    if (use == Use::Wavelet)
        fail(path,
             "its trace starts " + delay + " ms (times the time scalar, byte 215) from the fire time (" + field +
                 "), and rtm takes a wavelet's first sample as the source's time 0",
             "Shift the wavelet so that its first sample is at the fire time, and set byte 109 to 0");
    fail(path,
         "trace " + i + " (field record " + std::to_string(late->ffid) + ") starts " + delay +
             " ms (times the time scalar, byte 215) after the shot: its " + field +
             " is not 0, and rtm reads every trace from the shot's time 0 (its arrivals would be imaged too shallow)",
         "Pad the traces with the delay's zeros (or, for a negative delay, cut the samples before the shot) and set "
         "byte 109 to 0");
}

}  // namespace

ShotIndex::ShotIndex(const std::string& path, Use use) : path_(path), stamp_(file_stamp(path)) {
    const detail::SegyReader file(path);
    const int n = file.traces();
    file_traces_ = n;
    file_samples_ = file.samples();
    if (use != Use::Wavelet) detail::require_metres(file);

    // One pass over the headers (one at a time: a header is 240 bytes, what is kept 64).
    // One sample interval for the whole file, in microseconds.
    const detail::TraceHeader first = file.header(0);
    const int first_dt = first.get(SEGY_TR_SAMPLE_INTER);
    std::vector<ShotTrace> traces(n);
    bool any_ffid = false;
    for (int i = 0; i < n; ++i) {
        const detail::TraceHeader h = i == 0 ? first : file.header(i);
        const int v = h.get(SEGY_TR_SAMPLE_INTER);
        if (v != 0 && v != first_dt)
            fail(path, "trace " + std::to_string(i + 1) + " has " + detail::trace_field_name(SEGY_TR_SAMPLE_INTER) + " " +
                           std::to_string(v) + " us where trace 1 has " + std::to_string(first_dt) + " us",
                 "All traces must share one sample interval: resample the file");
        traces[i] = shot_trace(h);
        any_ffid = any_ffid || traces[i].ffid != 0;
    }
    // Byte 89 is not trusted alone: real files say degrees of coordinates in metres
    // (viking_small.segy: 3, with X 0..3312 m). Degrees are refused where every position
    // could be longitude and latitude.
    const auto angle = [](const Position& p) { return std::abs(p.x) <= 180 && std::abs(p.y) <= 90; };
    const auto said = std::find_if(traces.begin(), traces.end(), [](const ShotTrace& t) { return t.degrees; });
    if (use != Use::Wavelet && said != traces.end() && std::all_of(traces.begin(), traces.end(), [&](const ShotTrace& t) {
            return angle(t.source) && angle(t.receiver);
        }))
        fail(path,
             "its coordinates read as degrees: trace " + std::to_string(said - traces.begin() + 1) + " says so (" +
                 detail::trace_field_name(SEGY_TR_COORD_UNITS) + " = 3 or 4), and every source and receiver X/Y lies "
                 "within longitude and latitude's ranges; rtm reads metres",
             "Project the coordinates to a metric grid (e.g. UTM); if they are metres, set byte 89 to 1");
    dead_.resize(std::size_t(n));
    for (int i = 0; i < n; ++i) dead_[std::size_t(i)] = traces[i].dead;
    dead_count_ = std::size_t(std::count(dead_.begin(), dead_.end(), char(1)));
    const int dt_us = file.interval(first);
    // (A geometry file gives positions: its gathers then hold dt 0, and rtm model takes
    // the interval from acquisition.record-dt, refusing the file when that is not given.)
    if (dt_us <= 0 && use != Use::Geometry)
        fail(path, "the sample interval is zero or negative: " + detail::trace_field_name(SEGY_TR_SAMPLE_INTER) + " = " +
                       std::to_string(first_dt) + " in trace 1 and " + detail::binary_field_name(SEGY_BIN_INTERVAL) + " = " +
                       std::to_string(file.binary().get(SEGY_BIN_INTERVAL)),
             "Set the sample interval (microseconds) in the file's headers");

    // Group traces by field record number, or by source position when that is all zero.
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

    gathers_.reserve(groups.size());
    traces_.reserve(groups.size());
    for (auto& [id, members] : groups) {
        ShotGather g;
        g.id = id;
        g.nt = file.samples();
        g.dt = std::max(0, dt_us) * 1e-6;
        g.source = traces[members.front()].source;
        for (int i : members) {
            const Position& s = traces[i].source;
            if (!same_position(s, g.source))
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
        // A channel twice at one receiver position is a trace given twice (a file appended
        // to itself, a merge gone wrong): its data would be migrated twice. (A channel
        // number alone may repeat: streamers numbered each from 1, repeated shots at one
        // position without field record numbers.)
        for (std::size_t r = 1; r < order.size(); ++r)
            if (channel[order[r]] == channel[order[r - 1]] &&
                same_position(traces[members[order[r]]].receiver, traces[members[order[r - 1]]].receiver))
                fail(path, std::string(any_ffid ? "field record " + std::to_string(id) : "the gather of source " + at(g.source)) +
                               " has two traces with " +
                               detail::trace_field_name(SEGY_TR_NUMBER_ORIG_FIELD) + " " + std::to_string(channel[order[r]]) +
                               " at one receiver position: traces " + std::to_string(members[order[r - 1]] + 1) +
                               " and " + std::to_string(members[order[r]] + 1),
                     "Remove the duplicated traces, or number the record's channels one per trace");
        std::vector<int> in_file(members.size());
        for (std::size_t r = 0; r < order.size(); ++r) {
            const int i = members[order[r]];
            g.receivers.push_back(traces[i].receiver);
            g.channels.push_back(channel[order[r]]);
            in_file[r] = i;
        }
        gathers_.push_back(std::move(g));
        traces_.push_back(std::move(in_file));
    }
    require_no_delay(path, gathers_, traces, use);
    const auto late = std::find_if(traces.begin(), traces.end(), [](const ShotTrace& t) { return t.delay != 0; });
    delay_ms_ = late == traces.end() ? 0 : late->delay;
}

std::size_t ShotIndex::leave_out_receivers(const std::function<bool(const Position&)>& keep) {
    std::size_t left_out = 0;
    for (std::size_t k = 0; k < gathers_.size(); ++k) {
        ShotGather& g = gathers_[k];
        std::size_t kept = 0;
        for (std::size_t r = 0; r < g.ntraces(); ++r)
            if (keep(g.receivers[r])) {
                g.receivers[kept] = g.receivers[r];
                g.channels[kept] = g.channels[r];
                traces_[k][kept] = traces_[k][r];
                ++kept;
            }
        left_out += g.ntraces() - kept;
        g.receivers.resize(kept);
        g.channels.resize(kept);
        traces_[k].resize(kept);
    }
    return left_out;
}

ShotGather ShotIndex::load(std::size_t k) const {
    const detail::SegyReader file(path_);
    // Replaced or rewritten since it was indexed: its gathers would be another file's,
    // in a job whose other shots came from this one (and whose fingerprint holds its
    // content at the start).
    if (file.traces() != file_traces_ || file.samples() != file_samples_ || file_stamp(path_) != stamp_)
        fail(path_, "changed since it was indexed (now " + std::to_string(file.traces()) + " traces of " +
                        std::to_string(file.samples()) + " samples, was " + std::to_string(file_traces_) + " of " +
                        std::to_string(file_samples_) + "; its size, time or file identity differ)",
             "Do not replace or rewrite a shot file while a job reads it; run the job again");
    ShotGather g = gathers_.at(k);
    g.data.assign(g.ntraces() * std::size_t(g.nt), 0.f);
    for (std::size_t r = 0; r < g.ntraces(); ++r) {
        const int i = traces_[k][r];
        if (dead_[std::size_t(i)]) continue;  // a dead trace is zeros, whatever it holds
        file.read(i, g.trace(r));
        check_samples(path_, i, g, r);
    }
    return g;
}

}  // namespace rtm::io
