#pragma once
// Shot records as SEG-Y: traces grouped into gathers by field record number (or by
// source position when that is missing), in any trace order.
#include <string>
#include <vector>

#include "core/survey.h"

namespace rtm::io {

// Reads all gathers of a file. Source and receiver X/Y come from SourceX/Y and
// GroupX/Y with the coordinate scalar (byte 71); source depth from byte 49 and
// receiver depth from minus the group elevation (byte 41), both with the elevation
// scalar (byte 69); scalars: negative divides, positive multiplies, 0 means 1.
// Sample interval in microseconds from the first trace's byte 117, else binary byte
// 3217 (traces that disagree are an error). Sample count from binary byte 3221, else
// the trace header's byte 115, whichever matches the file size (real files such as
// viking_small.segy keep a stale count in their trace headers).
// Gathers: by field record number (byte 9), or by source position when every field
// record number is 0 (ids 1, 2, ... in order of first appearance). All traces of a
// gather must share one source position. Channel: byte 13 when every trace of the
// gather has one, else the order in the file. Gathers come back sorted by id, traces
// by channel, whatever the trace order in the file. A sample that is not finite is an
// error naming the trace (its number in the file, field record and channel) and sample.
std::vector<ShotGather> read_shots(const std::string& path);

// Writes gathers as SEG-Y rev 1, IEEE float, with complete geometry headers:
// field record (= id), channel (channels[r], or r + 1 when empty), trace sequence
// numbers, source/group X/Y (scalar -100: cm), source depth and group elevation
// (= -receiver depth; elevation scalar -100), offset (signed source-to-group distance
// in whole metres, negative when group X < source X, as unscaled SEG-Y offsets are),
// CDP X/Y (midpoint), sample count and interval (dt must be whole microseconds) and
// trace identification code 1. All gathers must share nt and dt. Written to PATH.tmp
// and renamed.
void write_shots(const std::string& path, const std::vector<ShotGather>& shots);

}  // namespace rtm::io
