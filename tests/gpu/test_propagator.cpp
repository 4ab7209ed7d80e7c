// CudaPropagator against CpuPropagator: whole runs with C-PML, a free surface or not,
// an off-grid source and off- and on-grid receivers, 2D and 3D, fp32 and fp64; batches
// of shots against each shot alone and against the CPU's batch.
#include "gpu_simulate.h"
#include "gpu_test.h"
#include "migration_fixture.h"
#include "kernels/cuda/device_buffer.h"

using namespace rtm;
using namespace rtm::test;

namespace {

Run make_run(int ndim, bool free_surface, Precision prec) {
    Run r = small_model_run(ndim, prec, Boundary::Cpml, 400, {301.3, 233.7, 147.1});
    r.domain.free_surface = free_surface;
    for (int i = 0; i < 12; ++i) r.receivers.push_back({10.0 + 47.3 * i, ndim == 3 ? 200.0 + 7.1 * i : 0, 23.4});
    r.receivers.push_back({300.0, ndim == 3 ? 230.0 : 0.0, 0.0});    // on the surface (p = 0 with a free surface)
    r.receivers.push_back({600.0, ndim == 3 ? 460.0 : 0.0, 520.0});  // a corner node of the window
    return r;
}

void compare_backends(int ndim, bool fs, Precision prec) {
    const Run r = make_run(ndim, fs, prec);
    // The snapshot while the wave is inside the window: at the end only the C-PML's
    // small remainder is left, where fp32 rounding differences are no longer small
    // against the field.
    const Result cpu = simulate_on(r, false, 200);
    const Result gpu = simulate_on(r, true, 200);
    // The two backends round differently at every step: twin_bound (gpu_test.h) after
    // the 200 steps of the snapshot (the traces' 400 steps: the larger bound), plus the
    // receivers' interpolation, 64 (3D) roundings of a sum within 2^-p: below it.
    const double tol = twin_bound(r.nt, prec);
    double peak = 0;
    for (double x : cpu.traces) peak = std::max(peak, std::abs(x));
    const double et = rel_l2(gpu.traces.data(), cpu.traces.data(), cpu.traces.size());
    const double ew = rel_l2(gpu.wavefield.data(), cpu.wavefield.data(), cpu.wavefield.size());
    INFO(ndim << "D, free surface " << (fs ? "on" : "off") << ", " << (prec == Precision::Single ? "fp32" : "fp64")
              << ": traces relative L2 " << et << " (peak " << peak << "), wavefield relative L2 " << ew
              << " (bound " << tol << ")");
    CHECK(peak > 0);
    CHECK(et <= tol);
    CHECK(ew <= tol);
}

}  // namespace

TEST_CASE("CudaPropagator traces and wavefield match CpuPropagator to rounding (2D and 3D, C-PML, free surface on and off, fp32 and fp64)", "[gpu]") {
    if (!gpu_or_skip()) return;
    for (int ndim : {2, 3})
        for (bool fs : {false, true})
            for (Precision p : {Precision::Single, Precision::Double}) compare_backends(ndim, fs, p);
}

TEST_CASE("CudaPropagator reset gives the same run again", "[gpu]") {
    if (!gpu_or_skip()) return;
    const Run r = make_run(2, true, Precision::Single);
    Domain d(r.grid, velocity_field(r), r.domain);
    auto p = make_cuda_propagator(d, r.precision);
    const auto w = ricker(r.f0, r.domain.dt, r.nt);
    p->set_sources({d.point(r.source.x, 0, r.source.z, "source")}, {std::vector<double>(w.begin(), w.end())});
    p->set_receivers({d.point(100, 0, 50, "receiver")}, 100);
    for (int n = 0; n < 100; ++n) p->step(n);
    const auto first = p->receiver_traces();
    p->reset();
    for (int n = 0; n < 100; ++n) p->step(n);
    CHECK(p->receiver_traces() == first);
    CHECK(p->name() == "cuda (fp32)");
}

TEST_CASE("a domain too large for the GPU gives a clear error with the sizes", "[gpu]") {
    if (!gpu_or_skip()) return;
    // Take all but ~200 MiB of the GPU, then ask for a 200^3 fp32 domain with layers
    // (9 arrays of 8.5 M points: about 300 MiB).
    std::size_t free_b = 0, total_b = 0;
    RTM_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    kernels::cuda::DeviceBuffer<char> hog(free_b - (200u << 20));
    Grid g;
    g.nx = g.ny = g.nz = 164;
    g.dx = g.dy = g.dz = 10;
    DomainOptions o;
    o.dt = 1e-3;
    o.pml_cells = 18;
    Domain d(g, std::vector<float>(g.size(), 2000.f), o);
    try {
        auto p = make_cuda_propagator(d, Precision::Single);
        FAIL("no error for a " << d.box().nx << "^3 fp32 domain with " << free_b / (1 << 20) << " MiB free");
    } catch (const Error& e) {
        const std::string m = e.what();
        INFO(m);
        CHECK(m.find("GPU memory") != std::string::npos);
        CHECK(m.find("GiB") != std::string::npos);
        CHECK(m.find("200 x 200 x 200") != std::string::npos);
    }
}

namespace {

// Three members with their own off-grid sources and 3, 2 and 1 receivers.
struct Members {
    std::vector<PointStencil> sources, receivers, alone_sources[3];
    std::vector<PointStencil> alone_receivers[3];
};

Members three_members(const Domain& d, int ndim) {
    Members M;
    const double y = ndim == 3 ? 211.3 : 0;
    const Position src[3] = {{151.3, y, 102.7}, {307.9, y, 43.1}, {452.4, y, 351.6}};
    for (int m = 0; m < 3; ++m) {
        M.alone_sources[m] = {d.point(src[m].x, src[m].y, src[m].z, "source")};
        M.sources.push_back(member_stencil(M.alone_sources[m][0], d.box(), m));
        for (int k = m; k < 3; ++k) {
            M.alone_receivers[m].push_back(d.point(40.0 + 171.1 * k, y, 20.0 + 9.3 * m, "receiver"));
            M.receivers.push_back(member_stencil(M.alone_receivers[m].back(), d.box(), m));
        }
    }
    return M;
}

}  // namespace

TEST_CASE("a batch of shots on the GPU equals each shot alone, and the CPU's batch to rounding", "[gpu]") {
    if (!gpu_or_skip()) return;
    for (int ndim : {2, 3})
        for (Boundary bnd : {Boundary::Cpml, Boundary::Damping})
            for (bool fs : {false, true}) {
                Run r = small_model_run(ndim, Precision::Single, bnd, 250, {301.3, 233.7, 147.1});
                r.domain.free_surface = fs;
                Domain d(r.grid, velocity_field(r), r.domain);
                const auto w = ricker(r.f0, r.domain.dt, r.nt);
                const std::vector<double> wav(w.begin(), w.end());
                const Members M = three_members(d, ndim);
                auto gpu = make_cuda_propagator(d, r.precision, 3);
                auto cpu = make_cpu_propagator(d, r.precision, 3);
                for (auto* p : {gpu.get(), cpu.get()}) {
                    p->set_sources(M.sources, {wav, wav, wav});
                    p->set_receivers(M.receivers, r.nt);
                    for (int n = 0; n < r.nt; ++n) p->step(n);
                }
                const auto gt = gpu->receiver_traces(), ct = cpu->receiver_traces();
                const auto gf = gpu->wavefield(), cf = cpu->wavefield();
                INFO(ndim << "D, " << (bnd == Boundary::Cpml ? "C-PML" : "damping") << ", free surface " << fs);
                REQUIRE(gt.size() == 6 * std::size_t(r.nt));
                const double et = rel_l2(gt.data(), ct.data(), ct.size());
                const double ef = rel_l2(gf.data(), cf.data(), cf.size());
                // twin_bound after the run's 250 steps (fp32: 1.3e-5).
                const double tol = twin_bound(r.nt, r.precision);
                INFO("GPU batch vs CPU batch: traces " << et << ", wavefields " << ef << " (bound " << tol << ")");
                CHECK(et <= tol);
                CHECK(ef <= tol);
                std::size_t r0 = 0;
                for (int m = 0; m < 3; ++m) {
                    auto alone = make_cuda_propagator(d, r.precision);
                    alone->set_sources(M.alone_sources[m], {wav});
                    alone->set_receivers(M.alone_receivers[m], r.nt);
                    for (int n = 0; n < r.nt; ++n) alone->step(n);
                    const auto t = alone->receiver_traces();
                    const auto f = alone->wavefield();
                    INFO("member " << m << " against the same shot alone on the GPU (bit for bit)");
                    CHECK(std::equal(t.begin(), t.end(), gt.begin() + r0 * r.nt));
                    CHECK(std::equal(f.begin(), f.end(), gf.begin() + m * r.grid.size()));
                    r0 += M.alone_receivers[m].size();
                }
            }
}

TEST_CASE("model_shots on the GPU in batches equals shot-by-shot modelling", "[gpu]") {
    if (!gpu_or_skip()) return;
    const Model m = make_model(161, 1, 81, 10, [](double x, double, double z) { return 1700 + z + 0.3 * x; });
    std::vector<ShotGather> geo;
    for (int s = 0; s < 7; ++s) geo.push_back(shot_geometry(m, 50.0 + 210.3 * s, 0, 20, 0.4, 0.002));
    PropagationOptions p;
    p.pml_cells = 20;
    p.backend.gpu = true;
    p.batch = 1;
    const auto one = model_shots(m, geo, ricker_wavelet(15), p);
    p.batch = 0;  // automatic: all 7 in one batch
    REQUIRE(modelling_batch(p, 7, 201.0 * 121, 81.0 * 201) == 7);
    const auto all = model_shots(m, geo, ricker_wavelet(15), p);
    p.batch = 4;  // 4 + 3
    const auto four = model_shots(m, geo, ricker_wavelet(15), p);
    for (int s = 0; s < 7; ++s) {
        INFO("shot " << s);
        CHECK(all[s].data == one[s].data);
        CHECK(four[s].data == one[s].data);
    }
}

TEST_CASE("CudaPropagator's plane copies are CpuPropagator's: same planes, same bytes, every batch member", "[gpu]") {
    if (!gpu_or_skip()) return;
    for (int ndim : {2, 3}) {
        const Run r = small_model_run(ndim, Precision::Single, Boundary::Cpml, 10, {301.3, 233.7, 147.1});
        Domain d(r.grid, velocity_field(r), r.domain);
        const int batch = 2, R = stencil::R, nz = d.box().nz;
        auto cpu = make_cpu_propagator(d, r.precision, batch);
        auto gpu = make_cuda_propagator(d, r.precision, batch);
        REQUIRE(gpu->plane_bytes() == cpu->plane_bytes());
        const std::size_t pb = cpu->plane_bytes(), nv = pb / sizeof(float);
        // Planes -R .. 5 - R (halo and computed) and 3 planes at the bottom, distinct values.
        for (int iz0 : {-R, nz - 2}) {
            const int count = iz0 < 0 ? 6 : 3;
            std::vector<float> in(nv * std::size_t(count) * batch);
            for (std::size_t i = 0; i < in.size(); ++i) in[i] = float(i % 9973) * 0.25f + float(iz0);
            cpu->copy_planes_in(iz0, count, in.data());
            gpu->copy_planes_in(iz0, count, in.data());
        }
        // The whole padded array of both members back (all planes): byte for byte.
        std::vector<float> a(nv * std::size_t(nz + 2 * R) * batch), b(a.size(), -1.f);
        cpu->copy_planes_out(-R, nz + 2 * R, a.data());
        gpu->copy_planes_out(-R, nz + 2 * R, b.data());
        INFO(ndim << "D");
        CHECK(a == b);
        CHECK(a[0] == 0.25f * 0 - float(R));  // member 0's first halo plane as written
        // The planes as the wavefield sees them (window nodes of the computed planes).
        CHECK(gpu->wavefield() == cpu->wavefield());
    }
}
