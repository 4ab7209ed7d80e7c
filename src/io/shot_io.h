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
// scalar (byte 69). Sample interval and count from the headers (trace header first,
// binary header as fallback). Gathers come back sorted by id, traces by channel.
std::vector<ShotGather> read_shots(const std::string& path);

// Writes gathers as SEG-Y rev 1, IEEE float, with complete geometry headers:
// field record, channel, source/group X/Y (scalar -100), source depth and group
// elevation (scalar -100), offset, CDP X/Y (midpoint), sample count and interval.
// All gathers must share nt and dt. Written to PATH.tmp and renamed.
void write_shots(const std::string& path, const std::vector<ShotGather>& shots);

}  // namespace rtm::io
