#include "pipeline/acquisition.h"

namespace rtm {

std::vector<ShotGather> regular_geometry(const RegularAcquisition& acq, const Grid& model) {
    std::vector<ShotGather> shots;
    const Spread& s = acq.sources;
    const Spread& r = acq.receivers;
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
