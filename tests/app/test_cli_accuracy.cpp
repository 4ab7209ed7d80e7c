// `rtm model` with its defaults against the exact 2D Green's function, from the command
// line (the numerics twin, tests/numerics/test_default_accuracy.cpp, derives the bound
// and checks the prediction without the correction).
#include <cmath>
#include <filesystem>

#include "analytic.h"
#include "io/model_io.h"
#include "io/shot_io.h"
#include "cli_models.h"
#include "run_rtm.h"
#include "support/catch.hpp"
#include "support/test_data.h"

using namespace rtm;
using namespace rtm::test;

TEST_CASE("rtm model with default settings is within 1% of the exact Green's function out to 850 m offset") {
    const auto dir = scratch("cli-accuracy");
    // 2000 m/s at 10 m, Ricker 16 Hz (5 points per shortest wavelength), 2 ms records
    // (the default) and the automatic step (2 ms here), source and receivers on nodes.
    const Volume v = constant_model(221, 61, 10, 2000.f);
    const std::string vp = (dir / "vp.sgy").string(), out = (dir / "s.sgy").string();
    io::write_volume(vp, v);
    const auto r = run_rtm("model --model.vp " + vp + " --wavelet.ricker-f0 16 --acquisition.source-x0 300"
                           " --acquisition.source-depth 300 --acquisition.receiver-x0 400 --acquisition.receiver-dx 250"
                           " --acquisition.receiver-nx 4 --acquisition.receiver-depth 300"
                           " --acquisition.record-length 1.0 --propagation.device cpu --output.shots " + out);
    INFO(r.output);
    REQUIRE(r.status == 0);
    CHECK_THAT(r.output, Catch::Matchers::Contains("time-dispersion transforms remove it"));
    const auto shots = io::read_shots(out);
    REQUIRE(shots.size() == 1);
    const ShotGather& s = shots[0];
    REQUIRE(s.dt == Approx(0.002));
    const auto f = ricker_fn(16);
    for (std::size_t k = 0; k < s.ntraces(); ++k) {
        const double offset = 100 + 250.0 * k;
        std::vector<double> exact(s.nt), got(s.trace(k), s.trace(k) + s.nt);
        for (int i = 0; i < s.nt; ++i) exact[i] = green2d(f, offset, 2000, i * s.dt);
        double num = 0, den = 0;
        for (int i = 0; i < s.nt; ++i) {
            num += (got[i] - exact[i]) * (got[i] - exact[i]);
            den += exact[i] * exact[i];
        }
        const double e = std::sqrt(num / den);
        WARN(offset << " m: relative L2 error " << 100 * e << "%");
        // Spatial dispersion 0.02-0.17%, resampling 0.014%, C-PML and rounding 0.01%:
        // see the numerics twin.
        CHECK(e < 0.01);
    }
}
