#pragma once
// Shots of the bundled 2D layers model, modelled once on the CPU, and the migration of
// them: what the job-folder tests start from.
#include <filesystem>
#include <sstream>
#include <string>

#include "run_rtm.h"
#include "support/catch.hpp"
#include "support/test_data.h"

namespace rtm::test {

inline std::string layers_vp() { return (source_dir() / "velocity_models" / "layers2d_vp.segy").string(); }
inline std::string layers_vp_smooth() {
    return (source_dir() / "velocity_models" / "layers2d_vp_smooth.segy").string();
}

// `sources` shots from x0 every dx (m), each recorded by `receivers` receivers from x = 0
// every rdx (m) for `length` s (4 ms samples, a 10 Hz Ricker), modelled into the scratch
// folder `name` (each caller keeps the path: once per test file).
inline std::filesystem::path modelled_layers_shots(const std::string& name, int sources, double x0, double dx,
                                                   int receivers, double rdx, double length) {
    const auto dir = scratch(name);
    std::ostringstream cmd;
    cmd << "model --model.vp " << layers_vp() << " --acquisition.source-x0 " << x0 << " --acquisition.source-dx " << dx
        << " --acquisition.source-nx " << sources << " --acquisition.receiver-x0 0 --acquisition.receiver-dx " << rdx
        << " --acquisition.receiver-nx " << receivers << " --acquisition.record-length " << length
        << " --acquisition.record-dt 0.004 --wavelet.ricker-f0 10 --propagation.device cpu --output.shots "
        << (dir / "shots.sgy").string();
    const auto r = run_rtm(cmd.str());
    INFO(r.output);
    REQUIRE(r.status == 0);
    return dir / "shots.sgy";
}

// rtm migrate of `shots` through the smoothed model into the job folder `job` (on the CPU,
// an 800 m aperture), `extra` options after.
inline std::string migrate_layers_cmd(const std::filesystem::path& shots, const std::filesystem::path& job,
                                      const std::string& extra = "") {
    return "migrate --model.vp " + layers_vp_smooth() + " --data.shots " + shots.string() +
           " --wavelet.ricker-f0 10 --migration.aperture 800 --propagation.device cpu --output.job " + job.string() +
           " " + extra;
}

}  // namespace rtm::test
