// Anisotropy input: constants or SEG-Y volumes, range checks naming file, node and
// value, and the combinations refused (phi in 2D or without theta, a GPU, C-PML, a free
// surface with tilt); the stability rule's symbol inequality.
#include <cmath>

#include "io/model_io.h"
#include "kernels/cpu/tti_cpu.h"
#include "physics/anisotropy.h"
#include "physics/stencil.h"
#include "propagation/backend.h"
#include "support/catch.hpp"
#include "support/test_data.h"

using namespace rtm;
using namespace rtm::test;

namespace {

Volume cube(int ny, float value) {
    Grid g;
    g.nx = 4, g.ny = ny, g.nz = 5;
    g.dx = g.dy = 10, g.dz = 5;
    return Volume(g, value);
}

}  // namespace

TEST_CASE("anisotropy parameters are read as constants or SEG-Y volumes on vp's grid, angles in degrees") {
    const auto dir = scratch("aniso-input");
    io::ModelPaths paths;
    paths.vp = (dir / "vp.sgy").string();
    io::write_volume(paths.vp, cube(3, 2000));
    Volume eps = cube(3, 0.1f);
    eps.at(1, 2, 3) = 0.3f;
    paths.epsilon = (dir / "eps.sgy").string();
    io::write_volume(paths.epsilon, eps);
    paths.delta = "0.05";
    paths.theta = "30";
    paths.phi = "-45.5";
    const Model m = io::read_model(paths);
    CHECK(m.extra.at("epsilon").at(1, 2, 3) == 0.3f);
    CHECK(m.extra.at("epsilon").at(0, 0, 0) == 0.1f);
    CHECK(m.extra.at("delta").data.size() == m.vp.data.size());
    CHECK(m.extra.at("delta").at(3, 1, 4) == 0.05f);
    CHECK(std::abs(m.extra.at("theta").at(2, 2, 2) - M_PI / 6) < 1e-6);    // radians
    CHECK(std::abs(m.extra.at("phi").at(2, 2, 2) + 45.5 * M_PI / 180) < 1e-6);
    CHECK(tilted(m));
}

TEST_CASE("anisotropy values out of range are refused naming the file or option, the node and the value") {
    const auto dir = scratch("aniso-range");
    io::ModelPaths paths;
    paths.vp = (dir / "vp.sgy").string();
    io::write_volume(paths.vp, cube(3, 2000));
    Volume d = cube(3, 0.1f);
    d.at(2, 1, 4) = -0.75f;
    const std::string dfile = (dir / "delta.sgy").string();
    io::write_volume(dfile, d);
    {
        io::ModelPaths p = paths;
        p.delta = dfile;
        const std::string e = error_of([&] { io::read_model(p); });
        CHECK(contains(e, dfile));
        CHECK(contains(e, "(ix 2, iy 1, iz 4)"));
        CHECK(contains(e, "is -0.75"));
        CHECK(contains(e, "above -0.5"));
    }
    {
        io::ModelPaths p = paths;
        p.epsilon = "20";  // a percentage instead of a fraction
        const std::string e = error_of([&] { io::read_model(p); });
        CHECK(contains(e, "option model.epsilon"));
        CHECK(contains(e, "is 20"));
        CHECK(contains(e, "0.1, not 10%"));
    }
    {
        io::ModelPaths p = paths;
        p.theta = "200";
        const std::string e = error_of([&] { io::read_model(p); });
        CHECK(contains(e, "option model.theta"));
        CHECK(contains(e, "[-180, 180] degrees"));
    }
    {
        io::ModelPaths p = paths;
        p.phi = "10";
        CHECK(contains(error_of([&] { io::read_model(p); }), "an azimuth without a tilt"));
    }
    {
        io::ModelPaths p;
        p.vp = (dir / "vp2d.sgy").string();
        io::write_volume(p.vp, cube(1, 2000));
        p.theta = "10";
        p.phi = "10";
        CHECK(contains(error_of([&] { io::read_model(p); }), "a 2D model has no azimuth"));
    }
}

TEST_CASE("an anisotropic domain refuses C-PML and takes a free surface, and device gpu without a GPU is refused") {
    Grid g;
    g.nx = g.nz = 20, g.dx = g.dz = 10;
    const std::vector<float> vp(g.size(), 2000.f);
    const AnisotropyFields vti = {{"epsilon", std::vector<float>(g.size(), 0.1f)}};
    AnisotropyFields tti = vti;
    tti["theta"] = std::vector<float>(g.size(), 0.3f);
    DomainOptions o;
    o.dt = 1e-3;
    o.pml_cells = 5;
    o.boundary = Boundary::Cpml;
    CHECK(contains(error_of([&] { Domain(g, vp, o, vti); }), "C-PML is not proven stable"));
    o.boundary = Boundary::Damping;
    o.free_surface = true;
    for (const auto& extra : {vti, tti}) {  // VTI and TTI with a free surface are fine
        const Domain with_surface(g, vp, o, extra);
        CHECK(with_surface.anisotropic());
    }
    o.free_surface = false;
    Backend gpu;
    gpu.gpu = true;
    gpu.choice = DeviceChoice::Gpu;
    // Where no GPU can be used, propagation.device = gpu is refused naming the option;
    // with one, the GPU's VTI/TTI propagator is made (tests/gpu/test_tti.cpp checks it).
    if (!cuda_device_available(nullptr))
        for (const auto& extra : {vti, tti}) {
            const Domain d(g, vp, o, extra);
            CHECK(contains(error_of([&] { make_propagator(d, Precision::Single, gpu); }), "propagation.device"));
        }
}

TEST_CASE("the compact second-derivative symbol dominates the squared first-derivative symbol at every wavenumber") {
    // What makes the TTI operators H = Lap_c + G^T n n^T G and V = Lap_c + G^T (I - n n^T) G
    // negative semi-definite (docs/anisotropy.md): per axis, -symbol(Dxx_c)(k) >=
    // symbol(Dx)(k)^2 on [0, pi]. Both are k^2 + O(k^10), their difference k^10 / 350
    // + O(k^12) (Taylor series of the two 8th-order stencils), positive near 0 but below
    // double's resolution of k^2 there; so the difference / k^10 is checked from k = 0.3
    // on, where it is resolved (1.6e-8 against rounding of 1e-15).
    double worst = 1e300;
    for (int i = 0; i <= 10000; ++i) {
        const double k = 0.3 + (M_PI - 0.3) * i / 10000;
        double s2 = -stencil::c2(0), s1 = 0;
        for (int j = 1; j <= stencil::R; ++j) {
            s2 -= 2 * stencil::c2(j) * std::cos(j * k);
            s1 += 2 * stencil::d1(j) * std::sin(j * k);
        }
        worst = std::min(worst, (s2 - s1 * s1) / std::pow(k, 10));
    }
    WARN("min over k in [0.3, pi] of (S2(k) - S1(k)^2) / k^10: " << worst << " (1/350 = 0.00286 at k -> 0)");
    CHECK(worst >= 0);
}

TEST_CASE("delta above epsilon is lowered to epsilon, and counted, so that C stays positive semi-definite") {
    const TtiPoint t = tti_point(0.05, 0.2, 0, 0);
    CHECK(t.clamped);
    CHECK(t.b * t.b <= t.a + 1e-15);
    CHECK(std::abs(t.b - std::sqrt(1.1)) < 1e-15);
    const TtiPoint u = tti_point(0.2, 0.05, 0, 0);
    CHECK_FALSE(u.clamped);
    CHECK(std::abs(u.b - std::sqrt(1.1)) < 1e-15);
    Model m;
    m.vp = cube(1, 2000);
    m.extra["epsilon"] = cube(1, 0.1f);
    m.extra["delta"] = cube(1, 0.0f);
    m.extra["delta"].at(1, 0, 2) = 0.2f;
    m.extra["delta"].at(3, 0, 4) = 0.15f;
    CHECK(clamped_delta_nodes(m) == 2);
}

TEST_CASE("the slowest qP velocity the dispersion check uses is its least over directions: across the axis where eps < 0, between axis and plane where delta is well below eps") {
    // The pseudo-acoustic qP phase velocity (docs/anisotropy.md), |k| = 1, s^2 = sin^2:
    // v^2 / vp^2 = a / 2 + sqrt(a^2 / 4 - 2 (eps - delta) s^2 (1 - s^2)), a = 1 + 2 eps s^2.
    const auto qp = [](double eps, double delta, double s2) {
        const double a = 1 + 2 * eps * s2;
        return std::sqrt(a / 2 + std::sqrt(a * a / 4 - 2 * (eps - delta) * s2 * (1 - s2)));
    };
    Model m;
    m.vp = cube(1, 2000);
    m.vp.at(2, 0, 3) = 1800;
    CHECK(slowest_velocity(m) == 1800);  // isotropic: min vp
    m.extra["epsilon"] = cube(1, -0.3f);
    m.extra["delta"] = cube(1, -0.3f);
    // Elliptical, slowest across the axis: 1800 sqrt(0.4) (eps and delta as floats).
    CHECK(slowest_velocity(m) == Approx(1800 * qp(-0.3f, -0.3f, 1)).epsilon(1e-6));
    CHECK(slowest_velocity(m) == Approx(1800 * std::sqrt(0.4)).epsilon(1e-6));
    // eps 0, delta -0.4: the relation's minimum over angles is at 45 degrees exactly
    // (a = 1 there: symmetric in s^2 <-> 1 - s^2), 0.851 vp.
    m.extra["epsilon"] = cube(1, 0.0f);
    m.extra["delta"] = cube(1, -0.4f);
    CHECK(slowest_velocity(m) == Approx(1800 * qp(0, -0.4f, 0.5)).epsilon(1e-6));
    for (int i = 0; i <= 20; ++i) CHECK(slowest_velocity(m) <= 1800 * qp(0, -0.4f, i / 20.0) * (1 + 1e-6));
    // eps 0.2, delta 0.1: never slower than along the axis.
    m.extra["epsilon"] = cube(1, 0.2f);
    m.extra["delta"] = cube(1, 0.1f);
    CHECK(slowest_velocity(m) == Approx(1800).epsilon(1e-6));
    // eps > 0 with delta well below it: slowest 31 degrees from the axis, 0.970 vp for
    // (0.2, -0.2), below both ends (45 degrees alone gave vp). Against a sweep of 10^4
    // directions: the sweep's least is at most the minimum's value plus f'' ds^2 / 8
    // (ds = 1e-4, f'' of order 1): 1e-9 relative.
    for (const auto& [eps, delta] : {std::pair{0.2f, -0.2f}, std::pair{0.49f, -0.49f}, std::pair{0.3f, 0.1f}}) {
        m.extra["epsilon"] = cube(1, eps);
        m.extra["delta"] = cube(1, delta);
        double least = 1e9;
        for (int i = 0; i <= 10000; ++i) least = std::min(least, qp(eps, delta, i / 1e4));
        INFO("eps " << eps << ", delta " << delta << ": sweep " << least);
        CHECK(slowest_velocity(m) == Approx(1800 * least).epsilon(1e-8));
    }
    m.extra["epsilon"] = cube(1, 0.2f);
    m.extra["delta"] = cube(1, -0.2f);
    CHECK(slowest_velocity(m) == Approx(1800 * 0.9697).epsilon(1e-4));
}

// The premise of model.elliptic-above: where delta = epsilon, C = [[1 + 2 eps, b], [b, 1]]
// has b^2 = 1 + 2 eps, so det C = 0 and the smaller root of w^2 = vp^2 lambda(C diag(k_h^2,
// k_v^2)) (the qSV artefact) is 0 at every wavenumber: no qSV wave propagates.
TEST_CASE("model.elliptic-above sets delta to epsilon at the nodes above its depth and nowhere else (where C's qSV root vanishes)") {
    for (const double eps : {-0.2, 0.0, 0.15, 0.6}) {
        const TtiPoint t = tti_point(eps, eps, 0.3, 0.1);
        CHECK(std::abs(t.a - t.b * t.b) < 1e-15);  // det C = a - b^2
    }
    Model m;
    m.vp = cube(3, 2000);
    m.vp.grid.z0 = 100;  // depths 100, 105, 110, 115, 120 m
    m.extra["epsilon"] = Volume(m.vp.grid, 0.2f);
    m.extra["epsilon"].at(2, 1, 0) = 0.25f;
    m.extra["theta"] = Volume(m.vp.grid, 0.5f);
    Model with_delta = m;
    with_delta.extra["delta"] = Volume(m.vp.grid, 0.05f);
    with_delta.extra["delta"].at(0, 0, 1) = 0.2f;  // already elliptical: not counted
    // Above 110 m: iz 0 and 1 (100, 105 m); 110 m itself is not above.
    CHECK(make_elliptic_above(with_delta, 110) == 2 * 4 * 3 - 1);
    const Volume& d = with_delta.extra.at("delta");
    const Volume& e = with_delta.extra.at("epsilon");
    for (int iz = 0; iz < 5; ++iz)
        for (int iy = 0; iy < 3; ++iy)
            for (int ix = 0; ix < 4; ++ix)
                CHECK(d.at(ix, iy, iz) == (iz < 2 ? e.at(ix, iy, iz) : 0.05f));
    // Without a delta volume one is made (0 below the depth); epsilon, theta untouched.
    CHECK(make_elliptic_above(m, 106) == 2 * 4 * 3);
    REQUIRE(m.extra.count("delta"));
    CHECK(m.extra.at("delta").at(2, 1, 0) == 0.25f);
    CHECK(m.extra.at("delta").at(2, 1, 2) == 0.0f);
    CHECK(m.extra.at("theta").at(2, 1, 0) == 0.5f);
    // Epsilon absent (0): delta becomes 0 above the depth; with delta absent too the
    // medium is elliptical already and no volume is made.
    Model tilt_delta;
    tilt_delta.vp = cube(1, 2000);
    tilt_delta.extra["delta"] = Volume(tilt_delta.vp.grid, -0.1f);
    CHECK(make_elliptic_above(tilt_delta, 6) == 2 * 4);  // depths 0 and 5 m
    CHECK(tilt_delta.extra.at("delta").at(3, 0, 1) == 0.0f);
    CHECK(tilt_delta.extra.at("delta").at(3, 0, 2) == -0.1f);
    Model tilt_only;
    tilt_only.vp = cube(1, 2000);
    tilt_only.extra["theta"] = Volume(tilt_only.vp.grid, 0.5f);
    CHECK(make_elliptic_above(tilt_only, 1e6) == 0);
    CHECK_FALSE(tilt_only.extra.count("delta"));
    // An isotropic model stays isotropic.
    Model iso;
    iso.vp = cube(1, 2000);
    CHECK(make_elliptic_above(iso, 1e6) == 0);
    CHECK(iso.extra.empty());
}

TEST_CASE("without the stability rule delta > epsilon blows up, and with delta lowered to epsilon the same start stays bounded") {
    // The VTI step on its own (kernels/cpu/tti_cpu.h), homogeneous, no layers, from small
    // random p = q at rest: with b^2 = 1 + 2 delta > a = 1 + 2 eps, det C < 0 and the
    // second root of the dispersion relation is negative, a mode growing like
    // exp(|w| t) (Bube et al. 2012): at kh = kv = the largest grid wavenumber
    // w^2 = vp^2 (tr - sqrt(tr^2 - 4 det kh^2 kv^2)) / 2 = -(262 / s)^2 here, |w| dt = 0.65,
    // so 1000 steps multiply it by about e^650, far beyond the 1e6 checked. With b^2 = a (the rule) every root is >= 0 and leapfrog
    // under the CFL limit keeps the field within a few times its start.
    const double eps = 0.0, delta = 0.3, vp = 2000, h = 10;
    auto grow = [&](double b) {
        kernels::TtiStepArgs<double> A;
        A.box.ndim = 2;
        A.box.nx = A.box.nz = 48;
        const std::size_t n = A.box.padded_size();
        std::vector<double> p(n, 0.0), q(n, 0.0), wp, wq, cpp(n), cpq(n), cqq(n);
        const double a = 1 + 2 * eps;
        const double dt = 0.9 * 2 / std::sqrt(stencil::second_derivative_symbol_max() * (vp * vp * a + vp * vp) / (h * h));
        const double w = vp * vp * dt * dt;
        std::fill(cpp.begin(), cpp.end(), w * a);
        std::fill(cpq.begin(), cpq.end(), w * b);
        std::fill(cqq.begin(), cqq.end(), w);
        unsigned seed = 12345;
        for (int iz = 0; iz < A.box.nz; ++iz)
            for (int ix = 0; ix < A.box.nx; ++ix) {
                seed = seed * 1103515245u + 12345u;
                p[A.box.at(ix, 0, iz)] = q[A.box.at(ix, 0, iz)] = 1e-6 * (double(seed >> 8) / double(1u << 24) - 0.5);
            }
        wp = p;
        wq = q;
        A.inv_h2[0] = A.inv_h2[2] = 1 / (h * h);
        A.inv_h[0] = A.inv_h[2] = 1 / h;
        A.cpp = cpp.data();
        A.cpq = cpq.data();
        A.cqq = cqq.data();
        double start = 0, end = 0;
        for (double x : p) start = std::max(start, std::abs(x));
        for (int s = 0; s < 1000; ++s) {
            A.p = p.data(), A.q = q.data(), A.wp = wp.data(), A.wq = wq.data();
            kernels::tti_step_cpu(A);
            std::swap(p, wp);
            std::swap(q, wq);
        }
        for (double x : p) end = std::max(end, std::abs(x));
        return end / start;
    };
    const double unstable = grow(std::sqrt(1 + 2 * delta)), ruled = grow(tti_point(eps, delta, 0, 0).b);
    WARN("growth of the largest value over 1000 steps: delta > epsilon kept " << unstable << ", delta lowered to epsilon "
                                                                              << ruled);
    CHECK(unstable > 1e6);
    CHECK(ruled < 10);
}
