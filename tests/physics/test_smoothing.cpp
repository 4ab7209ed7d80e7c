// Smoothing models into migration models (physics/smoothing.h, `model.smooth`).
#include <cmath>

#include "physics/smoothing.h"
#include "support/catch.hpp"

using namespace rtm;

namespace {

Volume line(int n, double h, double (*f)(double)) {
    Grid g;
    g.nx = n, g.nz = 3, g.dx = g.dz = h;
    Volume v(g);
    for (int iz = 0; iz < g.nz; ++iz)
        for (int ix = 0; ix < n; ++ix) v.at(ix, 0, iz) = float(f(ix * h));
    return v;
}

}  // namespace

TEST_CASE("smoothing a step gives the Gaussian's integral across it, keeps constants, and keeps a column's "
          "traveltime when smoothing slowness") {
    // A step from 0 to 1 halfway between the nodes at 490 and 500 m, sigma 30 m (3 cells).
    // The normalised sampled kernel summed over the nodes up to k is the midpoint rule
    // for the Gaussian's integral up to (k + 1/2) h: error about (h / sigma)^2 / 24 times
    // the density's largest slope, 0.24 / sigma^2 per sigma^2, below 0.002: bound 0.005.
    const Volume step = smooth_values(line(101, 10, [](double x) { return x > 495 ? 1.0 : 0.0; }), 30);
    for (int ix = 40; ix <= 60; ++ix) {
        const double d = (ix * 10 - 495) / 30.0;  // distance from the step in sigmas
        INFO("x " << ix * 10 << " m");
        CHECK(step.at(ix, 0, 1) == Approx(0.5 * std::erfc(-d / std::sqrt(2.0))).margin(0.005));
    }
    // Constants stay, to float rounding.
    const Volume flat = smooth_values(line(101, 10, [](double) { return 0.25; }), 30);
    for (float x : flat.data) CHECK(x == Approx(0.25f).epsilon(1e-6));
    // Slowness: a column's traveltime sum h / v is kept (the kernel's weights sum to 1
    // and the model is constant within 3 sigma of its ends, where the edges are extended).
    const Volume layered = line(101, 10, [](double x) { return x < 300 ? 1500.0 : x < 600 ? 2500.0 : 2000.0; });
    const Volume smooth = smooth_slowness(layered, 40);
    double t0 = 0, t1 = 0;
    for (int ix = 0; ix < 101; ++ix) t0 += 10 / double(layered.at(ix, 0, 1)), t1 += 10 / double(smooth.at(ix, 0, 1));
    CHECK(t1 == Approx(t0).epsilon(1e-6));
}
