#pragma once
// What a SEG-Y file holds, for `rtm info`.
#include <ostream>
#include <string>

namespace rtm::io {

// Prints revision, sample format, traces, samples, sample interval, geometry kind
// (2D line, 3D cube, shot gathers), extent, number of shots and channels, and the
// value range.
void describe_segy(const std::string& path, std::ostream& out);

}  // namespace rtm::io
