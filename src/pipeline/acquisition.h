#pragma once
// Acquisition geometry: where the shots and their receivers are, and how they record.
#include <string>
#include <vector>

#include "core/survey.h"

namespace rtm {

// A regular line (or grid, in 3D) of points: first + i * spacing for i < count,
// along x and along y, at one depth. Coordinates are the model's local ones
// (metres along its x and y axes from its first node).
struct Spread {
    double x0 = 0, dx = 0;
    int nx = 1;
    double y0 = 0, dy = 0;
    int ny = 1;
    double z = 0;
};

struct RegularAcquisition {
    Spread sources;
    Spread receivers;
    bool receivers_follow_source = false;  // receiver x/y are offsets from each source
    int nt = 0;                            // record samples
    double dt = 0;                         // record sample interval, s
};

// Empty gathers (no data) for a regular acquisition; positions in world coordinates
// through the model's frame so written files carry real survey coordinates.
std::vector<ShotGather> regular_geometry(const RegularAcquisition& acq, const Grid& model);

}  // namespace rtm
