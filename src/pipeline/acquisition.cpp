#include "pipeline/acquisition.h"

#include "core/error.h"
#include "pipeline/plan.h"

namespace rtm {

std::vector<ShotGather> regular_geometry(const RegularAcquisition& acq, const Grid& model) {
    std::vector<ShotGather> shots;
    const Spread& s = acq.sources;
    const Spread& r = acq.receivers;
    // The geometry of every trace is held (a position and a channel each), and one
    // gather's samples while it is written: refused before either is allocated.
    const double per_shot = double(r.nx) * r.ny, traces = per_shot * s.nx * s.ny;
    const double need = traces * (sizeof(Position) + sizeof(int)) + per_shot * acq.nt * 4.0;
    if (const HostMemory have = rank_memory(); need > have.total)
        fail("options acquisition.receiver-nx/ny, acquisition.source-nx/ny and acquisition.record-length",
             std::to_string(s.nx * s.ny) + " shots of " + std::to_string(long(per_shot)) + " receivers need " +
                 std::to_string(need / 1e9) + " GB for their geometry and one gather, more than " + have.said(),
             "Use fewer receivers or shots per run");
    long id = 1;
    for (int sy = 0; sy < s.ny; ++sy)
        for (int sx = 0; sx < s.nx; ++sx) {
            ShotGather g;
            g.id = id++;
            g.nt = acq.nt;
            g.dt = acq.dt;
            const double xs = s.x0 + sx * s.dx, ys = s.y0 + sy * s.dy;
            model.frame.to_world(xs, ys, g.source.x, g.source.y);
            g.source.z = s.z;
            int channel = 1;
            for (int ry = 0; ry < r.ny; ++ry)
                for (int rx = 0; rx < r.nx; ++rx) {
                    double x = r.x0 + rx * r.dx, y = r.y0 + ry * r.dy;
                    if (acq.receivers_follow_source) {
                        x += xs;
                        y += ys;
                    }
                    Position p;
                    model.frame.to_world(x, y, p.x, p.y);
                    p.z = r.z;
                    g.receivers.push_back(p);
                    g.channels.push_back(channel++);
                }
            shots.push_back(std::move(g));
        }
    return shots;
}

}  // namespace rtm
