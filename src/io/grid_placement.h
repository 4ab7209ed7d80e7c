#pragma once
// Private to src/io: which grid node each trace of a gridded file belongs to, and the
// grid's spacing and frame, from the trace headers alone. Shared by read_volume and
// describe_segy, so `rtm info` reports what the reader would do.
#include <cstdint>
#include <string>
#include <vector>

#include "core/grid.h"
#include "io/model_io.h"
#include "io/segy_file.h"

namespace rtm::io::detail {

// Where the headers put one trace.
struct TraceSpot {
    std::int64_t inline_no = 0, crossline_no = 0, cdp = 0;
    double X = 0, Y = 0;  // world coordinates in metres, scalar applied
};

struct TraceSpots {
    std::vector<TraceSpot> spots;  // one per trace, in file order
    // The fields X/Y came from: CDP X/Y (181/185) when any trace has them non-zero,
    // else source X/Y (73/77) when any has those, else 0 (no coordinates).
    int x_byte = 0, y_byte = 0;
    double resolution = 1;  // metres per unit of the coarsest scalar seen
};

TraceSpots read_spots(const std::vector<TraceHeader>& headers, const GridReadOptions& opt);

struct GridPlacement {
    Grid grid;                      // nx, ny, dx, dy and frame; nz, dz, z0 are the caller's
    std::vector<std::size_t> node;  // node ix + iy * nx of each trace, in file order
    std::string method;             // how the traces were placed, for messages and `rtm info`
    // The line numbers of node 0 and their step per node, when placed by line
    // numbers: x_key is the crossline (or the varying line number of a 2D line, or the
    // CDP number), y_key the inline. x_byte/y_byte name the fields (0 when unused).
    std::int64_t x_first = 0, x_step = 0, y_first = 0, y_step = 0;
    int x_byte = 0, y_byte = 0;
};

// Places every trace on a regular 2D or 3D grid; throws rtm::Error naming `path` and
// the trace and field at fault for duplicate positions, missing nodes and
// inconsistent spacing.
GridPlacement place_traces(const TraceSpots& spots, const GridReadOptions& opt, const std::string& path);

}  // namespace rtm::io::detail
