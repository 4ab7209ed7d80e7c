#pragma once
// Small models, shots and migrations for the migration tests.
#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

#include "physics/wavelet.h"
#include "pipeline/acquisition.h"
#include "pipeline/migration.h"
#include "support/test_data.h"

namespace rtm::test {

inline Model make_model(int nx, int ny, int nz, double h, const std::function<double(double, double, double)>& v) {
    Model m;
    m.vp = Volume(Grid{});
    Grid& g = m.vp.grid;
    g.nx = nx;
    g.ny = ny;
    g.nz = nz;
    g.dx = g.dy = g.dz = h;
    m.vp.data.resize(g.size());
    for (int iz = 0; iz < nz; ++iz)
        for (int iy = 0; iy < ny; ++iy)
            for (int ix = 0; ix < nx; ++ix) m.vp.at(ix, iy, iz) = float(v(ix * h, iy * h, iz * h));
    return m;
}

inline Wavelet ricker_wavelet(double f0) {
    Wavelet w;
    w.dt = 1e-4;
    w.samples = ricker(f0, w.dt, int(3.0 / f0 / w.dt) + 1);
    w.f_dominant = f0;
    w.f_max = ricker_max_frequency(f0);
    return w;
}

// One shot at (xs, ys) into a line (or grid) of receivers at 10 m depth.
inline ShotGather shot_geometry(const Model& m, double xs, double ys, double rec_dx, double t_len, double dt) {
    RegularAcquisition acq;
    const Grid& g = m.grid();
    acq.sources = {xs, 0, 1, ys, 0, 1, 10};
    const int nrx = int(g.x_max() / rec_dx) + 1;
    acq.receivers = {0, rec_dx, nrx, 0, g.ny > 1 ? rec_dx : 0, g.ny > 1 ? int(g.y_max() / rec_dx) + 1 : 1, 10};
    acq.dt = dt;
    acq.nt = int(std::lround(t_len / dt)) + 1;
    return regular_geometry(acq, g).front();
}

// d(true) - d(background): the reflected data alone.
inline ShotGather reflections(const Model& truth, const Model& background, const ShotGather& geo,
                              const Wavelet& w, const PropagationOptions& p) {
    auto a = model_shots(truth, {geo}, w, p).front();
    const auto b = model_shots(background, {geo}, w, p).front();
    for (std::size_t i = 0; i < a.data.size(); ++i) a.data[i] -= b.data[i];
    return a;
}

// The source wavefield rebuilt backwards from the saved band: p (its sources set) steps
// N times saving its band, then runs back from step N - 1 to 1 restoring it; the worst
// relative L2 of the rebuilt wavefield against the forward one at the steps that are
// multiples of `every` (step 0, the field at rest, left out).
inline double band_rebuild_error(Propagator& p, int N, int every) {
    std::vector<float> bands((N + 1) * p.band_size(), 0.f);
    std::vector<std::vector<double>> kept;
    for (int n = 0; n < N; ++n) {
        if (n % every == 0) kept.push_back(p.wavefield());
        p.step(n);
        p.save_band(bands.data() + std::size_t(n + 1) * p.band_size());
    }
    p.reverse_time();
    double worst = 0;
    for (int n = N - 1; n >= 1; --n) {
        p.step(n);
        p.restore_band(bands.data() + std::size_t(n - 1) * p.band_size());
        if ((n - 1) % every == 0 && n - 1 > 0) worst = std::max(worst, rel_l2(p.wavefield(), kept[(n - 1) / every]));
    }
    return worst;
}

// Depth (m) of the largest image value in column (ix, iy) from node iz_min down:
// positive, because a velocity increase must image with positive polarity, so a phase
// or polarity error moves the peak off the interface by a quarter wavelength or more.
inline double peak_depth(const Volume& img, int ix, int iy, int iz_min) {
    const Grid& g = img.grid;
    int best = iz_min;
    for (int iz = iz_min; iz < g.nz; ++iz)
        if (img.at(ix, iy, iz) > img.at(ix, iy, best)) best = iz;
    return g.z0 + best * g.dz;
}

}  // namespace rtm::test
