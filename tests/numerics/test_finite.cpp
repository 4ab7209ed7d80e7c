// Nothing non-finite is stacked or written: a propagation whose wavefield holds NaN or
// infinity stops with the shot and the step, and the stack refuses a non-finite shot.
// NaN enters here through in-memory input (the readers refuse it in files).
#include <cmath>
#include <limits>

#include "imaging/stack.h"
#include "migration_fixture.h"
#include "pipeline/blow_up.h"
#include "support/catch.hpp"
#include "support/test_data.h"

using namespace rtm;
using namespace rtm::test;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

Model small_model() { return make_model(60, 1, 50, 10, [](double, double, double) { return 2000.0; }); }

// NaN never turns back into a number in the update (NaN op x = NaN) and spreads to every
// node the stencil reaches, so NaN injected before step kFiniteCheckEvery is caught by the
// first check, after step kFiniteCheckEvery (64).
const std::string kFirstCheck = "after time step " + std::to_string(kFiniteCheckEvery) + " of ";

}  // namespace

TEST_CASE("the stack refuses a shot image or illumination that is not finite and stays unchanged") {
    Grid g;
    g.nx = 5, g.ny = 1, g.nz = 4, g.dx = g.dy = g.dz = 10;
    Grid w = g;
    w.nx = 2;
    imaging::Stack stack(g);
    const std::vector<double> ones(w.size(), 1.0);
    stack.add(w, 1, 0, ones.data(), ones.data());
    for (int which : {0, 1}) {
        std::vector<double> bad = ones;
        bad[w.index(1, 0, 2)] = which ? std::numeric_limits<double>::infinity() : kNaN;
        const std::string msg = error_of([&] { which ? stack.add(w, 1, 0, ones.data(), bad.data()) : stack.add(w, 1, 0, bad.data(), ones.data()); });
        INFO(msg);
        CHECK(contains(msg, which ? "shot illumination" : "shot image"));
        CHECK(contains(msg, "window node (ix 1, iy 0, iz 2)"));
        CHECK(contains(msg, "not stacked"));
    }
    double sum = 0;
    for (std::size_t i = 0; i < g.size(); ++i) sum += stack.image[i].value() + stack.illumination[i].value();
    CHECK(sum == 2.0 * w.size());  // the first shot only, exactly (sums of ones)
}

TEST_CASE("model_shots stops a batch whose wavefield is not finite, naming its shots and the step") {
    const Model m = small_model();
    Wavelet w = ricker_wavelet(15);
    w.samples[50] = float(kNaN);  // at 5 ms: within the first steps
    ShotGather a = shot_geometry(m, 150, 0, 20, 0.3, 0.002), b = shot_geometry(m, 400, 0, 20, 0.3, 0.002);
    a.id = 11, b.id = 12;
    PropagationOptions p;
    p.batch = 2;
    const std::string msg = error_of([&] { model_shots(m, {a, b}, w, p); });
    INFO(msg);
    CHECK(contains(msg, "shots 11, 12: the modelled wavefield is not finite"));
    CHECK(contains(msg, kFirstCheck));
}

TEST_CASE("migrate_shot stops a shot whose receiver wavefield is not finite, naming the shot and the step") {
    const Model m = small_model();
    const Wavelet w = ricker_wavelet(15);
    ShotGather s = shot_geometry(m, 300, 0, 20, 0.3, 0.002);
    s.id = 7;
    s.data.assign(s.ntraces() * std::size_t(s.nt), 0.f);
    s.data[3 * std::size_t(s.nt) + s.nt - 2] = float(kNaN);  // near the end: early in the backward pass
    MigrationOptions opt;
    opt.aperture = -1;
    const std::string msg = error_of([&] { migrate_shot(m, s, w, opt); });
    INFO(msg);
    CHECK(contains(msg, "shot 7: the receiver (backward) wavefield is not finite"));
    CHECK(contains(msg, kFirstCheck));
}

TEST_CASE("born_shot stops a shot whose scattered wavefield is not finite, naming the shot and the step") {
    const Model m = small_model();
    Volume dm(m.grid());
    dm.at(30, 0, 25) = float(kNaN);  // NaN * 0 = NaN: in the scattered field from the first step
    ShotGather s = shot_geometry(m, 300, 0, 20, 0.3, 0.002);
    s.id = 5;
    MigrationOptions opt;
    opt.aperture = -1;
    const std::string msg = error_of([&] { born_shot(m, dm, s, ricker_wavelet(15), opt); });
    INFO(msg);
    CHECK(contains(msg, "shot 5: the scattered (Born) wavefield is not finite"));
    CHECK(contains(msg, kFirstCheck));
}
