#pragma once
// What a SEG-Y file holds, for `rtm info`.
#include <ostream>
#include <string>

namespace rtm::io {

// Prints revision, sample format, traces, samples, sample interval, geometry kind
// (2D line, 3D cube, shot gathers), extent, number of shots and channels, and the
// value range. The textual header is read as ASCII or EBCDIC, whichever it is. Throws
// rtm::Error, naming the file, for what cannot be described: no regular file (a device,
// a FIFO), a variable count of extended headers (-1, SEG-Y revision 2), and what
// SegyReader refuses; nothing is written to `out` then.
void describe_segy(const std::string& path, std::ostream& out);

}  // namespace rtm::io
