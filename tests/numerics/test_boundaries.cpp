// Absorbing layers and free surface.
#include <algorithm>
#include <cmath>

#include "simulate.h"
#include "support/catch.hpp"

using namespace rtm;
using namespace rtm::test;

namespace {

double peak(const std::vector<double>& v) {
    double m = 0;
    for (double x : v) m = std::max(m, std::abs(x));
    return m;
}

// Reflection level of the C-PML, dB: a source 15 cells from the right edge of a
// homogeneous model, one receiver 10 cells from it (normal incidence) and one
// nearer the top (oblique); the same positions in a model so large that nothing
// comes back within the record give the reference. Ricker 10 Hz at 2000 m/s:
// h = 10 m is 8 points per shortest wavelength, h = 20 m is 4.
double reflection_db(int ndim, int pml_cells, double h, double t_end) {
    const double v = 2000;
    const int n = ndim == 3 ? 41 : 61;
    Run small;
    small.grid.nx = small.grid.nz = n;
    small.grid.ny = ndim == 3 ? n : 1;
    small.grid.dx = small.grid.dy = small.grid.dz = h;
    small.domain.dt = 0.1 * h / v * 2;
    small.domain.pml_cells = pml_cells;
    small.domain.f_dominant = 10;
    small.nt = int(t_end / small.domain.dt);
    small.velocity = [v](double, double, double) { return v; };
    const double c = (n - 1) / 2 * h, yc = ndim == 3 ? c : 0;
    small.source = {(n - 16) * h, yc, c};
    small.receivers = {{(n - 11) * h, yc, c}, {(n - 6) * h, yc, c - 18 * h}};

    Run big = small;
    const int extra = int(v * t_end / h / 2) + 10;  // waves cannot return within t_end
    big.grid.nx = small.grid.nx + 2 * extra;
    big.grid.nz = small.grid.nz + 2 * extra;
    if (ndim == 3) big.grid.ny = small.grid.ny + 2 * extra;
    const double shift = extra * h;
    big.source = {small.source.x + shift, small.source.y + (ndim == 3 ? shift : 0), small.source.z + shift};
    big.receivers.clear();
    for (auto q : small.receivers) big.receivers.push_back({q.x + shift, q.y + (ndim == 3 ? shift : 0), q.z + shift});

    const auto a = simulate(small), b = simulate(big);
    std::vector<double> diff(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) diff[i] = a[i] - b[i];
    return 20 * std::log10(peak(diff) / peak(b));
}

}  // namespace

TEST_CASE("the C-PML reflects at least 40 dB below the incident wave in 2D") {
    const double db = reflection_db(2, 20, 10, 0.8);
    WARN("2D C-PML reflection with 20 cells: " << db << " dB");
    CHECK(db < -40);
}

TEST_CASE("without absorbing layers the same measurement sees the edge reflection") {
    // Guards the measurement itself: a reflection level can only be trusted if the
    // set-up can see one.
    const double db = reflection_db(2, 0, 10, 0.8);
    WARN("2D reflection without layers: " << db << " dB");
    CHECK(db > -10);
}

TEST_CASE("the C-PML reflects at least 40 dB below the incident wave in 3D") {
    const double db = reflection_db(3, 20, 20, 0.5);
    WARN("3D C-PML reflection with 20 cells: " << db << " dB");
    CHECK(db < -40);
}

TEST_CASE("a free surface reflects with reversed polarity and full amplitude") {
    // A source 100 m deep under a free surface: the ghost is the mirror source with
    // opposite sign, so a receiver at the source's depth 400 m away sees the direct
    // wave plus minus itself delayed: compare with two sources in a full space.
    Run fs;
    fs.grid.nx = 161;
    fs.grid.nz = 81;
    fs.grid.dx = fs.grid.dz = 10;
    fs.domain.dt = 0.001;
    fs.domain.pml_cells = 20;
    fs.domain.free_surface = true;
    fs.nt = 500;
    fs.source = {400, 0, 100};
    fs.receivers = {{800, 0, 100}};
    const auto a = simulate(fs);

    // The image method in a full space: same geometry shifted down by 400 m with a
    // negated source at the mirror position (-100 m relative to the surface).
    Run full = fs;
    full.domain.free_surface = false;
    full.grid.nz = 161;
    full.grid.z0 = -400;
    auto direct = simulate(full);
    Run mirror = full;
    mirror.source.z = -100;
    auto ghost = simulate(mirror);
    std::vector<double> expect(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) expect[i] = direct[i] - ghost[i];
    const double err = rel_l2(a.data(), expect.data(), a.size());
    WARN("free surface against the image method: relative L2 " << err);
    CHECK(err < 0.01);
}
