#include "io/shot_io.h"

#include <algorithm>
#include <cmath>
#include <climits>
#include <cstdio>

#include "core/error.h"
#include "io/segy_file.h"
#include "io/shot_index.h"

namespace rtm::io {

namespace {

using detail::num;
using detail::upper;

std::int64_t centimetres(double metres, const std::string& path, const std::string& what) {
    const double cm = std::round(metres * 100.0);
    if (!(std::abs(cm) < 2147483647.0))
        fail(path, what + " = " + num(metres) + " m does not fit a 32-bit SEG-Y field in centimetres",
             "Shift the survey coordinates closer to 0");
    return std::int64_t(cm);
}

}  // namespace

std::vector<ShotGather> read_shots(const std::string& path) {
    const ShotIndex index(path);
    std::vector<ShotGather> shots;
    shots.reserve(index.size());
    for (std::size_t k = 0; k < index.size(); ++k) shots.push_back(index.load(k));
    return shots;
}

namespace {

// The checks every gather of a file passes: the sampling of the first, channel
// numbers for every trace or none, and (with samples) receivers x nt of them.
void check_gather(const std::string& path, const ShotGather& s, const ShotGather& first, bool with_samples) {
    const std::string which = "shot " + std::to_string(s.id);
    if (s.nt != first.nt || s.dt != first.dt)
        fail(path, which + " has nt " + std::to_string(s.nt) + ", dt " + num(s.dt) + " s where shot " +
                       std::to_string(first.id) + " has nt " + std::to_string(first.nt) + ", dt " + num(first.dt) + " s",
             "All gathers of a file must share nt and dt: resample them");
    if (with_samples && s.data.size() != s.ntraces() * std::size_t(s.nt))
        fail(path, which + " holds " + std::to_string(s.data.size()) + " samples for " + std::to_string(s.ntraces()) +
                       " traces of " + std::to_string(s.nt),
             "Internal error: size data to receivers x nt");
    if (!s.channels.empty() && s.channels.size() != s.ntraces())
        fail(path, which + " has " + std::to_string(s.channels.size()) + " channel numbers for " +
                       std::to_string(s.ntraces()) + " traces",
             "Give one channel per receiver, or none");
}

}  // namespace

struct ShotWriter::File {
    detail::SegyWriter out;
    detail::TraceHeader h;  // the fields every trace shares, set once
};

ShotWriter::ShotWriter(const std::string& path, const std::vector<ShotGather>& geometry, Role role, const std::string& what)
    : path_(path) {
    if (geometry.empty()) fail(path, "no shot gathers to write", "Give at least one gather");
    first_.id = geometry.front().id;
    first_.nt = geometry.front().nt;
    first_.dt = geometry.front().dt;
    written_.assign(geometry.size(), 0);
    std::size_t max_traces = 0, traces = 0;
    for (const auto& s : geometry) {
        check_gather(path, s, first_, false);
        max_traces = std::max(max_traces, s.ntraces());
        first_trace_.push_back(traces);
        traces += s.ntraces();
    }
    first_trace_.push_back(traces);  // the end of the last gather
    if (traces > std::size_t(INT_MAX))
        fail(path, std::to_string(traces) + " traces are more than a SEG-Y file written by segyio can number",
             "Write the shots in several files");
    const int nt = first_.nt;
    const double dt = first_.dt;
    if (nt < 1 || nt > 65535) fail(path, "nt = " + std::to_string(nt) + " does not fit SEG-Y's 16-bit sample count", "Resample");
    const double us = dt * 1e6;
    const double dt_us = std::round(us);
    if (!(std::abs(us - dt_us) <= 1e-6 * std::max(1.0, us)) || dt_us < 1 || dt_us > 32767)
        fail(path, "dt = " + num(dt) + " s is not a whole number of microseconds in 1..32767, as SEG-Y's sample interval (" +
                       detail::trace_field_name(SEGY_TR_SAMPLE_INTER) + ") must be",
             "Resample the gathers to a dt in whole microseconds");

    const std::vector<std::string> text = {
        "C 1 RTM " + upper(what),
        "C 2 SEG-Y REV 1, IEEE FLOAT (FORMAT 5), BIG-ENDIAN, WRITTEN BY RTM",
        "C 3 " + std::to_string(geometry.size()) + " SHOTS, " + std::to_string(nt) + " SAMPLES AT " + num(dt_us) + " US",
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
    file_.reset(role == Role::Create ? new File{detail::SegyWriter(path, card, bin), detail::TraceHeader()}
                                     : new File{detail::SegyWriter(path, nt), detail::TraceHeader()});

    detail::TraceHeader& h = file_->h;
    h.set(SEGY_TR_TRACE_ID, 1, path);
    h.set(SEGY_TR_ELEV_SCALAR, -100, path);
    h.set(SEGY_TR_SOURCE_GROUP_SCALAR, -100, path);
    h.set(SEGY_TR_COORD_UNITS, 1, path);
    h.set(SEGY_TR_SAMPLE_COUNT, nt, path);
    h.set(SEGY_TR_SAMPLE_INTER, std::int64_t(dt_us), path);
}

ShotWriter::~ShotWriter() = default;

void ShotWriter::write(std::size_t index, const ShotGather& s) {
    const std::string& path = path_;
    if (index >= written_.size() || written_[index])
        fail(path, "shot " + std::to_string(s.id) + " is not one of the " + std::to_string(written_.size()) +
                       " announced gathers, or is written twice",
             "Internal error: give the writer every gather's geometry up front");
    check_gather(path, s, first_, true);
    detail::TraceHeader& h = file_->h;
    const std::string which = "shot " + std::to_string(s.id);
    h.set(SEGY_TR_FIELD_RECORD, s.id, path);
    h.set(SEGY_TR_SOURCE_X, centimetres(s.source.x, path, which + " source X"), path);
    h.set(SEGY_TR_SOURCE_Y, centimetres(s.source.y, path, which + " source Y"), path);
    h.set(SEGY_TR_SOURCE_DEPTH, centimetres(s.source.z, path, which + " source depth"), path);
    if (first_trace_[index + 1] - first_trace_[index] != s.ntraces())
        fail(path, "shot " + std::to_string(s.id) + " has " + std::to_string(s.ntraces()) + " traces, not the " +
                       std::to_string(first_trace_[index + 1] - first_trace_[index]) + " announced",
             "Internal error: write the gathers of the announced geometry");
    for (std::size_t r = 0; r < s.ntraces(); ++r) {
        const Position& g = s.receivers[r];
        const double dx = g.x - s.source.x, dy = g.y - s.source.y;
        const bool behind = dx < 0 || (dx == 0 && dy < 0);
        const double offset = std::hypot(dx, dy) * (behind ? -1 : 1);
        const int k = int(first_trace_[index] + r);
        h.set(SEGY_TR_SEQ_LINE, k + 1, path);
        h.set(SEGY_TR_SEQ_FILE, k + 1, path);
        h.set(SEGY_TR_NUMBER_ORIG_FIELD, s.channels.empty() ? int(r) + 1 : s.channels[r], path);
        h.set(SEGY_TR_OFFSET, std::llround(offset), path);
        h.set(SEGY_TR_GROUP_X, centimetres(g.x, path, which + " receiver X"), path);
        h.set(SEGY_TR_GROUP_Y, centimetres(g.y, path, which + " receiver Y"), path);
        h.set(SEGY_TR_RECV_GROUP_ELEV, centimetres(-g.z, path, which + " receiver elevation"), path);
        h.set(SEGY_TR_CDP_X, centimetres(0.5 * (g.x + s.source.x), path, which + " midpoint X"), path);
        h.set(SEGY_TR_CDP_Y, centimetres(0.5 * (g.y + s.source.y), path, which + " midpoint Y"), path);
        file_->out.write(k, h, s.trace(r));
    }
    written_[index] = 1;
}

void ShotWriter::close() { file_->out.close(); }

void ShotWriter::commit(bool every_gather_written_here) {
    const auto n = std::count(written_.begin(), written_.end(), 1);
    if (every_gather_written_here && std::size_t(n) != written_.size())
        fail(path_, std::to_string(n) + " of the " + std::to_string(written_.size()) + " announced gathers written",
             "Internal error: write every gather before commit");
    file_->out.commit();
}

void write_shots(const std::string& path, const std::vector<ShotGather>& shots) {
    ShotWriter out(path, shots);
    for (std::size_t i = 0; i < shots.size(); ++i) out.write(i, shots[i]);
    out.commit();
}

}  // namespace rtm::io
