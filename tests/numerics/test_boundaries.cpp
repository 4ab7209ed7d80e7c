// Absorbing layers and free surface.
#include <cmath>
#include <complex>

#include "physics/cpml.h"
#include "simulate.h"
#include "support/catch.hpp"

using namespace rtm;
using namespace rtm::test;

namespace {

double norm(const double* x, std::size_t n) {
    double s = 0;
    for (std::size_t i = 0; i < n; ++i) s += x[i] * x[i];
    return std::sqrt(s);
}

// The reflection of one face of the C-PML, measured against the wave it reflects.
// Homogeneous 2000 m/s, Ricker 10 Hz, spacing h, Courant number 0.2. The face under
// test is the window's right edge x_e; its layer of L = cells x h lies beyond it and
// ends at a rigid wall (the zero halo, x_w = x_e + (cells + 1) h). The source is 15
// cells in front of the face, one receiver 10 cells in front on the source's line
// (normal incidence) and one 20 cells to the side (oblique). Two runs:
//   near: the window ends at x_e; every other edge is so far that nothing comes back
//         from it within the record;
//   far:  the same with the right edge moved that far too.
// near - far is all the face sends back: what the layer's discretisation reflects at
// once and what comes back from the wall, damped there and back. The record lasts until
// the latter has passed. It is measured against far's trace at the receiver's mirror
// image across the wall: the wave that would arrive had the layer been lossless and
// the wall reflected everything, with the same path length, spreading and angle.
struct Face {
    double measured[2];  // ||reflected|| / ||incident||: normal, oblique
    double theory[2];    // the same from the profile's reflection coefficient
    double cos_theta[2];  // of the path via the wall
};

// The continuous layer's reflection coefficient for a plane wave (Pasalic & McGarry's
// stretching s = 1 + d / (alpha + i w) along x): there and back through the layer,
// |R(w)| = exp(-(2 cos(theta) / v) int_0^L d(x) w^2 / (w^2 + alpha(x)^2) dx) (the wave
// in the layer is exp(-i k cos(theta) int s dx); the rigid outer end reflects totally).
// d and alpha are read back from the profile rtm uses (b = exp(-(d + alpha) dt),
// a = d (b - 1) / (d + alpha)) and integrated by the trapezoid rule over its nodes
// (d = 0 at the face). For rtm's quadratic profile with Rc = 1e-5 and alpha0 = pi f_dominant
// this is -97.7 dB at 10 Hz, -92 dB at 5 Hz, -73 dB at 2 Hz (the frequency shift
// weakens the absorption of frequencies below alpha0). The wavelet's band is weighted by
// the incident trace's spectrum I(w): R = sqrt(sum |R(w)|^2 |I(w)|^2 / sum |I(w)|^2).
double theory(const std::vector<double>& incident, double dt, int cells, double h, double v, double f_dominant,
              double cos_theta) {
    if (cells == 0) return 1;
    const auto p = cpml_profile(cells + 1, 0, cells, h, dt, v, f_dominant);
    std::vector<double> d(cells + 1), alpha(cells + 1);
    for (int k = 1; k <= cells; ++k) {
        const double da = -std::log(p.b[k]) / dt;  // d + alpha
        d[k] = p.a[k] * da / (p.b[k] - 1);
        alpha[k] = da - d[k];
    }
    const std::size_t n = incident.size();
    double num = 0, den = 0;
    for (std::size_t j = 1; j < n / 2; ++j) {
        const double w = 2 * M_PI * double(j) / (double(n) * dt);
        std::complex<double> I = 0;
        for (std::size_t i = 0; i < n; ++i) I += incident[i] * std::polar(1.0, -w * double(i) * dt);
        double integral = 0;
        for (int k = 1; k <= cells; ++k) {
            auto g = [&](int q) { return d[q] * w * w / (w * w + alpha[q] * alpha[q]); };
            integral += 0.5 * (g(k - 1) + g(k)) * h;
        }
        const double R = std::exp(-2 * cos_theta / v * integral);
        num += R * R * std::norm(I);
        den += std::norm(I);
    }
    return std::sqrt(num / den);
}

Face face_reflection(int ndim, int cells, double h) {
    const double v = 2000, f0 = 10;
    const double wall = (cells + 1) * h;          // from the face
    const double X = 25 * h + 2 * wall, Z = 20 * h;  // the paths via the wall, along and across x
    const double t_end = std::hypot(X, Z) / v + 0.35;  // the Ricker lasts 3 / f0 = 0.3 s
    const int m = int(v * t_end / h / 2) + 10;  // margin: waves cannot return from it within t_end
    Run near;
    near.grid.nx = m + 16;
    near.grid.nz = 2 * m + 21;
    near.grid.ny = ndim == 3 ? 2 * m + 1 : 1;
    near.grid.dx = near.grid.dy = near.grid.dz = h;
    near.domain.dt = 0.2 * h / v;
    near.domain.pml_cells = cells;
    near.domain.f_dominant = f0;
    near.nt = int(std::lround(t_end / near.domain.dt));
    near.f0 = f0;
    const double xe = (near.grid.nx - 1) * h, y = ndim == 3 ? m * h : 0, z = (m + 20) * h;
    near.source = {xe - 15 * h, y, z};
    near.receivers = {{xe - 10 * h, y, z}, {xe - 10 * h, y, z - Z}};
    Run far = near;
    far.grid.nx += m;
    // far's traces: the direct wave at near's receivers (it cancels in near - far) and
    // the incident wave at their mirror images across the wall.
    far.receivers.push_back({xe + 2 * wall + 10 * h, y, z});
    far.receivers.push_back({xe + 2 * wall + 10 * h, y, z - Z});
    const auto a = simulate(near), b = simulate(far);

    Face f;
    const std::size_t nt = std::size_t(near.nt);
    f.cos_theta[0] = 1;
    f.cos_theta[1] = X / std::hypot(X, Z);
    for (int k = 0; k < 2; ++k) {
        std::vector<double> refl(nt), inc(b.begin() + (k + 2) * nt, b.begin() + (k + 3) * nt);
        for (std::size_t i = 0; i < nt; ++i) refl[i] = a[k * nt + i] - b[k * nt + i];
        f.measured[k] = norm(refl.data(), nt) / norm(inc.data(), nt);
        f.theory[k] = theory(inc, near.domain.dt, cells, h, v, f0, f.cos_theta[k]);
    }
    return f;
}

double db(double r) { return 20 * std::log10(r); }

// The bound: what the continuous layer's theory gives (above), with 6 dB for the
// discretisation (the profile sampled on the grid, the recursive convolution's
// time stepping): measured <= 2 x theory. The discrete layers measure 3 to 16 dB
// below the theory here; the lower bound, theory / 10, only guards the measurement
// (a record too short to hold the wall's return measures 20 dB and more below it).
void check_face(const Face& f, const char* what) {
    WARN(what << ": reflected / incident " << db(f.measured[0]) << " dB normal (theory " << db(f.theory[0]) << " dB), "
              << db(f.measured[1]) << " dB oblique (cos " << f.cos_theta[1] << "; theory " << db(f.theory[1])
              << " dB)");
    for (int k = 0; k < 2; ++k) {
        CHECK(f.measured[k] <= 2 * f.theory[k]);
        CHECK(f.measured[k] >= 0.1 * f.theory[k]);
    }
}

}  // namespace

TEST_CASE("the C-PML reflects no more than its profile's theory predicts, normal and oblique incidence (2D)") {
    check_face(face_reflection(2, 20, 10), "2D C-PML, 20 cells at h = 10 m");
}

TEST_CASE("without absorbing layers the same measurement sees the whole edge reflection") {
    // Guards the measurement itself: a rigid edge reflects everything (theory: 1).
    const Face f = face_reflection(2, 0, 10);
    WARN("2D reflection without layers: " << db(f.measured[0]) << " dB normal, " << db(f.measured[1]) << " dB oblique");
    CHECK(f.measured[0] > 0.5);
    CHECK(f.measured[1] > 0.5);
}

TEST_CASE("the C-PML reflects no more than its profile's theory predicts, normal and oblique incidence (3D)") {
    check_face(face_reflection(3, 10, 20), "3D C-PML, 10 cells at h = 20 m");
}

TEST_CASE("a free surface equals the antisymmetric image source in a full space, to rounding") {
    // The free surface sets p = 0 on the surface nodes and p(-z) = -p(z) above them,
    // which is exactly what a full space holds when it is mirror-symmetric about the
    // surface and driven by the source and a negated mirror source. The full space
    // here spans -800 .. 800 m around the surface (the free-surface window spans 0 ..
    // 800 m), so even the layers' reflections mirror: the traces agree at every time.
    // In exact arithmetic the traces are equal; in double precision the two runs round
    // differently where their operations differ (the receivers' stencils folded at the
    // surface against sampled above it, the kernel's rows of another length): at most
    // independent roundings of the ~30 operations of every update, growing like a
    // random walk over the N = 500 steps, sqrt(30 N) 2^-53 / sqrt(3) = 7.9e-15; three
    // times that for a bound: sqrt(90 N) 2^-53 = 2.4e-14.
    Run fs;
    fs.grid.nx = 161;
    fs.grid.nz = 81;
    fs.grid.dx = fs.grid.dz = 10;
    fs.domain.dt = 0.001;
    fs.domain.pml_cells = 20;
    fs.domain.free_surface = true;
    fs.nt = 500;
    fs.source = {400, 0, 103.7};  // off the grid: its stencil, and the mirror's, spread over 8 x 8 nodes
    fs.receivers = {{800.0, 0, 100.0}, {1203.1, 0, 17.9}, {600.0, 0, 412.6}};
    const auto a = simulate(fs);

    Run full = fs;
    full.domain.free_surface = false;
    full.grid.nz = 161;
    full.grid.z0 = -800;
    full.mirror_source = {fs.source.x, 0, -fs.source.z};
    const auto b = simulate(full);
    const double err = rel_l2(a.data(), b.data(), a.size());
    WARN("free surface against the antisymmetric full space: relative L2 " << err);
    CHECK(err <= std::sqrt(90.0 * fs.nt) * std::ldexp(1.0, -53));
}

