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

TEST_CASE("smoothing a symmetry axis smooths the axis, not its angles: tilts of +89 and -89 degrees turn through "
          "the horizontal, azimuths of 359 and 1 through 0, and a constant axis stays") {
    const double deg = M_PI / 180;
    // The tolerances: a constant axis's tensor is smoothed to itself up to double
    // rounding (weights summing to 1 within 1e-15), and the angles are written as float
    // radians, whose rounding is at most 2^-24 * pi = 1.9e-7 rad: bound 1e-6 rad.
    const double tol = 1e-6;
    // 2D, a tilt of 89 degrees left of x = 495 m and -89 right of it, sigma 30 m: axes 1
    // degree either side of horizontal (-89 is 91), which turn through the horizontal,
    // |tilt| in [89, 90] degrees; their angles would average to 0, a vertical axis.
    Volume flip = line(101, 10, [](double x) { return (x < 495 ? 89.0 : -89.0) * M_PI / 180; });
    smooth_axis(flip, nullptr, 30);
    for (int ix = 0; ix < 101; ++ix) {
        INFO("x " << ix * 10 << " m: tilt " << flip.at(ix, 0, 1) / deg << " degrees");
        const double t = std::abs(double(flip.at(ix, 0, 1)));
        CHECK((t >= 89 * deg - tol && t <= 90 * deg + tol));
        if (ix < 30 || ix > 70) CHECK(std::abs(t - 89 * deg) < tol);  // beyond 6 sigma of the jump: unchanged
    }
    // A tilt that turns smoothly (no wrap) stays within its extremes and keeps its sign.
    Volume turn = line(101, 10, [](double x) { return (10 + 40 * x / 1000) * M_PI / 180; });
    smooth_axis(turn, nullptr, 30);
    for (float t : turn.data) CHECK((t >= 10 * deg - tol && t <= 50 * deg + tol));
    // 3D: a tilt of 30 degrees at azimuths 359 (x < 495 m) and 1: the axis's azimuth
    // stays within [-1, 1] degrees (the angles would average to 180 at the wrap); and a
    // constant axis (37 degrees towards 120) stays.
    Grid g;
    g.nx = 101, g.ny = 3, g.nz = 3, g.dx = g.dy = g.dz = 10;
    Volume theta(g), phi(g);
    for (std::size_t i = 0; i < theta.data.size(); ++i) {
        theta.data[i] = float(30 * deg);
        phi.data[i] = float((int(i % 101) * 10 < 495 ? 359 : 1) * deg);
    }
    smooth_axis(theta, &phi, 30);
    for (std::size_t i = 0; i < theta.data.size(); ++i) {
        INFO("node " << i << ": tilt " << theta.data[i] / deg << ", azimuth " << phi.data[i] / deg);
        // The axes turn along the great circle between the two, half an arc of
        // asin(sin 30 sin 1) = 0.5 degrees: the tilt dips to acos(cos 30 / cos 0.5) there.
        const double half = std::asin(std::sin(30 * deg) * std::sin(1 * deg));
        CHECK((theta.data[i] >= std::acos(std::cos(30 * deg) / std::cos(half)) - tol && theta.data[i] <= 30 * deg + tol));
        CHECK(std::abs(phi.data[i]) < 1 * deg + tol);
    }
    // Axes 90 degrees apart: a band of horizontal axes (13 nodes) in vertical ones, sigma
    // 10 cells. The tensor's off-diagonal terms are 0 at every node, so the smoothed axis
    // is one of the two, whichever dominates there (near the band's centre the two nearly
    // tie): never an angle between them. (A power iteration from each node's own axis
    // gave -79 to -90 degrees at the centre, then 0 beside it.)
    const auto band = [](double x) { return std::abs(x - 500) <= 60 ? 90.0 * M_PI / 180 : 0.0; };
    Volume crossed = line(101, 10, band);
    smooth_axis(crossed, nullptr, 100);
    Volume crossed3(g), azimuth(g);
    for (std::size_t i = 0; i < crossed3.data.size(); ++i) {
        crossed3.data[i] = float(band(double(i % 101) * 10));
        azimuth.data[i] = float(30 * deg);
    }
    smooth_axis(crossed3, &azimuth, 100);
    for (const float t : crossed.data) CHECK((std::abs(t) < tol || std::abs(std::abs(t) - 90 * deg) < tol));
    for (const float t : crossed3.data) CHECK((std::abs(t) < tol || std::abs(t - 90 * deg) < tol));
    for (std::size_t i = 0; i < theta.data.size(); ++i) theta.data[i] = float(37 * deg), phi.data[i] = float(120 * deg);
    smooth_axis(theta, &phi, 30);
    for (std::size_t i = 0; i < theta.data.size(); ++i) {
        CHECK(std::abs(theta.data[i] - 37 * deg) < tol);
        CHECK(std::abs(phi.data[i] - 120 * deg) < tol);
    }
}
