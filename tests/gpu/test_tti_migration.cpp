// Migration with anisotropic (VTI/TTI) models on the GPU: the CUDA TTI propagator's
// migration operations (device_wavefields.h: p and q moved together, (p + q) / 2 imaged)
// against the CPU twin's, and migrate_shot of a small TTI survey on both backends.
//
// The bound (as tests/gpu/test_tti.cpp): both backends compute the same fp32 sums in
// another order, K rounded operations per point and step (TTI 3D 130, 2D 90; VTI 40),
// each within 2^-24 of the field's size; leapfrog carries the differences unamplified and
// the steps' roundings are independent: relative L2 3 sqrt(N) K 2^-24 after N steps.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "gpu_test.h"
#include "migration_fixture.h"
#include "physics/stencil.h"
#include "physics/wavelet.h"
#include "pipeline/migration.h"
#include "pipeline/modelling.h"
#include "support/test_data.h"

using namespace rtm;
using namespace rtm::test;

namespace {

// How much diag(H, V) amplifies the backends' rounding differences relative to the field
// it differentiates (the Born source reads it, the born-adjoint image too). The
// differences are white (independent from node to node): a compact second derivative
// multiplies their rms by sqrt(sum_k c2(k)^2) / h^2 per axis, sqrt(ndim sum c2^2) / h^2 for
// the Laplacian; the field's energy lies near the wavelet's dominant wavenumber k = 2 pi
// f0 / v, where the Laplacian multiplies it by k^2. H and V are each a Laplacian minus a
// projected second derivative (TTI; VTI: a part of the Laplacian): at most twice its
// gain. So the gain is 2 sqrt(ndim sum c2^2) / (k h)^2, largest at the largest v.
double d2_gain(int ndim, double f0, double vmax, double h) {
    double c2 = stencil::c2(0) * stencil::c2(0);
    for (int k = 1; k <= stencil::R; ++k) c2 += 2 * stencil::c2(k) * stencil::c2(k);
    const double kh = 2 * M_PI * f0 / vmax * h;
    return 2 * std::sqrt(ndim * c2) / (kh * kh);
}

// migrate_shot's and born_shot's models: smooth (and truth, with a step at 250 m) with
// epsilon 0.2, delta 0.1 and, when tilted, a tilt of 30 degrees. vmax: smooth's largest velocity.
struct AnisoModels {
    Model smooth, truth;
    double vmax = 0;
};
AnisoModels aniso_models(int ndim, bool tilted) {
    const int nx = ndim == 3 ? 41 : 121, ny = ndim == 3 ? 37 : 1, nz = ndim == 3 ? 39 : 71;
    const auto vp = [](double x, double, double z) { return 1800 + 0.6 * z + 40 * std::sin(x / 70); };
    AnisoModels a{make_model(nx, ny, nz, 10, vp),
                  make_model(nx, ny, nz, 10, [&](double x, double y, double z) { return vp(x, y, z) + (z > 250 ? 400 : 0); }),
                  1840 + 0.6 * 10 * (nz - 1)};  // smooth's (the models migrated and Born-modelled)
    for (Model* m : {&a.smooth, &a.truth})
        for (const auto& [name, value] : {std::pair{"epsilon", 0.2f}, std::pair{"delta", 0.1f},
                                          std::pair{"theta", float(M_PI / 6)}}) {  // radians, as Model holds it
            if (!tilted && std::string(name) == "theta") continue;
            m->extra[name] = Volume(m->grid());
            std::fill(m->extra[name].data.begin(), m->extra[name].data.end(), value);
        }
    return a;
}


// A heterogeneous TTI (or VTI) domain with damping layers, at half the TTI time-step limit.
Domain tti_domain(int ndim, bool tilted) {
    Grid g;
    g.nx = ndim == 3 ? 41 : 121;
    g.ny = ndim == 3 ? 37 : 1;
    g.nz = ndim == 3 ? 39 : 91;
    g.dx = g.dy = g.dz = 10;
    std::vector<float> vp(g.size());
    AnisotropyFields extra;
    for (const char* name : {"epsilon", "delta"}) extra[name].resize(g.size());
    if (tilted) extra["theta"].resize(g.size());
    for (int iz = 0; iz < g.nz; ++iz)
        for (int iy = 0; iy < g.ny; ++iy)
            for (int ix = 0; ix < g.nx; ++ix) {
                const std::size_t i = g.index(ix, iy, iz);
                vp[i] = float(1800 + 8 * iz + 3 * std::sin(0.2 * ix));
                extra["epsilon"][i] = float(0.2 + 0.05 * std::sin(0.1 * iz));
                extra["delta"][i] = 0.1f;
                if (tilted) extra["theta"][i] = float(0.5 + 0.2 * std::sin(0.15 * ix + 0.1 * iz));  // radians
            }
    DomainOptions o;
    o.boundary = Boundary::Damping;
    o.pml_cells = 10;
    o.f_dominant = 15;
    // Half the TTI limit dt^2 (A + B) S2 sum 1/h^2 <= 4 (docs/anisotropy.md), A = vmax^2 (1 + 2 eps_max).
    const double vmax = 1803 + 8 * g.nz, sum = (ndim == 3 ? 3 : 2) / (g.dx * g.dx);
    o.dt = 0.5 * std::sqrt(4 / ((1.5 + 1) * vmax * vmax * stencil::second_derivative_symbol_max() * sum));
    return Domain(g, vp, o, extra);
}

// What one backend's migration operations give on a domain: the source propagated N
// steps (band stored every step, a snapshot every k, a state at N/2), its wavefield
// after N steps and after N/2 steps again from the state, its wavefield rebuilt from the
// band at step N/2, and the image of its receivers' own traces (reversed) correlated with
// the snapshots.
struct Ops {
    std::vector<double> final_field, from_state, rebuilt, image, illumination;
    int steps = 0;
};

Ops run_ops(const Domain& d, bool gpu, int N, int k) {
    Backend b;
    b.gpu = gpu;
    auto src = make_propagator(d, Precision::Single, b);
    auto rec = make_propagator(d, Precision::Single, b);
    const Grid& g = d.window();
    const double cx = (g.nx - 1) * g.dx / 2, cy = (g.ny - 1) * g.dy / 2, dy = g.ny > 1 ? 1 : 0;
    const auto w = ricker(15, d.dt(), N);
    src->set_sources({d.point(cx + 3.3, cy - 1.1 * dy, 31.7, "source")}, {std::vector<double>(w.begin(), w.end())});
    std::vector<PointStencil> receivers;
    for (int i = 0; i < 10; ++i) receivers.push_back(d.point(15.5 + i * (g.nx - 4) * g.dx / 10, cy + 2.2 * dy, 21.3, "receiver"));
    src->set_receivers(receivers, N);
    src->reset();
    src->reserve_bands(std::size_t(N) + 1);
    src->store_band(0);
    src->reserve_states(1);
    for (int n = 0; n < N; ++n) {
        if (n % k == 0) src->keep(false);
        if (n == N / 2) src->store_state(0);
        src->step(n);
        src->store_band(std::size_t(n) + 1);
    }
    Ops out;
    out.final_field = src->wavefield();
    const auto traces = src->receiver_traces();  // before the steps below record over them
    // The band: rebuilt backwards to step N/2. (Not to an early step: before the
    // wavelet's onset the field is about 1e-9 of its peak, and the rebuilt one there is the
    // whole run's rounding, so the two backends' agree only in absolute terms: measured
    // on the CPU, the field rebuilt to step 5 of 300 differs from the forward one by 3000
    // times its size, to step 150 by 6e-6, 2026-11-23.)
    src->reverse_time();
    for (int cs = N - 1; cs > N / 2; --cs) {
        src->step(cs);
        src->load_band(std::size_t(cs) - 1);
    }
    out.rebuilt = src->wavefield();
    // The state: N/2 steps again from it repeat the forward ones exactly.
    src->load_state(0);
    for (int n = N / 2; n < N; ++n) src->step(n);
    out.from_state = src->wavefield();
    // The image: the receivers' traces reversed as sources, the snapshots recalled.
    std::vector<std::vector<double>> data;
    for (std::size_t r = 0; r < receivers.size(); ++r) {
        data.emplace_back(traces.begin() + r * N, traces.begin() + (r + 1) * N);
        std::reverse(data.back().begin(), data.back().end());
    }
    rec->set_sources(receivers, data);
    rec->set_receivers({}, N);
    rec->reset();
    for (int m = 0; m < N; ++m) {
        rec->step(m);
        const int j = N - 1 - m;
        if (j % k) continue;
        src->recall(std::size_t(j / k));
        rec->correlate(*src, k * d.dt());
    }
    out.image = rec->correlation(false);
    out.illumination = rec->correlation(true);
    out.steps = N;
    return out;
}

}  // namespace

TEST_CASE("the GPU VTI/TTI propagator's migration operations (band history, snapshots, states, correlation) equal "
          "the CPU one's in fp32, 2D and 3D",
          "[gpu][tti]") {
    if (!gpu_or_skip()) return;
    for (int ndim : {2, 3})
        for (bool tilted : {false, true})
            for (const char* headroom : {(const char*)nullptr, "1e9"}) {  // device memory, then pinned host memory
                const Headroom h(headroom);
                const Domain d = tti_domain(ndim, tilted);
                const int N = ndim == 3 ? 150 : 300, k = 5;
                const Ops cpu = run_ops(d, false, N, k), gpu = run_ops(d, true, N, k);
                const int K = tilted ? (ndim == 3 ? 130 : 90) : 40;
                // Forward N steps; rebuilt: N forward and N/2 - 1 backward steps, each side
                // rounding independently: 2N steps' bound. The image: a sum of products of
                // the source (recalled snapshots, N steps) and receiver (N steps) fields:
                // sqrt(2) times a field's bound (tests/gpu/test_imaging.cpp).
                const double u = unit_roundoff(Precision::Single);
                const double e_fwd = tti_bound(N, K, u), e_rebuilt = tti_bound(2 * N, K, u), e_image = std::sqrt(2.0) * e_fwd;
                const double ef = rel_l2(gpu.final_field, cpu.final_field), er = rel_l2(gpu.rebuilt, cpu.rebuilt),
                             ei = rel_l2(gpu.image, cpu.image), el = rel_l2(gpu.illumination, cpu.illumination);
                std::printf("%dD %s, %s: GPU vs CPU relative L2: forward %.3g (bound %.3g), rebuilt from the band %.3g "
                            "(bound %.3g), image %.3g, illumination %.3g (bound %.3g)\n",
                            ndim, tilted ? "TTI" : "VTI", headroom ? "pinned host memory" : "device memory", ef, e_fwd,
                            er, e_rebuilt, ei, el, e_image);
                INFO(ndim << "D " << (tilted ? "TTI" : "VTI") << (headroom ? ", pinned host memory" : ", device memory"));
                CHECK(ef <= e_fwd);
                CHECK(er <= e_rebuilt);
                CHECK(ei <= e_image);
                CHECK(el <= e_image);
                // Each backend's state holds p and q at both time levels in the propagation's
                // precision, and its steps are deterministic: from the state, the same bits.
                CHECK(gpu.from_state == gpu.final_field);
                CHECK(cpu.from_state == cpu.final_field);
            }
}

TEST_CASE("TTI migrate_shot on the GPU matches the CPU (cross-correlation, inverse scattering and the born adjoint, "
          "with snapshots, band, checkpoints, in 2D and 3D, and the band under a free surface)",
          "[gpu][tti]") {
    if (!gpu_or_skip()) return;
    for (int ndim : {2, 3}) {
        const int nx = ndim == 3 ? 41 : 121, ny = ndim == 3 ? 37 : 1;
        const AnisoModels models = aniso_models(ndim, true);
        const Model &smooth = models.smooth, &truth = models.truth;
        const Wavelet w = ricker_wavelet(15);
        PropagationOptions p;
        p.boundary = Boundary::Damping;
        const double xs = (nx - 1) * 5 + 3.7, ys = ndim == 3 ? (ny - 1) * 5 + 1.3 : 0;
        const ShotGather shot = model_shots(truth, {shot_geometry(truth, xs, ys, 20, 0.35, 0.002)}, w, p).front();
        struct Case {
            ImagingCondition cond;
            SourceStorage storage;
            bool surface;
        };
        std::vector<Case> cases;
        for (auto cond :
             {ImagingCondition::CrossCorrelation, ImagingCondition::InverseScattering, ImagingCondition::BornAdjoint})
            for (auto storage : {SourceStorage::Snapshots, SourceStorage::Boundary, SourceStorage::Checkpoints})
                cases.push_back({cond, storage, false});
        cases.push_back({ImagingCondition::CrossCorrelation, SourceStorage::Boundary, true});
        for (const auto& [cond, storage, surface] : cases) {
            MigrationOptions opt;
            opt.propagation.free_surface = surface;
            opt.aperture = -1;
            opt.propagation.pml_cells = 10;
            opt.condition = cond;
            opt.storage = storage;
            // A few states (one: 4 arrays of 4 B on the padded grid, 0.24 MB in 2D, 4.8 MB in 3D).
            if (storage == SourceStorage::Checkpoints) opt.memory_budget = ndim == 3 ? 2e7 : 1e6;
            opt.propagation.backend.gpu = false;
            const ShotMigration cpu = migrate_shot(smooth, shot, w, opt);
            opt.propagation.backend.gpu = true;
            const ShotMigration gpu = migrate_shot(smooth, shot, w, opt);
            REQUIRE(gpu.storage == storage);
            REQUIRE(cpu.storage == storage);
            double peak = 0;
            for (double x : cpu.image) peak = std::max(peak, std::abs(x));
            // As tests/gpu/test_imaging.cpp: sqrt(2) times a field's bound after the run's
            // steps for the cross-correlation image (a band-rebuilt source field runs
            // twice the steps: 2N); inverse scattering differentiates the fields, which
            // amplifies their fresh rounding differences about tenfold: ten times that;
            // the born adjoint applies diag(H, V) to the source field: d2_gain times.
            const int K = ndim == 3 ? 130 : 90;
            const int steps = storage == SourceStorage::Snapshots ? gpu.steps : 2 * gpu.steps;
            const double gain = cond == ImagingCondition::CrossCorrelation    ? 1
                                : cond == ImagingCondition::InverseScattering ? 10
                                                                              : d2_gain(ndim, 15, models.vmax, 10);
            const double tol = std::sqrt(2.0) * tti_bound(steps, K, unit_roundoff(Precision::Single)) * gain;
            const double ei = rel_l2(gpu.image, cpu.image), el = rel_l2(gpu.illumination, cpu.illumination);
            std::printf("%dD TTI migrate_shot, %s, %s%s: image GPU vs CPU %.3g, illumination %.3g (bound %.3g)\n",
                        ndim,
                        cond == ImagingCondition::CrossCorrelation    ? "cross-correlation"
                        : cond == ImagingCondition::InverseScattering ? "inverse scattering"
                                                                      : "born adjoint",
                        storage_name(storage), surface ? ", free surface" : "", ei, el, tol);
            CHECK(peak > 0);
            CHECK(ei <= tol);
            CHECK(el <= tol);
        }
    }
}

TEST_CASE("VTI and TTI Born modelling on the GPU matches the CPU (born_shot, fp32 and fp64, 2D and 3D)", "[gpu][tti]") {
    // fp32: the background field's rounding differences (tti_bound after N steps) reach
    // the Born source through diag(H, V), amplified d2_gain times, and the scattered
    // field adds its own: (d2_gain + 1) tti_bound(N, K). fp64: the same with 2^-53 for
    // 2^-24, but the traces are stored as fp32: 2^-24 of each sample, 1e-7 in all.
    if (!gpu_or_skip()) return;
    for (int ndim : {2, 3})
        for (bool tilted : {false, true}) {
            const AnisoModels models = aniso_models(ndim, tilted);
            const Model& m = models.smooth;
            const Grid& g = m.grid();
            const Volume dm = blob_perturbation(g);
            const Wavelet w = ricker_wavelet(15);
            const double xs = (g.nx - 1) * 5 + 3.7, ys = ndim == 3 ? (g.ny - 1) * 5 + 1.3 : 0;
            const ShotGather geo = shot_geometry(m, xs, ys, 20, 0.35, 0.002);
            for (Precision prec : {Precision::Single, Precision::Double}) {
                MigrationOptions opt;
                opt.aperture = -1;
                opt.propagation.pml_cells = 10;
                opt.propagation.boundary = Boundary::Damping;
                opt.propagation.precision = prec;
                opt.propagation.backend.gpu = false;
                const ShotGather cpu = born_shot(m, dm, geo, w, opt);
                opt.propagation.backend.gpu = true;
                double busy = 0;
                const ShotGather gpu = born_shot(m, dm, geo, w, opt, &busy);
                const int K = tilted ? (ndim == 3 ? 130 : 90) : 40;
                const int steps = time_axis(m, geo, w, opt.propagation).nt;
                double peak = 0;
                for (float x : cpu.data) peak = std::max(peak, double(std::abs(x)));
                const double gain = d2_gain(ndim, 15, models.vmax, 10);
                const double e = rel_l2(std::vector<double>(gpu.data.begin(), gpu.data.end()),
                                        std::vector<double>(cpu.data.begin(), cpu.data.end()));
                std::printf("%dD %s Born data, %s, %d steps: GPU vs CPU relative L2 %.3g (bound %.3g)\n", ndim,
                            tilted ? "TTI" : "VTI", prec == Precision::Single ? "fp32" : "fp64", steps, e,
                            prec == Precision::Double ? 1e-7 : (gain + 1) * tti_bound(steps, K, unit_roundoff(prec)));
                INFO(ndim << "D " << (tilted ? "TTI" : "VTI") << (prec == Precision::Single ? " fp32" : " fp64"));
                CHECK(peak > 0);
                CHECK(busy > 0);
                if (prec == Precision::Double) CHECK(e < 1e-7);
                else CHECK(e <= (gain + 1) * tti_bound(steps, K, unit_roundoff(prec)));
            }
        }
}

TEST_CASE("the VTI/TTI born-adjoint image on the GPU matches the CPU (fp32 and fp64, 2D and 3D), and a batch of two "
          "shots gives each shot's image alone, bit for bit",
          "[gpu][tti]") {
    // The bound of the migrate_shot test above for the born adjoint, sqrt(2) tti_bound
    // d2_gain, with the propagation's unit roundoff (fp64: 2^-53; the data enter as fp32
    // traces in both runs alike).
    if (!gpu_or_skip()) return;
    for (int ndim : {2, 3})
        for (bool tilted : {false, true}) {
            const AnisoModels models = aniso_models(ndim, tilted);
            const Grid& g = models.smooth.grid();
            const Wavelet w = ricker_wavelet(15);
            PropagationOptions p;
            p.boundary = Boundary::Damping;
            const auto shot_at = [&](double x) {
                const double y = ndim == 3 ? (g.ny - 1) * 5 + 1.3 : 0;
                return model_shots(models.truth, {shot_geometry(models.truth, x, y, 20, 0.35, 0.002)}, w, p).front();
            };
            const ShotGather shot = shot_at((g.nx - 1) * 5 + 3.7);
            for (Precision prec : {Precision::Single, Precision::Double}) {
                MigrationOptions opt;
                opt.aperture = -1;
                opt.propagation.pml_cells = 10;
                opt.propagation.precision = prec;
                opt.condition = ImagingCondition::BornAdjoint;
                opt.storage = SourceStorage::Snapshots;
                opt.propagation.backend.gpu = false;
                const ShotMigration cpu = migrate_shot(models.smooth, shot, w, opt);
                opt.propagation.backend.gpu = true;
                const ShotMigration gpu = migrate_shot(models.smooth, shot, w, opt);
                const int K = tilted ? (ndim == 3 ? 130 : 90) : 40;
                const double u = unit_roundoff(prec);
                const double tol = std::sqrt(2.0) * tti_bound(gpu.steps, K, u) * d2_gain(ndim, 15, models.vmax, 10);
                const double ei = rel_l2(gpu.image, cpu.image), el = rel_l2(gpu.illumination, cpu.illumination);
                std::printf("%dD %s born-adjoint image, %s: GPU vs CPU %.3g, illumination %.3g (bound %.3g)\n", ndim,
                            tilted ? "TTI" : "VTI", prec == Precision::Single ? "fp32" : "fp64", ei, el, tol);
                INFO(ndim << "D " << (tilted ? "TTI" : "VTI") << (prec == Precision::Single ? " fp32" : " fp64"));
                double peak = 0;
                for (double x : cpu.image) peak = std::max(peak, std::abs(x));
                CHECK(peak > 0);
                CHECK(ei <= tol);
                CHECK(el <= tol);
                if (ndim == 2 && prec == Precision::Single) {
                    // Two shots propagated together: each member's image is its own shot's.
                    const ShotGather other = shot_at((g.nx - 1) * 3 + 1.9);
                    const auto both = migrate_shots(models.smooth, {&shot, &other}, w, opt);
                    const ShotMigration alone = migrate_shot(models.smooth, other, w, opt);
                    REQUIRE(both.size() == 2);
                    CHECK(both[0].batch == 2);
                    CHECK(both[0].image == gpu.image);
                    CHECK(both[1].image == alone.image);
                    CHECK(both[1].illumination == alone.illumination);
                }
            }
        }
}
