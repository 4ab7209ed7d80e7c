// Reverse-time migration: adjointness, source-wavefield reconstruction, and images
// of known structures.
#include <cmath>
#include <random>

#include "imaging/stack.h"
#include "born_dot_test.h"
#include "migration_fixture.h"
#include "simulate.h"
#include "support/catch.hpp"

using namespace rtm;
using namespace rtm::test;

namespace {

// The 2D dot-product test (born_dot_test.h) with the record interval equal to the step:
// no resampling in either direction.
DotTest dot_test(Precision prec, SourceStorage storage, bool d_is_Fdm = false) {
    PropagationOptions p;
    p.precision = prec;
    p.dt = 0.001;
    return born_dot_test(2, 0.001, p, storage, d_is_Fdm);
}

}  // namespace

TEST_CASE("migration is the exact adjoint of Born modelling to the rounding of its fp32 traces (dot-product test)") {
    const DotTest snap = dot_test(Precision::Double, SourceStorage::Snapshots);
    const DotTest band = dot_test(Precision::Double, SourceStorage::Boundary);
    const DotTest single = dot_test(Precision::Single, SourceStorage::Snapshots);
    const DotTest self = dot_test(Precision::Double, SourceStorage::Snapshots, true);
    // Rounding within +- 2^-p of a value: rms 2^-p / sqrt(3); three rms for a bound.
    const double u32 = std::ldexp(1.0, -24), u64 = std::ldexp(1.0, -53), r32 = 3 * u32 / std::sqrt(3.0);
    // Double precision with snapshots (kept in double): F and F^T are exact transposes,
    // so what is left is the fp32 storage of the Born traces F dm (a ShotGather holds
    // floats), each sample rounded independently: 3 2^-24 / sqrt(3) rms_lhs; the double
    // arithmetic adds at most N 2^-53 kappa on either side.
    auto b_fp32_traces = [&](const DotTest& t) {
        return r32 * t.rms_lhs + t.steps * u64 * (t.kappa_lhs + t.kappa_rhs);
    };
    const double b_snap = b_fp32_traces(snap);
    // d = F dm: the same, without cancellation on the left (rms_lhs <= 1).
    const double b_self = b_fp32_traces(self);
    // The band is kept in fp32: the rebuilt source wavefield carries the band's rounding,
    // re-injected at the window's edge every step and accumulating inwards at most like
    // a random walk, sqrt(N) 2^-24 relative (the reconstruction test below measures
    // 2.4e-8 after 600 steps); it enters the right sum through rms_rhs.
    const double b_band = b_fp32_traces(band) + std::sqrt(double(band.steps)) * u32 * band.rms_rhs;
    // fp32 arithmetic: each operator's output carries the rounding of ~30 operations per
    // update and step, independent from step to step: relative sqrt(30 N) 2^-24 / sqrt(3)
    // (a random walk), three times that for a bound, in each sum.
    const double e32 = std::sqrt(30.0 * single.steps) * r32;
    const double b_single = e32 * (single.rms_lhs + single.rms_rhs) + b_fp32_traces(single);
    WARN("dot-product mismatch (bound; rms lhs, rhs): double snapshots " << snap.mismatch() << " (" << b_snap << "; "
         << snap.rms_lhs << ", " << snap.rms_rhs << "), d = F dm " << self.mismatch() << " (" << b_self
         << "), rebuilt from the band " << band.mismatch() << " (" << b_band << "), single " << single.mismatch() << " ("
         << b_single << "), " << snap.steps << " steps");
    CHECK(snap.mismatch() <= b_snap);
    CHECK(self.mismatch() <= b_self);
    CHECK(band.mismatch() <= b_band);
    CHECK(single.mismatch() <= b_single);
}

TEST_CASE("a source wavefield rebuilt from the saved band matches the forward one to rounding") {
    for (Precision prec : {Precision::Double, Precision::Single}) {
        Run r;
        r.grid.nx = 101;
        r.grid.nz = 81;
        r.grid.dx = r.grid.dz = 10;
        r.velocity = [](double x, double, double z) { return 1700 + z + (z > 500 ? 600 : 0) + 50 * std::cos(x / 60); };
        r.domain.boundary = Boundary::Damping;
        r.domain.pml_cells = 20;
        r.domain.dt = 0.001;
        r.domain.f_dominant = 15;
        const int N = 600;
        Domain d(r.grid, velocity_field(r), r.domain);
        auto p = make_cpu_propagator(d, prec);
        const auto w = ricker(15, r.domain.dt, N);
        p->set_sources({d.point(487.3, 0, 203.1, "source")}, {std::vector<double>(w.begin(), w.end())});
        p->set_receivers({}, N);
        const double worst = band_rebuild_error(*p, N, 100);
        WARN((prec == Precision::Double ? "double" : "single") << ": worst relative L2 of the rebuilt wavefield " << worst);
        // Leapfrog run backwards is stable (neutral): independent roundings add up like
        // a random walk. fp32: ~30 roundings per update and step, each within 2^-24
        // (rms 2^-24 / sqrt(3)): sqrt(30 N) 2^-24 / sqrt(3) = 4.6e-6 over the N = 600
        // steps, three times that for a bound: 1.4e-5. Double: the arithmetic's rounding
        // is 2^-29 smaller; what is left is the fp32 band re-injected at the window's
        // edge every step, within 2^-24 of the forward field there: at most
        // sqrt(N) 2^-24 = 1.5e-6.
        const double u32 = std::ldexp(1.0, -24);
        const double bound = prec == Precision::Single ? 3 * std::sqrt(30.0 * N) * u32 / std::sqrt(3.0)
                                                       : std::sqrt(double(N)) * u32;
        CHECK(worst <= bound);
    }
}

TEST_CASE("a flat reflector is imaged within one cell of its depth (2D)") {
    // 5 m cells, Ricker 10 Hz: the image's vertical wavelength v / 2f0 = 100 m spans 20
    // cells, so a 90-degree phase error would move the peak by 5 cells.
    const auto truth = make_model(241, 1, 141, 5, [](double, double, double z) { return z < 400 ? 2000 : 2600; });
    const auto smooth = make_model(241, 1, 141, 5, [](double, double, double) { return 2000; });
    PropagationOptions p;
    const Wavelet w = ricker_wavelet(10);
    imaging::Stack stack(truth.grid());
    MigrationOptions opt;
    opt.aperture = -1;
    for (double xs : {400.0, 800.0}) {
        const auto d = reflections(truth, smooth, shot_geometry(truth, xs, 0, 10, 0.7, 0.002), w, p);
        const auto s = migrate_shot(smooth, d, w, opt);
        stack.add(s.window.grid, s.window.ix0, s.window.iy0, s.image.data(), s.illumination.data());
    }
    const Volume img = imaging::final_image(stack, {});
    // The discrete interface lies between the nodes at 395 and 400 m. Columns between
    // and beside the sources (right under one, zero offset, the near field moves the peak
    // by about a cell more).
    for (int ix : {60, 120, 180}) {
        const double z = peak_depth(img, ix, 0, 30);
        INFO("column " << ix << ": peak at " << z << " m");
        CHECK(std::abs(z - 397.5) <= 5);
    }
}

TEST_CASE("a flat reflector is imaged within one cell of its depth (3D)") {
    const auto truth = make_model(41, 41, 36, 20, [](double, double, double z) { return z < 400 ? 2000 : 2600; });
    const auto smooth = make_model(41, 41, 36, 20, [](double, double, double) { return 2000; });
    PropagationOptions p;
    const Wavelet w = ricker_wavelet(10);
    const auto d = reflections(truth, smooth, shot_geometry(truth, 400, 400, 40, 0.7, 0.004), w, p);
    MigrationOptions opt;
    opt.aperture = -1;
    const auto s = migrate_shot(smooth, d, w, opt);
    imaging::Stack stack(truth.grid());
    stack.add(s.window.grid, s.window.ix0, s.window.iy0, s.image.data(), s.illumination.data());
    const Volume img = imaging::final_image(stack, {});
    // The discrete interface lies between the nodes at 380 and 400 m.
    for (int c : {15, 20, 25}) {
        const double z = peak_depth(img, c, 20, 8);
        INFO("column (" << c << ", 20): peak at " << z << " m");
        CHECK(std::abs(z - 390) <= 20);
    }
}

TEST_CASE("a point scatterer is focused within one cell of where it is") {
    const auto m = make_model(101, 1, 61, 10, [](double, double, double) { return 2000; });
    Volume dm(m.grid());
    const int sx = 55, sz = 35;
    dm.at(sx, 0, sz) = 1e-8f;
    const Wavelet w = ricker_wavelet(15);
    MigrationOptions opt;
    opt.aperture = -1;
    imaging::Stack stack(m.grid());
    for (double xs : {250.0, 500.0, 750.0}) {
        const auto d = born_shot(m, dm, shot_geometry(m, xs, 0, 10, 0.6, 0.002), w, opt);
        const auto s = migrate_shot(m, d, w, opt);
        stack.add(s.window.grid, s.window.ix0, s.window.iy0, s.image.data(), s.illumination.data());
    }
    const Volume img = imaging::final_image(stack, {});
    int bx = 0, bz = 0;
    for (int iz = 5; iz < m.grid().nz; ++iz)
        for (int ix = 0; ix < m.grid().nx; ++ix)
            if (std::abs(img.at(ix, 0, iz)) > std::abs(img.at(bx, 0, bz))) {
                bx = ix;
                bz = iz;
            }
    INFO("image peak at node (" << bx << ", " << bz << "), scatterer at (" << sx << ", " << sz << ")");
    CHECK(std::abs(bx - sx) <= 1);
    CHECK(std::abs(bz - sz) <= 1);
}

TEST_CASE("both ways of keeping the source wavefield, and bf16 snapshots, give the same image to their rounding") {
    const auto m = make_model(81, 1, 51, 10, [](double x, double, double z) { return 1800 + z + 40 * std::sin(x / 70); });
    Volume dm(m.grid());
    dm.at(40, 0, 30) = 1e-8f;
    dm.at(25, 0, 20) = -1e-8f;
    const Wavelet w = ricker_wavelet(15);
    MigrationOptions opt;
    opt.aperture = -1;
    const auto d = born_shot(m, dm, shot_geometry(m, 400, 0, 10, 0.5, 0.002), w, opt);
    opt.storage = SourceStorage::Snapshots;
    const auto snap = migrate_shot(m, d, w, opt);
    opt.storage = SourceStorage::Boundary;
    const auto band = migrate_shot(m, d, w, opt);
    opt.storage = SourceStorage::Snapshots;
    opt.bf16_snapshots = true;
    const auto half = migrate_shot(m, d, w, opt);
    const double e_band = rel_l2(band.image.data(), snap.image.data(), snap.image.size());
    const double e_half = rel_l2(half.image.data(), snap.image.data(), snap.image.size());
    WARN("image from the rebuilt source wavefield vs snapshots: " << e_band << " (" << band.steps
                                                                  << " steps); bf16 snapshots: " << e_half);
    CHECK(snap.storage == SourceStorage::Snapshots);
    CHECK(band.storage == SourceStorage::Boundary);
    // The image is a sum over imaging steps of source x receiver wavefield products, so a
    // relative error eps of the source wavefield that is independent between steps and
    // points moves it by at most eps in relative L2 where the products add without
    // cancellation (and by less where several steps add up coherently).
    // Rebuilt from the fp32 band (double arithmetic): eps <= sqrt(N) 2^-24 (see the
    // reconstruction test). bf16 keeps 8 significant bits (7 stored) rounded to nearest:
    // each value within 2^-8 of itself, uniformly, so a field's relative L2 rounding is
    // between 2^-8 / sqrt(12) = 1.1e-3 and 2^-8 / sqrt(3) = 2.3e-3 (its mantissas at the
    // top or the bottom of their binades): eps <= 2.3e-3.
    const double u32 = std::ldexp(1.0, -24);
    CHECK(e_band <= std::sqrt(double(band.steps)) * u32);
    CHECK(e_half <= std::ldexp(1.0, -8) / std::sqrt(3.0));
}

TEST_CASE("the inverse-scattering condition suppresses the backscatter of a sharp migration model") {
    // Migrating with a sharp velocity contrast, cross-correlation also images the
    // source and receiver wavefields reflected at it travelling together: a smooth,
    // low-wavenumber smear above the interface. The energy-norm condition cancels it
    // (its kernel vanishes for waves travelling in the same direction).
    const auto truth = make_model(161, 1, 81, 5, [](double, double, double z) { return z < 250 ? 2000 : 3500; });
    const auto background = make_model(161, 1, 81, 5, [](double, double, double) { return 2000; });
    const Wavelet w = ricker_wavelet(15);
    const auto d = reflections(truth, background, shot_geometry(truth, 400, 0, 5, 0.5, 0.001), w, {});
    MigrationOptions opt;
    opt.aperture = -1;
    auto ratio = [&](ImagingCondition c) {
        opt.condition = c;
        const auto s = migrate_shot(truth, d, w, opt);
        const Grid& g = s.window.grid;
        // Low wavenumbers: a running mean over one image wavelength (v / 2 f0 = 67 m).
        const int half = 7;
        double above = 0, at = 0;
        for (int ix = 40; ix <= 120; ++ix)
            for (int iz = half; iz + half < g.nz; ++iz) {
                double low = 0;
                for (int k = -half; k <= half; ++k) low += s.image[g.index(ix, 0, iz + k)];
                low /= 2 * half + 1;
                const double v = s.image[g.index(ix, 0, iz)];
                const double z = iz * g.dz;
                if (z >= 60 && z <= 190) above += low * low;     // between the spread and the reflector
                else if (std::abs(z - 250) <= 25) at += v * v;    // the reflector itself
            }
        return above / at;
    };
    const double xc = ratio(ImagingCondition::CrossCorrelation);
    const double is = ratio(ImagingCondition::InverseScattering);
    WARN("low-wavenumber energy above the reflector / energy at it: cross-correlation " << xc
                                                                                        << ", inverse scattering " << is);
    // The energy-norm kernel weights a pair of waves by (1 - cos theta), theta the angle
    // between their directions, where cross-correlation weights them by 1: the reflector
    // (theta near 180 degrees) doubles, backscatter pairs (travelling together, theta up
    // to ~40 degrees over this spread) fall to at most 1 - cos 40 = 0.23 in amplitude.
    // Relative to the reflector that is a factor of 4 or more in energy.
    CHECK(is < 0.25 * xc);
}

TEST_CASE("the cross-correlation image and the illumination do not depend on the record interval") {
    // The same reflections recorded at 2 ms and at 4 ms (a 15 Hz Ricker, f_max 37.5 Hz:
    // both intervals sample it), migrated over the same 1 ms step.
    const Model truth = make_model(81, 1, 51, 10, [](double, double, double z) { return z < 300 ? 1800 : 2400; });
    const Model smooth = make_model(81, 1, 51, 10, [](double, double, double) { return 1800; });
    const Wavelet w = ricker_wavelet(15);
    PropagationOptions p;
    p.dt = 0.001;
    MigrationOptions opt;
    opt.aperture = -1;
    opt.propagation = p;
    ShotMigration img[2];
    for (int i = 0; i < 2; ++i) {
        const double record_dt = i == 0 ? 0.002 : 0.004;
        const ShotGather d = reflections(truth, smooth, shot_geometry(truth, 403.7, 0, 20, 0.6, record_dt), w, p);
        img[i] = migrate_shot(smooth, d, w, opt);
    }
    REQUIRE(img[0].steps == img[1].steps);
    // The illumination is the source wavefield's alone: the same computation, bit for bit.
    CHECK(img[0].illumination == img[1].illumination);
    // The images differ by what the two record intervals carry differently: the
    // resampler's pass band (Kaiser-windowed sinc, beta 6: ripple and side lobes near
    // -60 dB, 1e-3 relative) applied twice on each side (record to step in modelling
    // and migration), so at most 4e-3 relative L2; a lost factor record dt / step dt
    // would be 1 (100%).
    double num = 0, den = 0;
    for (std::size_t i = 0; i < img[0].image.size(); ++i) {
        num += (img[1].image[i] - img[0].image[i]) * (img[1].image[i] - img[0].image[i]);
        den += img[0].image[i] * img[0].image[i];
    }
    const double rel = std::sqrt(num / den);
    INFO("relative L2 between the 2 ms and 4 ms images: " << rel);
    CHECK(den > 0);
    CHECK(rel <= 4e-3);
}

TEST_CASE("the top mute zeroes the image above its depth and rises as a half cosine over its taper, and without it nothing "
          "is tapered") {
    // A stack of ones on 3 x 1 x 20 nodes at 10 m, no normalisation or Laplacian: the
    // final image is the mute's weight, w(z) = 0 above the mute, 0.5 - 0.5 cos(pi (z -
    // mute) / taper) below it, 1 from mute + taper down. (Until 2026-11-23 a taper with
    // no mute, the default 50 m, tapered the top 50 m of every image.)
    Grid g;
    g.nx = 3, g.nz = 20, g.dx = g.dz = 10;
    imaging::Stack stack(g);
    const std::vector<double> ones(g.size(), 1.0);
    stack.add(g, 0, 0, ones.data(), ones.data());
    imaging::PostProcessing pp;
    pp.normalise = pp.laplacian = false;
    pp.top_mute = 0;
    pp.top_taper = 50;
    const Volume none = imaging::final_image(stack, pp);
    for (float x : none.data) CHECK(x == 1.0f);
    pp.top_mute = 40;
    const Volume muted = imaging::final_image(stack, pp);
    for (int iz = 0; iz < g.nz; ++iz) {
        const double z = iz * g.dz;
        const double w = z <= 40 ? 0 : z >= 90 ? 1 : 0.5 - 0.5 * std::cos(M_PI * (z - 40) / 50);
        INFO("z " << z);
        CHECK(muted.at(1, 0, iz) == Approx(w).margin(1e-7));  // float of a double weight: 6e-8
    }
}
