// One shot's grid in z-slabs (parallel/slab_layout.h) and a slab's domain (Domain::slab):
// the rules that make G slabs propagate bit for bit as one box, the balance of work,
// and the refusal that names the option and what would work.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "support/catch.hpp"
#include "support/test_data.h"

#include "kernels/cpu/step_cpu.h"
#include "kernels/step_planes.h"
#include "parallel/slab_layout.h"
#include "propagation/domain.h"

using namespace rtm;
using parallel::Slab;
using parallel::slab_layout;
using rtm::test::contains;
using rtm::test::error_of;

namespace {

constexpr int R = stencil::R;

// An nx x ny x nz grid of h-metre cells (ny = 1: 2D).
Grid grid_of(int nx, int ny, int nz, double h) {
    Grid g;
    g.nx = nx;
    g.ny = ny;
    g.nz = nz;
    g.dx = g.dy = g.dz = h;
    return g;
}

// Checks the layout rules of slab_layout.h for one box.
void check_rules(const std::vector<Slab>& s, int nz, int lo, int hi, bool fs, int ranks) {
    REQUIRE(int(s.size()) == ranks);
    CHECK(s.front().z0 == 0);
    CHECK(s.back().z1 == nz);
    for (std::size_t g = 0; g < s.size(); ++g) {
        INFO("slab " << g << " [" << s[g].z0 << ", " << s[g].z1 << ")");
        CHECK(s[g].planes() >= R);
        if (g > 0) {
            CHECK(s[g].z0 == s[g - 1].z1);  // contiguous
            CHECK(s[g].z0 >= lo + R);       // a face R below the top layer
            CHECK(s[g].z0 <= nz - hi - R);  // and R above the bottom one
        }
    }
    if (fs && ranks > 1) CHECK(s.front().planes() >= R + 1);  // the mirror reads planes 1..R
}

double work(int z0, int z1, int nz, int lo, int hi) {
    double w = 0;
    for (int z = z0; z < z1; ++z)
        w += ((lo > 0 && z < lo + R) || (hi > 0 && z >= nz - hi - R)) ? parallel::kLayerPlaneWeight : 1.0;
    return w;
}

}  // namespace

TEST_CASE("z-slabs cover the box in order, each R planes thick at least, with faces R planes from the layers") {
    for (const bool fs : {false, true})
        for (const int pml : {0, 8, 20})
            for (const int window : {9, 40, 151, 400})
                for (int ranks = 1; ranks <= 8; ++ranks) {
                    const int lo = fs ? 0 : pml, hi = pml, nz = window + lo + hi;
                    INFO("nz " << nz << ", layers " << lo << " + " << hi << (fs ? ", free surface" : "") << ", "
                               << ranks << " ranks");
                    std::vector<Slab> s;
                    try {
                        s = slab_layout(nz, lo, hi, fs, ranks);
                    } catch (const std::exception&) {
                        // Refused only when the faces cannot keep their distances: R
                        // apart between R below the top layer and R above the bottom one.
                        const int first = std::max(lo + R, fs ? R + 1 : R), last = nz - hi - R;
                        CHECK(last - first < (ranks - 2) * R);
                        continue;
                    }
                    check_rules(s, nz, lo, hi, fs, ranks);
                }
}

TEST_CASE("z-slabs share the work within one layer plane's weight of an equal share") {
    // Each face is put on the plane nearest its share of the cumulative work, so it
    // misses by at most half a plane's weight; a slab (two faces) by at most one plane's
    // weight, the heaviest being kLayerPlaneWeight. (Faces far from the layers here: no
    // face is moved by the distance rules.)
    const int lo = 20, hi = 20, nz = 600 + lo + hi;
    for (int ranks = 2; ranks <= 6; ++ranks) {
        const auto s = slab_layout(nz, lo, hi, false, ranks);
        const double share = work(0, nz, nz, lo, hi) / ranks;
        for (const auto& slab : s) {
            INFO(ranks << " ranks, slab [" << slab.z0 << ", " << slab.z1 << ")");
            CHECK(std::abs(work(slab.z0, slab.z1, nz, lo, hi) - share) <= parallel::kLayerPlaneWeight);
        }
    }
    // The layers weigh more: the two outer slabs of three hold fewer planes than the middle one.
    const auto s = slab_layout(nz, lo, hi, false, 3);
    CHECK(s[0].planes() < s[1].planes());
    CHECK(s[2].planes() < s[1].planes());
}

TEST_CASE("too many ranks per shot for a grid is refused, naming the option, the largest count and the smallest grid") {
    const int lo = 20, hi = 20, window = 30, nz = window + lo + hi;
    // nz = 70: faces between lo + R = 24 and nz - hi - R = 46, R = 4 apart: at most
    // (46 - 24) / 4 + 1 = 6 faces, 7 slabs; 8 slabs need 7 faces, 24 + 6 * 4 = 48 <= nz - 24,
    // nz >= 72: a window of 32 depth samples.
    const std::string e = error_of([&] { slab_layout(nz, lo, hi, false, 8); });
    CHECK(contains(e, "parallel.ranks-per-shot <= 7"));
    CHECK(contains(e, "at least 32 depth samples"));
    // Both are exact: 7 ranks fit this grid, 8 fit a window of 32 samples but not 31.
    CHECK_NOTHROW(slab_layout(nz, lo, hi, false, 7));
    CHECK_NOTHROW(slab_layout(32 + lo + hi, lo, hi, false, 8));
    CHECK_THROWS(slab_layout(31 + lo + hi, lo, hi, false, 8));
}

TEST_CASE("a slab's domain holds the whole domain's planes: box, layers, free surface, arrays, band") {
    const Grid g = grid_of(30, 1, 50, 10);
    std::vector<float> vp(g.size());
    for (std::size_t i = 0; i < vp.size(); ++i) vp[i] = float(1500 + i % 97);
    for (const Boundary b : {Boundary::Cpml, Boundary::Damping})
        for (const bool fs : {false, true}) {
            DomainOptions o;
            o.boundary = b;
            o.pml_cells = 10;
            o.free_surface = fs;
            o.dt = 1e-3;
            const Domain whole(g, vp, o);
            const auto& W = whole.box();
            const auto slabs = slab_layout(W.nz, W.pml_lo[2], W.pml_hi[2], fs, 3);
            std::size_t band = 0, window_planes = 0;
            for (std::size_t k = 0; k < slabs.size(); ++k) {
                const Domain d = whole.slab(slabs[k].z0, slabs[k].z1);
                const auto& B = d.box();
                INFO("slab " << k << (fs ? ", free surface" : "") << (b == Boundary::Cpml ? ", C-PML" : ", damping"));
                CHECK(B.nz == slabs[k].planes());
                CHECK(B.sz() == W.sz());
                CHECK(B.pml_lo[2] == (k == 0 ? W.pml_lo[2] : 0));
                CHECK(B.pml_hi[2] == (k == 2 ? W.pml_hi[2] : 0));
                CHECK(B.free_surface == (fs && k == 0));
                for (int ax = 0; ax < 3; ++ax) CHECK(d.cpml(ax) == whole.cpml(ax));
                // Padded plane p of the slab is the whole's plane z0 + p (halo included).
                const long shift = long(slabs[k].z0) * W.sz();
                bool same = true;
                for (std::size_t i = 0; i < B.padded_size(); ++i) {
                    same = same && d.vdt2()[i] == whole.vdt2()[i + std::size_t(shift)];
                    if (b == Boundary::Damping) same = same && d.damping()[i] == whole.damping()[i + std::size_t(shift)];
                }
                CHECK(same);
                if (b == Boundary::Cpml)
                    for (int z = 0; z < B.nz; ++z) CHECK(d.profile(2).a[std::size_t(z)] == whole.profile(2).a[std::size_t(z + slabs[k].z0)]);
                // Window planes: the slab's window is the whole window's planes it holds.
                const std::size_t plane = std::size_t(g.nx);
                const std::size_t w0 = std::size_t(std::max(slabs[k].z0, W.pml_lo[2]) - W.pml_lo[2]);
                CHECK(d.window().z0 == Approx(g.z0 + double(w0) * g.dz));
                for (std::size_t i = 0; i < d.v2().size(); ++i) same = same && d.v2()[i] == whole.v2()[w0 * plane + i];
                CHECK(same);
                window_planes += std::size_t(d.window().nz);
                // The band: the whole's band points in this slab, in order, moved by the shift.
                for (long p : d.band()) same = same && whole.band()[band++] == p + shift;
                CHECK(same);
            }
            CHECK(window_planes == std::size_t(g.nz));
            CHECK(band == whole.band().size());
        }
}

// A rank of a shot group builds only its slab's arrays (DomainOptions::slabs): its host
// memory is its share of the shot. What a SlabPropagator takes from it must be what it
// takes from the whole domain, bit for bit: every array, the z profile and the band, for
// 2D and 3D, C-PML and damping, a free surface or not, isotropic, VTI and TTI (the
// tilted band reaches 2R). Its geometry stays the whole's, the backends refuse it.
TEST_CASE("a rank's domain built for its slab gives the whole domain's slab bit for bit, and holds only its share") {
    const auto same = [](const auto& a, const auto& b) { return a == b; };
    for (const int ndim : {2, 3})
        for (const Boundary b : {Boundary::Cpml, Boundary::Damping})
            for (const bool fs : {false, true})
                for (const int physics : {0, 1, 2}) {  // isotropic, VTI, TTI
                    if (physics && b == Boundary::Cpml) continue;  // refused
                    const Grid g = grid_of(17, ndim == 3 ? 11 : 1, 60, 10);
                    std::vector<float> vp(g.size());
                    for (std::size_t i = 0; i < vp.size(); ++i) vp[i] = float(1500 + (i * 7919) % 1013);
                    AnisotropyFields extra;
                    if (physics) {
                        extra["epsilon"] = std::vector<float>(g.size(), 0.2f);
                        extra["delta"] = std::vector<float>(g.size(), 0.1f);
                        for (std::size_t i = 0; i < g.size(); ++i) extra["epsilon"][i] += float(i % 13) * 0.01f;
                    }
                    if (physics == 2) extra["theta"] = std::vector<float>(g.size(), 30.0f);
                    DomainOptions o;
                    o.boundary = b;
                    o.pml_cells = 8;
                    o.free_surface = fs;
                    o.dt = 1e-3;
                    const Domain whole(g, vp, o, extra);
                    const auto& W = whole.box();
                    const int G = 3;
                    const auto slabs = slab_layout(W.nz, W.pml_lo[2], W.pml_hi[2], fs, G);
                    for (int k = 0; k < G; ++k) {
                        INFO(ndim << "D, slab " << k << (fs ? ", free surface" : "")
                                  << (b == Boundary::Cpml ? ", C-PML" : ", damping") << ", physics " << physics);
                        DomainOptions ok = o;
                        ok.slabs = G;
                        ok.slab = k;
                        const Domain part(g, vp, ok, extra);
                        CHECK_FALSE(part.holds_all());
                        CHECK(part.box().nz == W.nz);  // the geometry is the whole's
                        CHECK(part.band_points() == whole.band().size());
                        CHECK(part.vdt2().size() == std::size_t(slabs[std::size_t(k)].planes() + 2 * R) * std::size_t(W.sz()));
                        const Domain a = whole.slab(slabs[std::size_t(k)].z0, slabs[std::size_t(k)].z1);
                        const Domain c = part.slab(slabs[std::size_t(k)].z0, slabs[std::size_t(k)].z1);
                        CHECK(c.holds_all());
                        CHECK(c.box().nz == a.box().nz);
                        CHECK(c.window().nz == a.window().nz);
                        CHECK(c.window().z0 == a.window().z0);
                        CHECK(same(c.vdt2(), a.vdt2()));
                        CHECK(same(c.v2(), a.v2()));
                        CHECK(same(c.damping(), a.damping()));
                        CHECK(same(c.profile(2).a, a.profile(2).a));
                        CHECK(same(c.profile(2).b, a.profile(2).b));
                        CHECK(c.band() == a.band());
                        CHECK(same(c.tti().cpp, a.tti().cpp));
                        CHECK(same(c.tti().cpq, a.tti().cpq));
                        for (int ax = 0; ax < 3; ++ax) CHECK(same(c.tti().axis[ax], a.tti().axis[ax]));
                        // Another slab's planes are not held; no backend takes the part.
                        const auto& other = slabs[std::size_t((k + 1) % G)];
                        CHECK(contains(error_of([&] { (void)part.slab(other.z0, other.z1); }), "holding"));
                        CHECK(contains(error_of([&] { part.require_all("CPU propagator"); }), "a shot group's slab"));
                    }
                    CHECK(whole.holds_all());
                    CHECK(whole.band_points() == whole.band().size());
                }
}

// ---------------------------------------------------------------------------------
// A step over z parts of a box (kernels/step_planes.h): what a GPU slab does to step its
// edge planes before its interior. Each part is stepped as a box of its own; done for
// every part, the result must be the whole box's step bit for bit (same code path, same
// operations at every point), for C-PML (memory variables too) and damping layers, with
// a free surface or not, 2D and 3D, over 12 steps (so that psi and zeta evolve).
namespace {

template <class T>
void check_parts(int ndim, Boundary boundary, bool free_surface) {
    const Grid g = grid_of(23, ndim == 3 ? 13 : 1, 40, 10);
    std::vector<float> vp(g.size());
    for (std::size_t i = 0; i < vp.size(); ++i) vp[i] = float(1800 + 300 * std::sin(0.37 * double(i)));
    DomainOptions o;
    o.boundary = boundary;
    o.pml_cells = 6;
    o.free_surface = free_surface;
    o.dt = 0.3 * 10 / 2200;
    Domain d(g, vp, o);
    const kernels::Box& box = d.box();
    const std::size_t n = box.padded_size();
    const auto cast = [](const auto& v) { return std::vector<T>(v.begin(), v.end()); };
    std::vector<T> vdt2 = cast(d.vdt2()), damp = cast(d.damping()), a[3], b[3];
    // Random fields on the computed points (the halo zero as in a run).
    std::vector<T> u(n, T(0)), w(n, T(0));
    for (int iz = 0; iz < box.nz; ++iz)
        for (int iy = 0; iy < box.ny; ++iy)
            for (int ix = 0; ix < box.nx; ++ix) {
                const long p = box.at(ix, iy, iz);
                u[std::size_t(p)] = T(std::sin(0.71 * double(p)));
                w[std::size_t(p)] = T(std::cos(0.53 * double(p)));
            }
    std::vector<T> psi[3], zeta[3];
    kernels::StepArgs<T> A;
    A.box = box;
    d.inverse_spacings(A.inv_h2, A.inv_h);
    A.vdt2 = vdt2.data();
    if (!damp.empty()) A.damp = damp.data();
    A.mem = kernels::cpml_memory(box);
    for (int ax = 0; ax < 3; ++ax)
        if (d.cpml(ax)) {
            a[ax] = cast(d.profile(ax).a);
            b[ax] = cast(d.profile(ax).b);
            psi[ax].assign(A.mem.size[ax], T(0));
            zeta[ax].assign(A.mem.size[ax], T(0));
        }
    // Two copies of the state: the whole box's steps, and the parts' steps.
    struct State {
        std::vector<T> u, w, psi[3], zeta[3];
    };
    State whole{u, w, {psi[0], psi[1], psi[2]}, {zeta[0], zeta[1], zeta[2]}}, parts = whole;
    const auto args = [&](State& s) {
        kernels::StepArgs<T> x = A;
        x.u = s.u.data();
        x.w = s.w.data();
        for (int ax = 0; ax < 3; ++ax) {
            x.a[ax] = a[ax].empty() ? nullptr : a[ax].data();
            x.b[ax] = b[ax].empty() ? nullptr : b[ax].data();
            x.psi[ax] = s.psi[ax].empty() ? nullptr : s.psi[ax].data();
            x.zeta[ax] = s.zeta[ax].empty() ? nullptr : s.zeta[ax].data();
        }
        return x;
    };
    // The cuts closest to the layers that keep the arithmetic (R planes beyond the
    // zones, which end R planes inside the window), and one in the middle: the parts
    // reach into the layers, their zones and the window.
    const int lo = box.pml_lo[2], hi = box.pml_hi[2];
    // Under a free surface the first part holds planes 0 .. R (the mirror's).
    const std::vector<int> cuts = {0, lo ? lo + R : free_surface ? R + 1 : R, box.nz / 2, box.nz - hi - R, box.nz};
    for (int step = 0; step < 12; ++step) {
        kernels::step_cpu(args(whole));
        const auto all = args(parts);
        for (std::size_t k = 0; k + 1 < cuts.size(); ++k) kernels::step_cpu(kernels::step_planes(all, cuts[k], cuts[k + 1]));
        std::swap(whole.u, whole.w);
        std::swap(parts.u, parts.w);
    }
    INFO(ndim << "D, " << (boundary == Boundary::Cpml ? "C-PML" : "damping") << ", free surface " << free_surface);
    // Values that differ, and the first (padded index, its plane).
    const auto differ = [&](const std::vector<T>& x, const std::vector<T>& y, const char* what) {
        std::size_t n_diff = 0, first = 0;
        for (std::size_t i = 0; i < x.size(); ++i)
            if (x[i] != y[i] && n_diff++ == 0) first = i;
        INFO(what << ": " << n_diff << " values differ, the first at " << first << " (padded plane "
                  << first / std::size_t(box.sz()) << ")");
        CHECK(n_diff == 0);
    };
    differ(parts.u, whole.u, "u");
    differ(parts.w, whole.w, "w");
    for (int ax = 0; ax < 3; ++ax) {
        differ(parts.psi[ax], whole.psi[ax], "psi");
        differ(parts.zeta[ax], whole.zeta[ax], "zeta");
    }
    // A cut inside a zone would change the code path of the points beside it: refused.
    if (lo) CHECK(contains(error_of([&] { kernels::step_planes(args(parts), 0, lo + R - 1); }), "step_planes"));
    if (free_surface) CHECK(contains(error_of([&] { kernels::step_planes(args(parts), 0, R); }), "step_planes"));
}

}  // namespace

TEST_CASE("a step over z parts of a box (edge planes first) is the whole box's step bit for bit") {
    for (int ndim : {2, 3})
        for (bool fs : {false, true}) {
            check_parts<float>(ndim, Boundary::Cpml, fs);
            check_parts<float>(ndim, Boundary::Damping, fs);
        }
    check_parts<double>(3, Boundary::Cpml, false);
}

// The band by its definition: every window node within band_reach of an edge (of x and z,
// and of y in 3D), in the order z, y, x (x fastest), as padded points; windows thinner
// than two reaches (every node is on an edge) and the tilted reach (2R) included.
TEST_CASE("the domain's band is every window node within its reach of an edge, in z, y, x order") {
    for (int ndim : {2, 3})
        for (int physics : {0, 2})  // isotropic; TTI (reach 2R)
            for (int nx : {5, 2 * R, 2 * R + 1, 23}) {
                const Grid g = grid_of(nx, ndim == 3 ? 19 : 1, 21, 10);
                const std::vector<float> vp(g.size(), 2000.0f);
                AnisotropyFields extra;
                if (physics == 2) {
                    extra["epsilon"] = std::vector<float>(g.size(), 0.1f);
                    extra["delta"] = std::vector<float>(g.size(), 0.05f);
                    extra["theta"] = std::vector<float>(g.size(), 30.0f);
                }
                DomainOptions o;
                o.boundary = physics ? Boundary::Damping : Boundary::Cpml;
                o.pml_cells = 6;
                o.dt = 1e-3;
                const Domain d(g, vp, o, extra);
                const int reach = physics == 2 ? 2 * R : R;  // (the tilted operator reaches twice as far)
                std::vector<long> expected;
                for (int iz = 0; iz < g.nz; ++iz)
                    for (int iy = 0; iy < g.ny; ++iy)
                        for (int ix = 0; ix < g.nx; ++ix)
                            if (ix < reach || ix >= g.nx - reach || iz < reach || iz >= g.nz - reach ||
                                (ndim == 3 && (iy < reach || iy >= g.ny - reach)))
                                expected.push_back(d.box().at(ix + d.box().pml_lo[0], iy + d.box().pml_lo[1],
                                                              iz + d.box().pml_lo[2]));
                INFO(ndim << "D, nx " << nx << ", reach " << reach);
                CHECK(d.band() == expected);
                CHECK(d.band_points() == expected.size());
            }
}

// The domain's padded arrays are filled point by point on every core with no zeroing
// first (Domain::each_stored): every entry must be written, by its definition. A box
// point (ix, iy, iz) takes the velocity of the nearest window node, (v dt)^2 = v^2 dt^2
// (one product, as the domain computes it: exact equality), and a damping of 0 inside
// the window and > 0 in the layers; every padding entry (halo columns, rows and planes,
// a slab's neighbours' halo planes beyond the box) is exactly 0, as are the TTI arrays'.
TEST_CASE("a domain's padded arrays hold their definition at every box point and 0 at every padding entry") {
    for (int ndim : {2, 3})
        for (int slabs : {1, 3}) {
            const Grid g = grid_of(11, ndim == 3 ? 9 : 1, 25, 10);
            std::vector<float> vp(g.size());
            for (std::size_t i = 0; i < vp.size(); ++i) vp[i] = float(1500 + i % 89);
            AnisotropyFields extra;
            extra["epsilon"] = std::vector<float>(g.size(), 0.1f);
            extra["theta"] = std::vector<float>(g.size(), 30.0f);
            DomainOptions o;
            o.boundary = Boundary::Damping;
            o.pml_cells = 6;
            o.dt = 1e-3;
            o.slabs = slabs;
            for (int s = 0; s < slabs; ++s) {
                o.slab = s;
                const Domain d(g, vp, o, extra);
                const auto& b = d.box();
                const auto layout = slab_layout(b.nz, b.pml_lo[2], b.pml_hi[2], b.free_surface, slabs);
                const int z0 = layout[std::size_t(s)].z0, z1 = layout[std::size_t(s)].z1;
                const long first = long(z0) * b.sz();  // stored index of whole padded index p: p - first
                INFO(ndim << "D, slab " << s << " of " << slabs);
                REQUIRE(d.vdt2().size() == std::size_t(z1 - z0 + 2 * R) * std::size_t(b.sz()));
                bool ok = true;
                std::size_t box_points = 0;
                for (int iz = z0 - R; iz < z1 + R; ++iz)
                    for (int iy = -b.halo_y(); iy < b.ny + b.halo_y(); ++iy)
                        for (long j = 0; j < b.sy(); ++j) {
                            const int ix = int(j) - R;
                            const std::size_t p = std::size_t(b.at(0, iy, iz) - R + j - first);
                            const bool in_box = ix >= 0 && ix < b.nx && iy >= 0 && iy < b.ny && iz >= 0 && iz < b.nz;
                            if (!in_box) {
                                ok = ok && d.vdt2()[p] == 0 && d.damping()[p] == 0 && d.tti().cpp[p] == 0 &&
                                     d.tti().cpq[p] == 0 && d.tti().axis[2][p] == 0;
                                continue;
                            }
                            ++box_points;
                            const int wx = std::clamp(ix - b.pml_lo[0], 0, g.nx - 1);
                            const int wy = std::clamp(iy - b.pml_lo[1], 0, g.ny - 1);
                            const int wz = std::clamp(iz - b.pml_lo[2], 0, g.nz - 1);
                            const double v = vp[g.index(wx, wy, wz)];
                            const bool layer = ix < b.pml_lo[0] || ix >= b.nx - b.pml_hi[0] || iy < b.pml_lo[1] ||
                                               iy >= b.ny - b.pml_hi[1] || iz < b.pml_lo[2] || iz >= b.nz - b.pml_hi[2];
                            ok = ok && d.vdt2()[p] == v * v * (o.dt * o.dt) && (layer ? d.damping()[p] > 0 : d.damping()[p] == 0) &&
                                 d.tti().cpp[p] > d.vdt2()[p] && d.tti().axis[2][p] != 0;
                        }
                CHECK(ok);
                CHECK(box_points == std::size_t(std::min(z1 + R, b.nz) - std::max(z0 - R, 0)) * std::size_t(b.nx) * std::size_t(b.ny));
            }
        }
}
