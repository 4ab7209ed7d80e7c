// The GPU VTI/TTI kernels (two-pass and SWiC, kernels/cuda/tti_cuda.h) against their CPU
// twin (kernels/cpu/tti_cpu.h) in fp32 and fp64, and the GPU TTI propagator against the
// CPU one.
//
// The bound. Both sides compute the same sums in fp32 in different orders (SWiC adds the
// z-flux terms plane by plane, nvcc contracts into FMAs), so they differ by rounding. A
// step rounds K operations per point, each within 2^-24 of partial sums of the field's
// size (stability keeps |W L| <= 4: every term of W L u is at most a few times |u|), so one
// step's difference is at most K 2^-24 of the field (relative). Leapfrog carries old
// differences along unamplified, and the steps' roundings are independent, so after N
// steps the difference grows like sqrt(N) K 2^-24; the bound takes 3 times that (fp64:
// 2^-53, the unit roundoff of the precision, in place of 2^-24). K counted
// from the code per field and point (the two-pass and SWiC evaluate the same terms):
//   TTI 3D: gradient 3 x 12, projections 5, flux 1, divergence 3 x 12, compact Laplacian
//           3 x 12 + 3, update 7: 124, taken as K = 130;  TTI 2D: 2/3 of that, K = 90;
//   VTI: two compact second derivatives (2 x 13) and the update (7): K = 40.
// N = 100 steps for the kernels: 3D TTI 3 x 10 x 130 x 2^-24 = 2.3e-4 relative L2.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <utility>

#include "gpu_test.h"
#include "kernels/cpu/tti_cpu.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/tti_cuda.h"
#include "physics/stencil.h"
#include "physics/wavelet.h"
#include "propagation/tti_propagator.h"
#include "support/test_data.h"

using namespace rtm;
using namespace rtm::test;
namespace kc = rtm::kernels::cuda;

namespace {

int terms(int ndim, bool tilted) { return tilted ? (ndim == 3 ? 130 : 90) : 40; }

struct Case {
    int ndim;
    int nx, ny, nz;
    int layers;          // damping cells on every side (0: none)
    bool tilted;
    bool free_surface = false;
    int batch = 1;
};

// Fields of one case on the host: p, q, wp, wq (batch members), W, the axis, the damping.
template <class T>
struct State {
    kernels::Box box;
    int batch = 1;
    T inv_h2[3], inv_h[3];
    std::vector<T> p, q, wp, wq, cpp, cpq, cqq, damp, axis[3];
};

template <class T>
State<T> make_state(const Case& c, unsigned seed) {
    std::mt19937 rng(seed);
    State<T> s;
    s.batch = c.batch;
    auto& B = s.box;
    B.ndim = c.ndim;
    B.nx = c.nx;
    B.ny = c.ndim == 3 ? c.ny : 1;
    B.nz = c.nz;
    for (int ax = 0; ax < 3; ++ax)
        if (ax != 1 || c.ndim == 3) B.pml_lo[ax] = B.pml_hi[ax] = c.layers;
    B.free_surface = c.free_surface;
    if (c.free_surface) B.pml_lo[2] = 0;
    const double h[3] = {10, 12, 9};
    double sum = 0;
    for (int ax = 0; ax < 3; ++ax) {
        const bool used = c.ndim == 3 || ax != 1;
        s.inv_h2[ax] = used ? T(1 / (h[ax] * h[ax])) : T(0);
        s.inv_h[ax] = used ? T(1 / h[ax]) : T(0);
        sum += used ? 1 / (h[ax] * h[ax]) : 0;
    }
    // Stability (docs/anisotropy.md): dt^2 (A |H| + B |V|) <= 4 with |H|, |V| <= S2 sum 1/h^2,
    // A = max vdt2 (1 + 2 eps), B = max vdt2; eps < 0.3: vdt2 <= 4 / ((2 + 0.6) S2 sum).
    const double vmax2 = 4 / (2.6 * stencil::second_derivative_symbol_max() * sum);
    s.p = random_field<T>(B, rng, -1, 1, c.batch);
    s.q = random_field<T>(B, rng, -1, 1, c.batch);
    s.wp = random_field<T>(B, rng, -1, 1, c.batch);
    s.wq = random_field<T>(B, rng, -1, 1, c.batch);
    const std::size_t n = B.padded_size();
    for (auto* f : {&s.cpp, &s.cpq, &s.cqq, &s.damp}) f->assign(n, T(0));
    for (auto& a : s.axis) a.assign(c.tilted ? n : 0, T(0));
    std::uniform_real_distribution<double> u01(0, 1);
    const int nn[3] = {B.nx, B.ny, B.nz};
    for (int iz = 0; iz < B.nz; ++iz)
        for (int iy = 0; iy < B.ny; ++iy)
            for (int ix = 0; ix < B.nx; ++ix) {
                const long i = B.at(ix, iy, iz);
                const double vdt2 = (0.2 + 0.7 * u01(rng)) * vmax2, eps = 0.3 * u01(rng),
                             delta = -0.1 + (eps + 0.1) * u01(rng);  // delta <= eps: C >= 0
                s.cpp[i] = T(vdt2 * (1 + 2 * eps));
                s.cpq[i] = T(vdt2 * std::sqrt(1 + 2 * delta));
                s.cqq[i] = T(vdt2);
                if (c.tilted) {  // a random unit axis (any direction: sharp changes of tilt)
                    const double th = M_PI * u01(rng), ph = 2 * M_PI * u01(rng);
                    s.axis[0][i] = T(std::sin(th) * (c.ndim == 3 ? std::cos(ph) : 1.0));
                    s.axis[1][i] = T(c.ndim == 3 ? std::sin(th) * std::sin(ph) : 0.0);
                    s.axis[2][i] = T(std::cos(th));
                }
                const int c3[3] = {ix, iy, iz};
                bool layer = false;
                for (int ax = 0; ax < 3; ++ax) layer = layer || c3[ax] < B.pml_lo[ax] || c3[ax] >= nn[ax] - B.pml_hi[ax];
                if (layer) s.damp[i] = T(0.3 * u01(rng));
            }
    if (!c.layers) s.damp.clear();
    return s;
}

// Args over the arrays of s (host or, with device buffers, device pointers).
template <class T>
kernels::TtiStepArgs<T> args_of(const State<T>& s) {
    kernels::TtiStepArgs<T> A;
    A.box = s.box;
    A.batch = s.batch;
    for (int i = 0; i < 3; ++i) {
        A.inv_h2[i] = s.inv_h2[i];
        A.inv_h[i] = s.inv_h[i];
    }
    return A;
}

std::string describe(const Case& c, const char* kernel, const char* precision) {
    char buf[200];
    std::snprintf(buf, sizeof buf, "%dD %s %dx%dx%d, damping layers %d, free surface %s, batch %d, kernel %s, %s", c.ndim,
                  c.tilted ? "TTI" : "VTI", c.nx, c.ny, c.nz, c.layers, c.free_surface ? "on" : "off", c.batch, kernel,
                  precision);
    return buf;
}

template <class T>
void check_kernel(const Case& c, kc::TtiKernel kernel, unsigned seed, int steps) {
    State<T> cpu = make_state<T>(c, seed);
    const State<T> init = cpu;
    const std::size_t box = cpu.box.padded_size();
    // GPU copies.
    kc::DeviceBuffer<T> p(init.p), q(init.q), wp(init.wp), wq(init.wq), cpp(init.cpp), cpq(init.cpq),
        cqq(init.cqq), damp, axis[3], flux[6];
    kernels::TtiStepArgs<T> G = args_of(init);
    G.cpp = cpp.data();
    G.cpq = cpq.data();
    G.cqq = cqq.data();
    if (!init.damp.empty()) {
        damp.upload(init.damp);
        G.damp = damp.data();
    }
    // Host twin.
    kernels::TtiStepArgs<T> H = args_of(cpu);
    H.cpp = cpu.cpp.data();
    H.cpq = cpu.cpq.data();
    H.cqq = cpu.cqq.data();
    H.damp = cpu.damp.empty() ? nullptr : cpu.damp.data();
    std::vector<T> hflux[6];
    if (c.tilted) {
        for (int ax = 0; ax < 3; ++ax) {
            axis[ax].upload(init.axis[ax]);
            G.axis[ax] = axis[ax].data();
            H.axis[ax] = cpu.axis[ax].data();
        }
        for (int k = 0; k < 6; ++k) {
            hflux[k].assign(box, T(0));
            H.flux[k] = hflux[k].data();
            if (kernel == kc::TtiKernel::TwoPass) {
                flux[k].resize(box);
                flux[k].zero();
                G.flux[k] = flux[k].data();
            }
        }
    }
    T *hp = cpu.p.data(), *hq = cpu.q.data(), *hwp = cpu.wp.data(), *hwq = cpu.wq.data();
    T *gp = p.data(), *gq = q.data(), *gwp = wp.data(), *gwq = wq.data();
    for (int n = 0; n < steps; ++n) {
        H.p = hp, H.q = hq, H.wp = hwp, H.wq = hwq;
        kernels::tti_step_cpu(H);
        std::swap(hp, hwp);
        std::swap(hq, hwq);
        G.p = gp, G.q = gq, G.wp = gwp, G.wq = gwq;
        kc::tti_step_cuda(G, kernel);
        std::swap(gp, gwp);
        std::swap(gq, gwq);
    }
    RTM_CUDA_CHECK(cudaDeviceSynchronize());
    const bool even = steps % 2 == 0;  // then p, q hold u[n] on both sides
    const double tol = tti_bound(steps, terms(c.ndim, c.tilted), unit_roundoff<T>());
    const char* precision = sizeof(T) == 4 ? "fp32" : "fp64";
    INFO(describe(c, kc::tti_kernel_name(kernel), precision) << ", seed " << seed << ", " << steps << " steps, bound " << tol);
    const Diff dp = compare(cpu.box, (even ? p : wp).download(), even ? cpu.p : cpu.wp);
    const Diff dq = compare(cpu.box, (even ? q : wq).download(), even ? cpu.q : cpu.wq);
    const Diff dwp = compare(cpu.box, (even ? wp : p).download(), even ? cpu.wp : cpu.p);
    INFO("p[n]: relative L2 " << dp.rel << ", " << dp.at);
    INFO("q[n]: relative L2 " << dq.rel << ", " << dq.at);
    INFO("p[n-1]: relative L2 " << dwp.rel << ", " << dwp.at);
    std::printf("%s: relative L2 p %.3g, q %.3g, p[n-1] %.3g (bound %.3g)\n",
                describe(c, kc::tti_kernel_name(kernel), precision).c_str(), dp.rel, dq.rel, dwp.rel, tol);
    CHECK(dp.rel <= tol);
    CHECK(dq.rel <= tol);
    CHECK(dwp.rel <= tol);
    // Under a free surface SWiC runs more than one z chunk where nz allows (chunks of at
    // least 32 planes): only the first mirrors the z fluxes.
    if (c.free_surface && c.tilted && kernel == kc::TtiKernel::Swic && c.nz >= 64)
        CHECK(kc::describe_tti<T>(cpu.box, true, kernel, c.batch).zchunk < c.nz);
}

// Sizes no tile multiple (SWiC writes 24 x 24 columns per block in 3D fp32, 24 x 8 in fp64,
// 120 in 2D), several z chunks, damping layers, batches in 2D and 3D (3D SWiC's tiles of
// p, q, wp and wq at the members' planes stacked along z), a free surface with VTI and with
// TTI (z split into 2 chunks: SWiC's first mirrors the z fluxes, the second must not), and
// a 3D batch smaller than one tile and one chunk under a free surface (SWiC's queues read
// the halo planes and clamp past them; its columns past the halo read the halo's).
const Case kKernelCases[] = {
    {2, 263, 1, 150, 10, true, false, 2},
    {2, 131, 1, 97, 0, true},
    {2, 140, 1, 90, 8, false, true, 2},
    {2, 150, 1, 80, 8, true, true, 2},
    {3, 53, 21, 70, 6, true},
    {3, 30, 9, 40, 0, true, false, 2},
    {3, 41, 19, 37, 5, false, true},
    {3, 45, 20, 70, 5, true, true},
    {3, 13, 7, 11, 2, true, true, 2},
};

template <class T>
void check_kernels(unsigned seed) {
    for (const auto& c : kKernelCases)
        for (const auto& k : kc::tti_kernel_names()) check_kernel<T>(c, kc::parse_tti_kernel(k), seed++, 100);
}

}  // namespace

TEST_CASE("GPU two-pass and SWiC TTI/VTI steps equal the CPU twin in fp32 within 3 sqrt(N) K 2^-24, 2D and 3D",
          "[gpu][tti]") {
    if (!gpu_or_skip()) return;
    check_kernels<float>(11);
}

// fp64 (the precision option double; SWiC then runs 32 x 16 blocks): the same bound with
// fp64's unit roundoff, 3 x 10 x 130 x 2^-53 = 4.3e-13 relative L2 for 3D TTI.
TEST_CASE("GPU two-pass and SWiC TTI/VTI steps equal the CPU twin in fp64 within 3 sqrt(N) K 2^-53, 2D and 3D",
          "[gpu][tti]") {
    if (!gpu_or_skip()) return;
    check_kernels<double>(41);
}

namespace {

// A propagation with a Ricker source and receivers in a smooth heterogeneous TI medium,
// on the CPU and on the GPU (fp32 both); traces and the final wavefield.
struct PropResult {
    std::vector<double> traces, field;
};

// shallow: the source and receivers near the top (a free surface's test), else the source
// at 0.4 of the depth and the receivers below.
PropResult propagate(const Domain& d, bool gpu, int nt, const char* kernel, bool shallow) {
    setenv("RTM_TTI_KERNEL", kernel, 1);
    auto p = gpu ? make_cuda_propagator(d, Precision::Single) : make_cpu_propagator(d, Precision::Single);
    unsetenv("RTM_TTI_KERNEL");
    const Grid& g = d.window();
    const auto w = ricker(15, d.dt(), nt);
    const double sy = g.ndim() == 3 ? 0.5 * g.y_max() + 0.7 : 0;
    p->set_sources({d.point(0.45 * g.x_max() + 1.3, sy, (shallow ? 0.1 : 0.4) * g.z_max() + 2.1, "source")},
                   {std::vector<double>(w.begin(), w.end())});
    std::vector<PointStencil> rec;
    for (int k = 0; k < 7; ++k)
        rec.push_back(d.point((0.1 + 0.13 * k) * g.x_max(), 0.3 * g.y_max(),
                              (shallow ? 0.05 + 0.04 * k : 0.9 - 0.1 * k) * g.z_max(), "receiver"));
    p->set_receivers(rec, nt);
    for (int n = 0; n < nt; ++n) p->step(n);
    return {p->receiver_traces(), p->wavefield()};
}


}  // namespace

TEST_CASE("the GPU VTI/TTI propagator (two-pass and SWiC) equals the CPU one in fp32 after 300 steps, 2D and 3D, "
          "TTI also under a free surface",
          "[gpu][tti]") {
    if (!gpu_or_skip()) return;
    const int nt = 300;
    for (int ndim : {2, 3})
        for (const auto& [tilted, surface] : {std::pair{false, false}, std::pair{true, false}, std::pair{true, true}}) {
            Grid g;
            g.nx = ndim == 3 ? 47 : 161;
            g.ny = ndim == 3 ? 39 : 1;
            g.nz = ndim == 3 ? 43 : 121;
            g.dx = g.dy = g.dz = 10;
            std::vector<float> vp(g.size());
            AnisotropyFields extra;
            for (const char* name : {"epsilon", "delta"}) extra[name].resize(g.size());
            if (tilted) extra["theta"].resize(g.size());
            if (tilted && ndim == 3) extra["phi"].resize(g.size());
            for (int iz = 0; iz < g.nz; ++iz)
                for (int iy = 0; iy < g.ny; ++iy)
                    for (int ix = 0; ix < g.nx; ++ix) {
                        const std::size_t i = g.index(ix, iy, iz);
                        vp[i] = float(1800 + 8 * iz + 3 * std::sin(0.2 * ix));
                        extra["epsilon"][i] = float(0.2 + 0.05 * std::sin(0.1 * iz));
                        extra["delta"][i] = 0.1f;
                        if (tilted) extra["theta"][i] = float(0.5 + 0.2 * std::sin(0.15 * ix + 0.1 * iz));  // radians
                        if (tilted && ndim == 3) extra["phi"][i] = float(0.3 + 0.25 * std::cos(0.2 * iy));
                    }
            DomainOptions o;
            o.boundary = Boundary::Damping;
            o.pml_cells = 12;
            o.free_surface = surface;  // then the source and receivers near it
            // Half the TTI limit dt^2 (A + B) S2 sum 1/h^2 <= 4 (docs/anisotropy.md), A = vmax^2 (1 + 2 eps_max).
            const double vmax = 1803 + 8 * g.nz, sum = (ndim == 3 ? 3 : 2) / (g.dx * g.dx);
            o.dt = 0.5 * std::sqrt(4 / ((1.5 + 1) * vmax * vmax * stencil::second_derivative_symbol_max() * sum));
            const Domain d(g, vp, o, extra);
            const PropResult ref = propagate(d, false, nt, "swic", surface);
            for (const auto& kernel : kc::tti_kernel_names()) {
                const PropResult r = propagate(d, true, nt, kernel.c_str(), surface);
                const double et = rel_l2(r.traces, ref.traces), ef = rel_l2(r.field, ref.field);
                const double tol = tti_bound(nt, terms(ndim, tilted), unit_roundoff(Precision::Single));
                std::printf("%dD %s propagator%s, kernel %s, %d steps: relative L2 traces %.3g, wavefield %.3g (bound %.3g; "
                            "largest |trace| %.3g, |field| %.3g)\n",
                            ndim, tilted ? "TTI" : "VTI", surface ? " under a free surface" : "", kernel.c_str(), nt, et,
                            ef, tol, max_abs(ref.traces), max_abs(ref.field));
                INFO(ndim << "D " << (tilted ? "TTI" : "VTI") << (surface ? ", free surface" : "") << ", kernel " << kernel
                          << ": traces " << et
                          << ", wavefield " << ef << ", bound " << tol);
                CHECK(et <= tol);
                CHECK(ef <= tol);
            }
        }
}

