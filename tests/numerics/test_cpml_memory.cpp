// The C-PML memory variables kept near the layers only (kernels::CpmlMemory): the step
// must read and write nothing outside what the compact layout keeps. Checked against
// the whole layout (gap 0: every padded cell in place, as the wavefields), which can
// hold anything the step might touch: from the same state, both run the same
// operations at every point, so the fields must agree bit for bit after many steps
// (psi and zeta grown in the layers), the memory at every kept cell must be the whole
// array's at the same point, and the whole array must be zero at every cell the
// compact one drops (the step never wrote there, so dropping it loses nothing).
#include <cmath>
#include <random>
#include <vector>

#include "kernels/cpu/step_cpu.h"
#include "kernels/step_args.h"
#include "kernels/step_planes.h"
#include "physics/cpml.h"
#include "support/catch.hpp"

using namespace rtm;
using kernels::Box;
using kernels::CpmlMemory;

namespace {

struct Shape {
    int ndim, nx, ny, nz;
    int lo[3], hi[3];  // layer cells per axis
    bool free_surface;
    int batch;
    const char* what;
};

struct Run {
    CpmlMemory mem;
    std::vector<double> u, w, psi[3], zeta[3];
};

void check(const Shape& c) {
    Box b;
    b.ndim = c.ndim;
    b.nx = c.nx;
    b.ny = c.ndim == 3 ? c.ny : 1;
    b.nz = c.nz;
    for (int ax = 0; ax < 3; ++ax) {
        b.pml_lo[ax] = c.lo[ax];
        b.pml_hi[ax] = c.hi[ax];
    }
    b.free_surface = c.free_surface;
    const double h[3] = {10, 12, 9}, dt = 1e-3, vmax = 3000;
    std::vector<double> a[3], bb[3];
    kernels::StepArgs<double> A;
    A.box = b;
    A.batch = c.batch;
    const int n[3] = {b.nx, b.ny, b.nz};
    for (int ax = 0; ax < 3; ++ax) {
        const bool used = c.ndim == 3 || ax != 1;
        A.inv_h2[ax] = used ? 1 / (h[ax] * h[ax]) : 0;
        A.inv_h[ax] = used ? 1 / h[ax] : 0;
        if (!b.pml_lo[ax] && !b.pml_hi[ax]) continue;
        const CpmlProfile p = cpml_profile(n[ax], b.pml_lo[ax], b.pml_hi[ax], h[ax], dt, vmax, 10);
        a[ax] = p.a;
        bb[ax] = p.b;
        A.a[ax] = a[ax].data();
        A.b[ax] = bb[ax].data();
    }
    // (v dt)^2 at 60% of the leapfrog limit; random fields on the computed points.
    double sum = 0;
    for (int ax = 0; ax < 3; ++ax) sum += A.inv_h2[ax];
    const std::vector<double> vdt2(b.padded_size(), 0.6 * 4 / (6.5016 * sum));
    A.vdt2 = vdt2.data();
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> d(-1, 1);
    std::vector<double> u0(b.padded_size() * c.batch, 0.0), w0 = u0;
    for (int m = 0; m < c.batch; ++m)
        for (int iz = 0; iz < b.nz; ++iz)
            for (int iy = 0; iy < b.ny; ++iy)
                for (int ix = 0; ix < b.nx; ++ix) {
                    u0[m * b.padded_size() + b.at(ix, iy, iz)] = d(rng);
                    w0[m * b.padded_size() + b.at(ix, iy, iz)] = d(rng);
                }

    Run compact{kernels::cpml_memory(b), u0, w0, {}, {}}, whole{kernels::cpml_memory(b, true), u0, w0, {}, {}};
    for (Run* r : {&compact, &whole})
        for (int ax = 0; ax < 3; ++ax) {
            r->psi[ax].assign(r->mem.size[ax] * c.batch, 0.0);
            r->zeta[ax].assign(r->mem.size[ax] * c.batch, 0.0);
        }
    // The step, whole box or (3D without batch) over z parts as a slab does.
    const auto step = [&](Run& r) {
        kernels::StepArgs<double> x = A;
        x.mem = r.mem;
        x.u = r.u.data();
        x.w = r.w.data();
        for (int ax = 0; ax < 3; ++ax) {
            x.psi[ax] = r.psi[ax].empty() ? nullptr : r.psi[ax].data();
            x.zeta[ax] = r.zeta[ax].empty() ? nullptr : r.zeta[ax].data();
        }
        const int lo = b.pml_lo[2], hi = b.pml_hi[2];
        if (c.batch == 1 && lo && hi && b.nz > lo + hi + 4 * stencil::R) {
            const int cuts[] = {0, lo + stencil::R, b.nz - hi - stencil::R, b.nz};
            for (int k = 0; k < 3; ++k) kernels::step_cpu(kernels::step_planes(x, cuts[k], cuts[k + 1]));
        } else {
            kernels::step_cpu(x);
        }
        std::swap(r.u, r.w);
    };
    for (int s = 0; s < 40; ++s) {
        step(compact);
        step(whole);
    }
    INFO(c.what);
    const auto differing = [](const std::vector<double>& x, const std::vector<double>& y) {
        long k = 0;
        for (std::size_t i = 0; i < x.size(); ++i) k += x[i] != y[i];
        return k;
    };
    CHECK(differing(compact.u, whole.u) == 0);
    CHECK(differing(compact.w, whole.w) == 0);
    // Memory: kept cells equal the whole array's; dropped cells zero in the whole array.
    for (int ax = 0; ax < 3; ++ax) {
        if (!compact.mem.size[ax]) continue;
        kernels::StepArgs<double> kc = A, kw = A;
        kc.mem = compact.mem;
        kw.mem = whole.mem;
        long differ = 0, lost = 0, grown = 0;
        const int hy = b.halo_y();
        for (int m = 0; m < c.batch; ++m)
            for (int iz = -stencil::R; iz < b.nz + stencil::R; ++iz)
                for (int iy = -hy; iy < b.ny + hy; ++iy)
                    for (int ix = -stencil::R; ix < b.nx + stencil::R; ++ix) {
                        const int at[3] = {ix, iy, iz};
                        const int cut = compact.mem.cut[ax], gap = compact.mem.gap[ax];
                        const bool kept = at[ax] < cut || at[ax] >= cut + gap;
                        const std::size_t qw = m * whole.mem.size[ax] + std::size_t(kw.mem_at(ax, ix, iy, iz));
                        for (const auto* f : {&whole.psi[ax], &whole.zeta[ax]}) {
                            const double vw = (*f)[qw];
                            if (vw != 0) ++grown;
                            if (!kept) {
                                lost += vw != 0;
                                continue;
                            }
                            const auto& fc = f == &whole.psi[ax] ? compact.psi[ax] : compact.zeta[ax];
                            const std::size_t qc = m * compact.mem.size[ax] + std::size_t(kc.mem_at(ax, ix, iy, iz));
                            differ += fc[qc] != vw;
                        }
                    }
        INFO("axis " << ax << ": compact keeps " << compact.mem.size[ax] << " of " << whole.mem.size[ax]
                     << " values; " << grown << " non-zero in the whole array");
        CHECK(grown > 0);  // the layers did act
        CHECK(differ == 0);
        CHECK(lost == 0);
    }
}

}  // namespace

TEST_CASE("C-PML memory kept near the layers steps bit for bit as whole arrays, and drops only zeros") {
    const Shape shapes[] = {
        {3, 45, 37, 41, {6, 5, 7}, {7, 6, 5}, false, 1, "3D, layers all round, stepped in z parts"},
        {3, 45, 37, 41, {6, 5, 0}, {7, 6, 5}, true, 1, "3D, free surface on top"},
        {3, 30, 27, 33, {0, 5, 6}, {7, 0, 6}, false, 2, "3D, one-sided x and y layers, a batch of two"},
        {3, 28, 26, 30, {8, 8, 8}, {8, 8, 8}, false, 1, "3D, zones meeting: nothing dropped"},
        {2, 157, 1, 93, {9, 0, 8}, {8, 0, 9}, false, 1, "2D, layers all round, stepped in z parts"},
        {2, 157, 1, 93, {9, 0, 0}, {8, 0, 9}, true, 3, "2D, free surface, a batch of three"},
    };
    for (const Shape& c : shapes) check(c);
}
