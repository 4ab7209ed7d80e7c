#pragma once
// Shared helpers of the GPU tests: the visible skip, seeded random fields, and the
// relative L2 error with the position of the largest difference.
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/grid.h"
#include "kernels/step_args.h"
#include "propagation/backend.h"
#include "support/catch.hpp"
#include "support/skip.h"

namespace rtm {
// Defined by the CUDA backend (cuda_propagator.cu): how many of a CUDA propagator's
// kept snapshots are in device memory and how many in pinned host memory.
std::pair<std::size_t, std::size_t> cuda_kept_where(const Propagator& p);
// Where a CUDA propagator's band history is (0 none, 1 device memory, 2 pinned host
// memory) and the allocation's address.
std::pair<int, const void*> cuda_bands_where(const Propagator& p);
// Where a CUDA propagator's checkpoint states are (0 none, 1 device memory, 2 pinned host memory).
int cuda_states_where(const Propagator& p);
}  // namespace rtm

namespace rtm::test {

// Relative L2 bound on the difference between two implementations of N leapfrog steps
// that round differently (CUDA and its CPU twin: another summation order, FMA
// contraction). Each update rounds about 30 operations (the 3D 8th-order Laplacian's 25
// terms, the update, the C-PML terms), each within 2^-p of the partial sums, which are
// of the field's size (vdt2 * sum|c| / h^2 <= 4 by stability): rms 2^-p / sqrt(3) each.
// The two implementations round independently, and from step to step, and leapfrog
// carries old errors along unamplified (it is neutral), so the difference grows like a
// random walk: sqrt(2 * 30 * N) 2^-p / sqrt(3). Three times that for a bound (it also
// covers the slow low-wavenumber part of white rounding noise, which leapfrog grows
// linearly over the steps): sqrt(180 N) 2^-p, e.g. 8.0e-6 (fp32) and 1.5e-14 (fp64)
// at N = 100.
// The unit roundoff of a precision: 2^-24 (fp32), 2^-53 (fp64).
inline double unit_roundoff(Precision prec) { return std::ldexp(1.0, prec == Precision::Single ? -24 : -53); }
template <class T>
double unit_roundoff() {
    return unit_roundoff(sizeof(T) == 4 ? Precision::Single : Precision::Double);
}

inline double twin_bound(int steps, Precision prec) { return std::sqrt(180.0 * steps) * unit_roundoff(prec); }

// The VTI/TTI twins' bound after N steps of K roundings a point each (derived in
// test_tti.cpp): 3 sqrt(N) K u, u the precision's unit roundoff.
inline double tti_bound(int steps, int K, double u) { return 3 * std::sqrt(double(steps)) * K * u; }

// A Born perturbation on grid g: a Gaussian blob of slowness squared (2e-8 s^2/m^2 at
// its centre), 60 m wide, at 200 m depth below the grid's middle.
inline Volume blob_perturbation(const Grid& g) {
    Volume dm(g);
    for (int iz = 0; iz < g.nz; ++iz)
        for (int iy = 0; iy < g.ny; ++iy)
            for (int ix = 0; ix < g.nx; ++ix) {
                const double dx = (ix - g.nx / 2) * g.dx, dy = (iy - g.ny / 2) * g.dy, dz = iz * g.dz - 200;
                dm.at(ix, iy, iz) = float(2e-8 * std::exp(-(dx * dx + dy * dy + dz * dz) / (2 * 60.0 * 60.0)));
            }
    return dm;
}

// Sets RTM_KEEP_HEADROOM_GB for the scope (e.g. 1e9 GB: a CUDA propagator's snapshots,
// band history and states go to pinned host memory; nullptr: unchanged).
struct Headroom {
    explicit Headroom(const char* gb) {
        if (gb) setenv("RTM_KEEP_HEADROOM_GB", gb, 1);
    }
    ~Headroom() { unsetenv("RTM_KEEP_HEADROOM_GB"); }
};

// True when a CUDA device can be used; otherwise a visible skip (support/skip.h).
inline bool gpu_or_skip() {
    std::string why;
    if (cuda_device_available(&why)) return true;
    skip(why);
    return false;
}

struct Diff {
    double rel = 0;        // ||a - b|| / ||b||
    double max_abs = 0;    // largest |a - b|
    long where = -1;       // its index
    std::string at;        // its position, for the failure message
};

// Over padded arrays of `box` (halo included: a stray write there shows up too), or
// over a batch of them one after another (StepArgs::batch; the position names the member).
template <class A, class B>
Diff compare(const kernels::Box& box, const std::vector<A>& a, const std::vector<B>& b) {
    Diff d;
    double num = 0, den = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const double x = double(a[i]), y = double(b[i]), e = std::abs(x - y);
        num += (x - y) * (x - y);
        den += y * y;
        if (e > d.max_abs || std::isnan(e)) {
            d.max_abs = e;
            d.where = long(i);
        }
    }
    d.rel = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
    if (d.where >= 0) {
        const long hy = box.ndim == 3 ? 4 : 0;
        const long member = d.where / long(box.padded_size()), p = d.where % long(box.padded_size());
        const long iz = p / box.sz() - 4, rem = p % box.sz();
        const long iy = rem / box.sy() - hy, ix = rem % box.sy() - 4;
        char buf[220];
        std::snprintf(buf, sizeof buf,
                      "largest error %.3g at (ix, iy, iz) = (%ld, %ld, %ld) of batch member %ld: %.9g vs %.9g",
                      d.max_abs, ix, iy, iz, member, double(a[d.where]), double(b[d.where]));
        d.at = buf;
    }
    return d;
}

// Random values in [lo, hi) on the computed points of a padded array (of `batch` of
// them one after another), zero halo.
template <class T>
std::vector<T> random_field(const kernels::Box& box, std::mt19937& rng, double lo, double hi, int batch = 1) {
    const std::size_t n = box.padded_size();
    std::vector<T> f(n * batch, T(0));
    std::uniform_real_distribution<double> d(lo, hi);
    for (int m = 0; m < batch; ++m)
        for (int iz = 0; iz < box.nz; ++iz)
            for (int iy = 0; iy < box.ny; ++iy)
                for (int ix = 0; ix < box.nx; ++ix) f[m * n + box.at(ix, iy, iz)] = T(d(rng));
    return f;
}

}  // namespace rtm::test
