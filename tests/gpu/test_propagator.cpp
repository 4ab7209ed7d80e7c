// CudaPropagator against CpuPropagator: whole runs with C-PML, a free surface or not,
// an off-grid source and off- and on-grid receivers, 2D and 3D, fp32 and fp64.
#include "gpu_simulate.h"
#include "gpu_test.h"
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
    const double tol = prec == Precision::Single ? 1e-5 : 1e-10;
    double peak = 0;
    for (double x : cpu.traces) peak = std::max(peak, std::abs(x));
    const double et = rel_l2(gpu.traces.data(), cpu.traces.data(), cpu.traces.size());
    const double ew = rel_l2(gpu.wavefield.data(), cpu.wavefield.data(), cpu.wavefield.size());
    INFO(ndim << "D, free surface " << (fs ? "on" : "off") << ", " << (prec == Precision::Single ? "fp32" : "fp64")
              << ": traces relative L2 " << et << " (peak " << peak << "), wavefield relative L2 " << ew);
    CHECK(peak > 0);
    CHECK(et <= tol);
    CHECK(ew <= tol);
}

}  // namespace

TEST_CASE("CudaPropagator traces match CpuPropagator (2D and 3D, C-PML, free surface on and off)", "[gpu]") {
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
