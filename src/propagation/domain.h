#pragma once
// One propagation's computational domain, independent of the backend: the model
// window with absorbing layers around it, (v dt)^2 on every computed point, C-PML
// profiles, and where sources and receivers touch the grid.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "core/default_init.h"
#include "core/grid.h"
#include "kernels/step_args.h"
#include "physics/anisotropy.h"
#include "physics/cpml.h"

namespace rtm {

// The absorbing layers' kind: C-PML (best absorption; for modelling) or a damping
// layer whose discrete adjoint is exact (for migration and Born modelling).
enum class Boundary { Cpml, Damping };

struct DomainOptions {
    Boundary boundary = Boundary::Cpml;
    int pml_cells = 20;          // absorbing cells on every side (but the top with a free surface)
    bool free_surface = false;   // p = 0 at the window's first depth sample
    double dt = 0;               // time step, s (must be stable)
    double f_dominant = 10;      // Hz, sets the C-PML frequency shift
    // A rank of a shot group (parallel/slab_layout.h) builds only its z-slab's arrays:
    // slab `slab` of `slabs`. Its host memory is then its share of the shot, as its
    // GPU's is, so a shot larger than one node's share of memory per rank still runs.
    // 1: every plane (see Domain::holds_all).
    int slabs = 1, slab = 0;
};

// SEG-Y coordinates are often in centimetres, and world <-> grid conversions round:
// points this close (metres) outside a model count as on its edge.
constexpr double kPositionTolerance = 0.02;

// Where a point source or receiver touches the padded grid: windowed-sinc weights
// (Hicks 2002), folded antisymmetrically about a free surface so that injection and
// sampling stay each other's transpose.
struct PointStencil {
    std::vector<long> index;     // into padded arrays
    std::vector<double> weight;
};

// Pseudo-acoustic VTI/TTI coefficients on the padded grid, in the form the TTI kernels
// read (physics/anisotropy.h: W = (v dt)^2 [[1 + 2 eps, b], [b, 1]], n the symmetry axis).
// Absorbing layers take the values of the nearest window point, as vdt2.
struct TtiCoefficients {
    bool tilted = false;              // TTI (rotated operator) or VTI (compact operator)
    UninitVector<double> cpp, cpq;    // (v dt)^2 (1 + 2 eps), (v dt)^2 b; W_qq is vdt2()
    UninitVector<double> axis[3];     // n_x, n_y, n_z (TTI only)
};

class Domain {
public:
    // window: the physical grid (local coordinates: x = ix dx, y = iy dy, z = z0 + iz dz);
    // vp: its velocities (window.size() values, m/s); extra: anisotropy volumes on the
    // window (none: isotropic). An anisotropic domain needs damping layers (C-PML is not
    // proven stable for it: refused).
    Domain(const Grid& window, const std::vector<float>& vp, const DomainOptions& opt,
           const AnisotropyFields& extra = {});

    // The box a domain of `window` with these layers propagates on (its computed points;
    // padded_size() is what its arrays hold): what the constructor takes, and what a plan
    // counts before any domain is built, so that the two agree.
    static kernels::Box box_of(const Grid& window, int pml_cells, bool free_surface);

    const Grid& window() const { return window_; }
    const kernels::Box& box() const { return box_; }
    double dt() const { return opt_.dt; }
    const DomainOptions& options() const { return opt_; }
    double cell_volume() const;

    // Whether the arrays below cover the whole box. A domain built for slab g of a shot
    // group (DomainOptions::slabs) holds only that slab's: its geometry (box, window,
    // point stencils, band_points) is the whole domain's, and the only use of its arrays
    // is slab(), which a SlabPropagator takes (the backends refuse it otherwise).
    bool holds_all() const { return held_z0_ == 0 && held_z1_ == box_.nz; }
    void require_all(const char* who) const;

    // (v dt)^2 on the padded grid (layers take the velocity of the nearest window point).
    // (The arrays are UninitVector: each value is written once, by the thread that
    // computes it; a 3D domain's arrays are half a GB each.)
    const UninitVector<double>& vdt2() const { return vdt2_; }
    // v^2 on the window's nodes (x fastest), for the imaging conditions.
    const UninitVector<double>& v2() const { return v2_; }
    const CpmlProfile& profile(int axis) const { return prof_[axis]; }
    // 1/h^2 and 1/h per axis in the propagation's precision, as every step kernel reads
    // them (StepArgs, TtiArgs): 0 for y in 2D.
    template <class T>
    void inverse_spacings(T (&inv_h2)[3], T (&inv_h)[3]) const {
        const double h[3] = {window_.dx, window_.dy, window_.dz};
        for (int ax = 0; ax < 3; ++ax) {
            const bool used = box_.ndim == 3 || ax != 1;
            inv_h2[ax] = used ? T(1 / (h[ax] * h[ax])) : T(0);
            inv_h[ax] = used ? T(1 / h[ax]) : T(0);
        }
    }
    // Whether the domain has C-PML layers along `axis` (its profiles held): where the box
    // has them, and on a slab of such a domain even without layer planes of its own
    // (a = 0, b = 1 there). A propagator holds that axis's memory variables where its
    // own box has layers on it (kernels::CpmlMemory: none on a slab between z layers).
    bool cpml(int axis) const { return cpml_[axis]; }
    // Damping k = eta v^2 dt / 2 on the padded grid (empty for C-PML).
    const UninitVector<double>& damping() const { return damp_; }
    // What a unit source density adds to u[n+1] at padded point p: (v dt)^2, divided
    // by (1 + k) where the damping layer is (as the damped update divides everything),
    // which keeps injection the exact transpose of sampling.
    double injection(long p) const { return damp_.empty() ? vdt2_[p] : vdt2_[p] / (1 + damp_[p]); }

    // Stencil of a point at local coordinates (x, y, z) of the window; throws when the
    // point lies outside the window (`what` names it in the message).
    PointStencil point(double x, double y, double z, const std::string& what) const;

    // Padded index of window node (ix, iy, iz).
    long index(int ix, int iy, int iz) const;

    // Padded indices of the window nodes within the update's reach of the window's edge
    // (R; 2 R for a tilted model's rotated operator), in a fixed order
    // (what Propagator::save_band / restore_band move).
    const std::vector<long>& band() const { return band_; }
    // How many nodes the whole domain's band holds (whatever planes are held).
    std::size_t band_points() const;

    bool anisotropic() const { return !tti_.cpp.empty(); }
    const TtiCoefficients& tti() const { return tti_; }

    // The domain of computed planes [z0, z1) of this one: a z-slab (parallel/slab_layout.h)
    // propagated by one rank of a shot group. Its box has z1 - z0 planes, the layer planes
    // inside it (pml_lo[2], pml_hi[2]) and a free surface only at the top (z0 = 0); every
    // padded array is this one's padded planes z0 - R .. z1 + R - 1 (the halo at an inner
    // face will hold the neighbours' planes), the window is the window planes it holds,
    // the z profile the entries of its planes, band() the owned points of this band, in
    // this band's order. Point stencils stay this domain's (see SlabPropagator).
    // [z0, z1) must lie within the planes held.
    Domain slab(int z0, int z1) const;

private:
    Domain() = default;
    void set_anisotropy(const AnisotropyFields& extra, std::size_t nodes);
    // The reach of the update beyond a node: R, or 2 R for the rotated (TTI) operator,
    // a first derivative of first derivatives (docs/anisotropy.md).
    int band_reach() const { return tti_.tilted ? 2 * stencil::R : stencil::R; }
    // The padded arrays hold the held planes and their halos (the box's when all is
    // held): stored_size() entries, whole padded index p at stored(p).
    std::size_t stored_size() const { return std::size_t(held_z1_ - held_z0_ + 2 * stencil::R) * std::size_t(box_.sz()); }
    long stored(long p) const { return p - long(held_z0_) * box_.sz(); }
    // On every core, for every entry of a padded array of the held planes (stored index
    // p): set(p, ix, iy, iz) at a box point, clear(p) at a padding one (beyond the box's
    // rows, columns or planes). Every entry is visited once, by the thread that computes
    // it: the arrays need no zeroing first.
    template <class Set, class Clear>
    void each_stored(Set set, Clear clear) const;
    // The window planes [w0, w1) that computed planes [z0, z1) hold.
    std::pair<int, int> window_planes(int z0, int z1) const;

    Grid window_;
    DomainOptions opt_;
    kernels::Box box_;
    UninitVector<double> vdt2_, v2_;
    CpmlProfile prof_[3];
    bool cpml_[3] = {false, false, false};
    UninitVector<double> damp_;
    std::vector<long> band_;
    TtiCoefficients tti_;
    int held_z0_ = 0, held_z1_ = 0;  // computed planes whose arrays this domain holds
};

// Throws unless `window` has the domain's window's nodes (a device propagator's
// set_born_perturbation: its Born source is formed on the domain's window).
void require_domain_window(const Domain& d, const Grid& window);

}  // namespace rtm
