#include "propagation/domain.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/error.h"
#include "parallel/slab_layout.h"
#include "physics/interpolation.h"

namespace rtm {

using stencil::R;

template <class Set, class Clear>
void Domain::each_stored(Set set, Clear clear) const {
    const long planes = held_z1_ - held_z0_ + 2 * R, rows = box_.sz() / box_.sy(), sy = box_.sy();
    const int hy = box_.halo_y();
#pragma omp parallel for collapse(2)
    for (long k = 0; k < planes; ++k)
        for (long r = 0; r < rows; ++r) {
            const int iz = held_z0_ - R + int(k), iy = int(r) - hy;
            const long row = (k * rows + r) * sy;
            const bool inside = iz >= 0 && iz < box_.nz && iy >= 0 && iy < box_.ny;
            for (long j = 0; j < sy; ++j) {
                const int ix = int(j) - R;
                if (inside && ix >= 0 && ix < box_.nx) set(row + j, ix, iy, iz);
                else clear(row + j);
            }
        }
}

kernels::Box Domain::box_of(const Grid& window, int pml_cells, bool free_surface) {
    const int nb = pml_cells;
    kernels::Box box;
    box.ndim = window.ndim();
    const int pad_y = box.ndim == 3 ? nb : 0;
    box.nx = window.nx + 2 * nb;
    box.ny = window.ny + 2 * pad_y;
    box.nz = window.nz + (free_surface ? 0 : nb) + nb;
    box.pml_lo[0] = box.pml_hi[0] = nb;
    box.pml_lo[1] = box.pml_hi[1] = pad_y;
    box.pml_lo[2] = free_surface ? 0 : nb;
    box.pml_hi[2] = nb;
    box.free_surface = free_surface;
    return box;
}

Domain::Domain(const Grid& window, const std::vector<float>& vp, const DomainOptions& opt,
               const AnisotropyFields& extra)
    : window_(window), opt_(opt), box_(box_of(window, opt.pml_cells, opt.free_surface)) {

    held_z0_ = 0;
    held_z1_ = box_.nz;
    if (opt.slabs > 1) {
        const auto s = parallel::slab_layout(box_.nz, box_.pml_lo[2], box_.pml_hi[2], box_.free_surface, opt.slabs);
        if (opt.slab < 0 || opt.slab >= opt.slabs)
            fail("domain", "slab " + std::to_string(opt.slab) + " of " + std::to_string(opt.slabs), "Internal error");
        held_z0_ = s[std::size_t(opt.slab)].z0;
        held_z1_ = s[std::size_t(opt.slab)].z1;
    }

    const double vmax = value_range(vp).max;  // sets the C-PML damping

    // The volume loops below run on every core: a 3D shot's domain is tens of millions
    // of points built before each shot (first touch of the pages included), and on one
    // core it took longer than the shot's propagation on a GPU (issue 12, item 3).
    // Each point's value depends on nothing but its coordinates: the same bits for
    // any thread count, and for any planes held (a slab's equal the whole's slab()).
    const auto [w0, w1] = window_planes(held_z0_, held_z1_);
    const std::size_t plane = std::size_t(window.nx) * window.ny, first = std::size_t(w0) * plane;
    v2_.resize(std::size_t(w1 - w0) * plane);
#pragma omp parallel for
    for (std::size_t i = 0; i < v2_.size(); ++i) v2_[i] = double(vp[first + i]) * vp[first + i];
    vdt2_.resize(stored_size());
    const double dt2 = opt.dt * opt.dt;
    each_stored(
        [&](long p, int ix, int iy, int iz) {
            const int wx = std::clamp(ix - box_.pml_lo[0], 0, window.nx - 1);
            const int wy = std::clamp(iy - box_.pml_lo[1], 0, window.ny - 1);
            const int wz = std::clamp(iz - box_.pml_lo[2], 0, window.nz - 1);
            const double v = vp[window.index(wx, wy, wz)];
            vdt2_[std::size_t(p)] = v * v * dt2;
        },
        [&](long p) { vdt2_[std::size_t(p)] = 0; });

    if (!extra.empty()) set_anisotropy(extra, vp.size());

    // The band: everything the window's interior reads from outside it in one step, the
    // nodes within the update's reach of the edge (of the held planes, in the whole
    // band's order).
    // Row by row (z, then y, x fastest): a whole row on an edge plane or edge row, else
    // its two ends; the band's work, not the volume's (a 3D window's 48 M nodes, one
    // thread, before the first shot).
    const int reach = band_reach();
    const auto add = [&](int ix0, int ix1, int iy, int iz) {
        for (int ix = std::max(ix0, 0); ix < std::min(ix1, window.nx); ++ix)
            band_.push_back(box_.at(ix + box_.pml_lo[0], iy + box_.pml_lo[1], iz + box_.pml_lo[2]));
    };
    for (int iz = w0; iz < w1; ++iz)
        for (int iy = 0; iy < window.ny; ++iy) {
            const bool whole = iz < reach || iz >= window.nz - reach ||
                               (box_.ndim == 3 && (iy < reach || iy >= window.ny - reach));
            if (whole || window.nx <= 2 * reach) {
                add(0, window.nx, iy, iz);
            } else {
                add(0, reach, iy, iz);
                add(window.nx - reach, window.nx, iy, iz);
            }
        }

    const double h[3] = {window.dx, window.dy, window.dz};
    const int n[3] = {box_.nx, box_.ny, box_.nz};
    if (opt.boundary == Boundary::Cpml) {
        for (int ax = 0; ax < 3; ++ax) cpml_[ax] = box_.pml_lo[ax] || box_.pml_hi[ax];
        for (int ax = 0; ax < 3; ++ax)
            prof_[ax] = cpml_profile(n[ax], box_.pml_lo[ax], box_.pml_hi[ax], h[ax], opt.dt, vmax,
                                     opt.f_dominant);
        return;
    }
    // Damping: eta = eta0 (s/L)^2 with s the depth into the layer; a wave crossing the
    // layer and back at speed v loses exp(-eta0 v L / 3), set to Rc = 1e-3:
    // eta0 = 3 ln(1/Rc) / (v L), so k = eta v^2 dt / 2 = 1.5 ln(1/Rc) v dt (s/L)^2 / L.
    damp_.resize(stored_size());
    const double lnR = std::log(1e3);
    each_stored(
        [&](long p, int ix, int iy, int iz) {
            const int c[3] = {ix, iy, iz};
            double k = 0;
            for (int ax = 0; ax < 3; ++ax) {
                const int lo = box_.pml_lo[ax], hi = box_.pml_hi[ax];
                double s = 0;
                if (c[ax] < lo) s = double(lo - c[ax]) / lo;
                else if (hi && c[ax] >= n[ax] - hi) s = double(c[ax] - (n[ax] - 1 - hi)) / hi;
                if (s > 0) {
                    const double L = (c[ax] < lo ? lo : hi) * h[ax];
                    k += 1.5 * lnR * std::sqrt(vdt2_[std::size_t(p)]) * s * s / L;
                }
            }
            damp_[std::size_t(p)] = k;
        },
        [&](long p) { damp_[std::size_t(p)] = 0; });
}

void Domain::set_anisotropy(const AnisotropyFields& extra, std::size_t nodes) {
    for (const auto& [name, v] : extra)
        if (v.size() != nodes)
            fail("domain", "the anisotropy volume " + name + " holds " + std::to_string(v.size()) +
                               " values for a window of " + std::to_string(nodes) + " nodes");
    if (opt_.boundary == Boundary::Cpml)
        fail("absorbing layers", "C-PML is not proven stable for anisotropic (VTI/TTI) media",
             "Use damping layers (Boundary::Damping), as rtm model does for anisotropic models");
    tti_.tilted = tilted(extra);
    // Each parameter's volume (or none: 0), found once, not per point.
    const auto volume = [&](const char* name) -> const std::vector<float>* {
        const auto it = extra.find(name);
        return it == extra.end() ? nullptr : &it->second;
    };
    const std::vector<float>* const fields[4] = {volume("epsilon"), volume("delta"), volume("theta"), volume("phi")};
    const auto value = [&](int f, std::size_t k) { return fields[f] ? double((*fields[f])[k]) : 0.0; };
    const std::size_t np = vdt2_.size();
    tti_.cpp.resize(np);
    tti_.cpq.resize(np);
    if (tti_.tilted)
        for (auto& a : tti_.axis) a.resize(np);
    const int nb = opt_.pml_cells, pad_y = box_.ndim == 3 ? nb : 0;
    each_stored(
        [&](long p, int ix, int iy, int iz) {
            const int wx = std::clamp(ix - nb, 0, window_.nx - 1);
            const int wy = std::clamp(iy - pad_y, 0, window_.ny - 1);
            const int wz = std::clamp(iz - box_.pml_lo[2], 0, window_.nz - 1);
            const std::size_t k = window_.index(wx, wy, wz);
            const TtiPoint t = tti_point(value(0, k), value(1, k), value(2, k), value(3, k));
            const std::size_t i = std::size_t(p);
            tti_.cpp[i] = vdt2_[i] * t.a;
            tti_.cpq[i] = vdt2_[i] * t.b;
            if (tti_.tilted)
                for (int ax = 0; ax < 3; ++ax) tti_.axis[ax][i] = t.n[ax];
        },
        [&](long p) {
            const std::size_t i = std::size_t(p);
            tti_.cpp[i] = tti_.cpq[i] = 0;
            if (tti_.tilted)
                for (auto& a : tti_.axis) a[i] = 0;
        });
}

std::pair<int, int> Domain::window_planes(int z0, int z1) const {
    const int lo = box_.pml_lo[2], hi = box_.pml_hi[2];
    const int w0 = std::max(z0, lo) - lo, w1 = std::min(z1, box_.nz - hi) - lo;
    return {w0, std::max(w0, w1)};
}

void Domain::require_all(const char* who) const {
    if (!holds_all())
        fail(who, "the domain holds only the arrays of z-planes [" + std::to_string(held_z0_) + ", " +
                      std::to_string(held_z1_) + ") of " + std::to_string(box_.nz) + " (a shot group's slab)",
             "Internal error: a slab's domain is for the z-slab propagator of its shot group");
}

std::size_t Domain::band_points() const {
    const int reach = band_reach();
    const auto inner = [&](int n) { return std::size_t(std::max(0, n - 2 * reach)); };
    const std::size_t ny_inner = box_.ndim == 3 ? inner(window_.ny) : std::size_t(window_.ny);
    return window_.size() - inner(window_.nx) * ny_inner * inner(window_.nz);
}

Domain Domain::slab(int z0, int z1) const {
    if (z0 < held_z0_ || z1 > held_z1_ || z1 - z0 < R)
        fail("slab", "planes [" + std::to_string(z0) + ", " + std::to_string(z1) + ") of a box of " +
                         std::to_string(box_.nz) + " planes holding [" + std::to_string(held_z0_) + ", " +
                         std::to_string(held_z1_) + ")", "Internal error: see parallel/slab_layout.h");
    Domain d;
    d.opt_ = opt_;
    d.opt_.slabs = 1;
    d.opt_.slab = 0;
    d.box_ = kernels::planes_of(box_, z0, z1);
    d.opt_.free_surface = d.box_.free_surface;
    d.held_z0_ = 0;
    d.held_z1_ = d.box_.nz;
    // Window planes wz = iz - lo of the planes held.
    const auto [w0, w1] = window_planes(z0, z1);
    const int held_w0 = window_planes(held_z0_, held_z1_).first;
    d.window_ = window_;
    d.window_.nz = w1 - w0;
    d.window_.z0 = window_.z0 + w0 * window_.dz;
    const std::size_t plane = std::size_t(window_.nx) * window_.ny;
    d.v2_.assign(v2_.begin() + std::ptrdiff_t((w0 - held_w0) * plane),
                 v2_.begin() + std::ptrdiff_t((w1 - held_w0) * plane));
    // Rows and planes have this box's strides (nx, ny unchanged): padded plane k of the
    // slab is padded plane z0 + k of the whole box.
    const long sz = box_.sz(), shift = long(z0) * sz;
    const auto sliced = [&](const UninitVector<double>& a) {
        if (a.empty()) return a;
        const auto from = a.begin() + stored(shift);
        return UninitVector<double>(from, from + long(d.box_.padded_size()));
    };
    d.vdt2_ = sliced(vdt2_);
    d.damp_ = sliced(damp_);
    d.tti_.tilted = tti_.tilted;
    d.tti_.cpp = sliced(tti_.cpp);
    d.tti_.cpq = sliced(tti_.cpq);
    for (int ax = 0; ax < 3; ++ax) d.tti_.axis[ax] = sliced(tti_.axis[ax]);
    for (int ax = 0; ax < 3; ++ax) {
        d.prof_[ax] = prof_[ax];
        d.cpml_[ax] = cpml_[ax];
    }
    for (auto* v : {&d.prof_[2].a, &d.prof_[2].b})
        if (!v->empty()) *v = std::vector<double>(v->begin() + z0, v->begin() + z1);
    for (long p : band_) {
        const long iz = p / sz - R;
        if (iz >= z0 && iz < z1) d.band_.push_back(p - shift);
    }
    return d;
}

double Domain::cell_volume() const {
    return window_.dx * window_.dz * (box_.ndim == 3 ? window_.dy : 1.0);
}

long Domain::index(int ix, int iy, int iz) const {
    return box_.at(ix + box_.pml_lo[0], iy + box_.pml_lo[1], iz + box_.pml_lo[2]);
}

PointStencil Domain::point(double x, double y, double z, const std::string& what) const {
    const Grid& g = window_;
    double fx = x / g.dx, fz = (z - g.z0) / g.dz;
    double fy = box_.ndim == 3 ? y / g.dy : 0.0;
    const double tol = kPositionTolerance;
    auto outside = [](double f, int n, double tol_cells) { return f < -tol_cells || f > n - 1 + tol_cells; };
    if (outside(fx, g.nx, tol / g.dx) || outside(fz, g.nz, tol / g.dz) ||
        (box_.ndim == 3 && outside(fy, g.ny, tol / g.dy))) {
        std::ostringstream os;
        os << "(x, y, z) = (" << x << ", " << y << ", " << z << ") m lies outside the model, which spans x 0.."
           << g.x_max() << " m, " << (box_.ndim == 3 ? "y 0.." + std::to_string(g.y_max()) + " m, " : "")
           << "z " << g.z0 << ".." << g.z_max() << " m";
        fail(what, os.str(), "Move it inside the model or extend the model");
    }
    fx = std::clamp(fx, 0.0, double(g.nx - 1));
    fz = std::clamp(fz, 0.0, double(g.nz - 1));
    fy = std::clamp(fy, 0.0, double(g.ny - 1));
    const SincWeights wx = sinc_weights(fx), wz = sinc_weights(fz);
    SincWeights wy{0, {1, 0, 0, 0, 0, 0, 0, 0}};
    int ny_taps = 1;
    if (box_.ndim == 3) {
        wy = sinc_weights(fy);
        ny_taps = 2 * R;
    }
    // A point near the window's edge may touch the absorbing layers; taps beyond the
    // outermost layer (only possible with no layers) are dropped.
    PointStencil s;
    bool any_folded = false;  // taps are distinct until folding maps one onto another
    for (int kz = 0; kz < 2 * R; ++kz)
        for (int ky = 0; ky < ny_taps; ++ky)
            for (int kx = 0; kx < 2 * R; ++kx) {
                double wgt = wx.w[kx] * wy.w[ky] * wz.w[kz];
                if (wgt == 0) continue;
                int iz = wz.first + kz;
                if (opt_.free_surface) {
                    if (iz == 0) continue;   // p = 0 on the surface
                    if (iz < 0) {            // mirror: p(-z) = -p(z)
                        iz = -iz;
                        wgt = -wgt;
                        any_folded = true;
                    }
                }
                const int ix = wx.first + kx, iy = box_.ndim == 3 ? wy.first + ky : 0;
                const int bx = ix + box_.pml_lo[0], by = iy + box_.pml_lo[1], bz = iz + box_.pml_lo[2];
                if (bx < 0 || bx >= box_.nx || by < 0 || by >= box_.ny || bz < 0 || bz >= box_.nz)
                    continue;  // beyond the outermost layer: nothing to inject or sample
                const long p = box_.at(bx, by, bz);
                // Folded taps come first (z runs upwards from the lowest tap), so only a
                // point near a free surface searches for a tap already there.
                if (any_folded) {
                    auto it = std::find(s.index.begin(), s.index.end(), p);
                    if (it != s.index.end()) {
                        s.weight[it - s.index.begin()] += wgt;
                        continue;
                    }
                }
                s.index.push_back(p);
                s.weight.push_back(wgt);
            }
    return s;
}

void require_domain_window(const Domain& d, const Grid& window) {
    const Grid& w = d.window();
    if (window.nx != w.nx || window.ny != w.ny || window.nz != w.nz)
        fail("set_born_perturbation",
             "the perturbation's window is " + std::to_string(window.nx) + " x " + std::to_string(window.ny) + " x " +
                 std::to_string(window.nz) + " nodes, the domain's " + std::to_string(w.nx) + " x " +
                 std::to_string(w.ny) + " x " + std::to_string(w.nz),
             "Give the domain's window");
}

}  // namespace rtm
