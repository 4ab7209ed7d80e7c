#pragma once
// A shot file's gathers without their samples: one pass over the trace headers finds
// every gather's traces, geometry and sampling; a gather's samples are read when it is
// loaded. A job then holds one gather's samples at a time, whatever the file's size.
#include <functional>
#include <string>
#include <vector>

#include "core/survey.h"

namespace rtm::io {

// The rules (those of read_shots, which is "index, then load every gather"):
// Source and receiver X/Y come from SourceX/Y and GroupX/Y with the coordinate scalar
// (byte 71); source depth from byte 49 and receiver depth from minus the group
// elevation (byte 41), both with the elevation scalar (byte 69); scalars: negative
// divides, positive multiplies, 0 means 1.
// Sample interval in microseconds from the first trace's byte 117, else binary byte
// 3217 (traces that disagree are an error). Sample count from binary byte 3221, else
// the trace header's byte 115, whichever matches the file size (real files such as
// viking_small.segy keep a stale count in their trace headers).
// Gathers: by field record number (byte 9), or by source position when every field
// record number is 0 (ids 1, 2, ... in order of first appearance). All traces of a
// gather must share one source position. Channel: byte 13 when every trace of the
// gather has one, else the order in the file. Gathers come sorted by id, traces by
// channel, whatever the trace order in the file.
// Refused, by what the file is used for (Use): coordinates in feet (binary byte 3255 =
// 2) or in degrees (byte 89 = 3 or 4, where every X/Y lies within longitude's and
// latitude's ranges: real files set byte 89 wrongly) in shot records and geometry; a
// non-zero delay recording time (byte 109) in shot records (unless every gather is one
// trace at its own source: a velocity model, which the plan refuses as such) and in a
// wavelet: rtm reads metres, and traces that start at the shot. A dead trace (trace
// identification code, byte 29, = 2) is loaded as zeros.
//
// Memory: about 32 bytes per trace (receiver position, channel, trace number) plus
// the gathers' sources; while indexing, about 60 bytes more per trace.
class ShotIndex {
public:
    // What the file is to rtm: recorded shots (data.shots), the positions of shots to
    // model (acquisition.geometry) or a source wavelet (wavelet.file).
    enum class Use { Records, Geometry, Wavelet };
    // Reads every trace header of `path` (no samples) and checks the rules above;
    // a file that breaks one is refused here, before any gather is loaded.
    explicit ShotIndex(const std::string& path, Use use = Use::Records);

    const std::string& path() const { return path_; }
    std::size_t size() const { return gathers_.size(); }
    // Gather k (0-based, in id order) without samples: data is empty.
    const ShotGather& geometry(std::size_t k) const { return gathers_[k]; }
    // Gather k with its samples, read from the file now (which is opened for the read,
    // so indexes of many files hold no open files); refused when the file has changed
    // since it was indexed.
    ShotGather load(std::size_t k) const;
    // Leaves out of every gather the receivers (their traces) for which `keep` is false,
    // as if the file had not held them; returns how many it left out. A gather may be
    // left with none.
    std::size_t leave_out_receivers(const std::function<bool(const Position&)>& keep);
    // Traces marked dead (byte 29 = 2), loaded as zeros.
    std::size_t dead_traces() const { return dead_count_; }
    // The delay recording time (byte 109, ms) of the first trace that has one, 0 if none:
    // a geometry file's traces may start after their shot (Use::Geometry takes them).
    long delay_ms() const { return delay_ms_; }

private:
    std::string path_;
    std::string stamp_;                    // the file's identity, size and time when indexed
    std::vector<char> dead_;               // of each trace of the file
    std::size_t dead_count_ = 0;
    long delay_ms_ = 0;
    int file_traces_ = 0, file_samples_ = 0;  // what the file held when indexed
    std::vector<ShotGather> gathers_;
    std::vector<std::vector<int>> traces_;  // file trace (0-based) of each gather trace
};

}  // namespace rtm::io
