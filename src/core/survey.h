#pragma once
// Earth models and shot records as rtm holds them in memory.
#include <map>
#include <string>
#include <vector>

#include "core/grid.h"

namespace rtm {

// Velocity model: vp in m/s, plus optional anisotropy volumes on the same grid
// ("epsilon", "delta", "theta" (tilt, radians), "phi" (azimuth, radians)).
struct Model {
    Volume vp;
    std::map<std::string, Volume> extra;
    const Grid& grid() const { return vp.grid; }
};

// A point in the survey: world X, Y in metres and depth z in metres (positive down).
struct Position {
    double x = 0, y = 0, z = 0;
};

// One shot: a source and its receivers' traces, all sampled at dt.
struct ShotGather {
    long id = 0;                      // field record number (or the ordinal when absent)
    Position source;
    std::vector<Position> receivers;  // one per trace
    std::vector<int> channels;        // channel number of each trace (1-based), same length
    int nt = 0;                       // samples per trace
    double dt = 0;                    // sample interval, seconds
    std::vector<float> data;          // receivers.size() traces of nt samples, trace after trace

    std::size_t ntraces() const { return receivers.size(); }
    float* trace(std::size_t r) { return data.data() + r * nt; }
    const float* trace(std::size_t r) const { return data.data() + r * nt; }
};

}  // namespace rtm
