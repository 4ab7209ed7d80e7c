// Every CUDA kernel against its CPU twin on fresh seeded random inputs: u, w, vdt2
// within the stability limit, C-PML profiles, random psi and zeta in the layers (or a
// random damping k in the layers instead), free surface on and off, 2D and 3D, sizes
// that are no tile multiples; 100 steps (fewer on the large boxes), relative L2 error
// within twin_bound (gpu_test.h: sqrt(180 N) 2^-p, 8.0e-6 in fp32 and 1.5e-14 in fp64 at
// N = 100), halos compared too. Boxes with layers run the q variants split (interior
// tiles on the plain kernel, the shell on the layer kernel) and, for some, unsplit.
#include <random>

#include "gpu_test.h"
#include "kernels/cpu/step_cpu.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/staged_copy.h"
#include "kernels/cuda/step_cuda.h"
#include "physics/cpml.h"
#include "physics/stencil.h"

using namespace rtm;
using namespace rtm::test;
namespace kc = rtm::kernels::cuda;

namespace {

struct Case {
    int ndim;
    int nx, ny, nz;
    int pml_lo, pml_hi;   // 0: no layers
    bool free_surface;
    bool damping = false;  // damping layers (StepArgs::damp) instead of C-PML
    int batch = 1;         // members stepped together (StepArgs::batch)
};

std::string describe(const Case& c, const std::string& variant, const char* prec) {
    char buf[240];
    std::snprintf(buf, sizeof buf, "%dD %dx%dx%d, %s layers %d/%d, free surface %s, variant %s, %s, batch %d",
                  c.ndim, c.nx, c.ny, c.nz, c.damping ? "damping" : "C-PML", c.pml_lo, c.pml_hi,
                  c.free_surface ? "on" : "off", variant.c_str(), prec, c.batch);
    return buf;
}

template <class T>
struct State {
    kernels::Box box;
    int batch = 1;
    T inv_h2[3], inv_h[3];
    kernels::CpmlMemory mem;  // psi and zeta kept near the layers, as the propagators keep them
    std::vector<T> u, w, v, damp, a[3], b[3], psi[3], zeta[3];
};

// fn(member, ix, iy, iz) at every computed point in axis ax's layers.
template <class F>
void for_layer_points(const kernels::Box& B, int batch, int ax, F&& fn) {
    const int n[3] = {B.nx, B.ny, B.nz};
    for (int m = 0; m < batch; ++m)
        for (int iz = 0; iz < B.nz; ++iz)
            for (int iy = 0; iy < B.ny; ++iy)
                for (int ix = 0; ix < B.nx; ++ix) {
                    const int c3[3] = {ix, iy, iz};
                    if (c3[ax] < B.pml_lo[ax] || c3[ax] >= n[ax] - B.pml_hi[ax]) fn(m, ix, iy, iz);
                }
}

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
    for (int ax = 0; ax < 3; ++ax) {
        if (ax == 1 && c.ndim == 2) continue;
        B.pml_lo[ax] = c.pml_lo;
        B.pml_hi[ax] = c.pml_hi;
    }
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
    // Leapfrog stability: vdt2 * sum(1/h^2) * 6.5016 <= 4; stay at 20..90% of it.
    const double vmax2 = 4 / (6.5016 * sum);
    s.u = random_field<T>(B, rng, -1, 1, c.batch);
    s.w = random_field<T>(B, rng, -1, 1, c.batch);
    s.v = random_field<T>(B, rng, 0.2 * vmax2, 0.9 * vmax2);
    const int n[3] = {B.nx, B.ny, B.nz};
    const double vmax = 3000, dt = std::sqrt(0.9 * vmax2) / vmax;
    if (c.damping) {
        // Random k in [0, 0.3) on the layer points (of any axis), 0 in the window.
        s.damp.assign(B.padded_size(), T(0));
        std::uniform_real_distribution<double> dk(0, 0.3);
        for (int iz = 0; iz < B.nz; ++iz)
            for (int iy = 0; iy < B.ny; ++iy)
                for (int ix = 0; ix < B.nx; ++ix) {
                    const int c3[3] = {ix, iy, iz};
                    bool layer = false;
                    for (int ax = 0; ax < 3; ++ax)
                        layer = layer || c3[ax] < B.pml_lo[ax] || c3[ax] >= n[ax] - B.pml_hi[ax];
                    if (layer) s.damp[B.at(ix, iy, iz)] = T(dk(rng));
                }
        return s;
    }
    s.mem = kernels::cpml_memory(B);
    for (int ax = 0; ax < 3; ++ax) {
        if (!B.pml_lo[ax] && !B.pml_hi[ax]) continue;
        const auto p = cpml_profile(n[ax], B.pml_lo[ax], B.pml_hi[ax], h[ax], dt, vmax, 10);
        s.a[ax].assign(p.a.begin(), p.a.end());
        s.b[ax].assign(p.b.begin(), p.b.end());
        // Random memory variables in the layer cells of their axis, zero elsewhere: the
        // states a propagation reaches (psi only advances in the layers; zeta, with
        // a = 0 and b = 1 outside them, stays 0).
        const std::size_t size = s.mem.size[ax];
        s.psi[ax].assign(size * c.batch, T(0));
        s.zeta[ax].assign(size * c.batch, T(0));
        std::uniform_real_distribution<double> dp(-0.01, 0.01), dz(-1e-4, 1e-4);
        kernels::StepArgs<T> at;
        at.box = B;
        at.mem = s.mem;
        for_layer_points(B, c.batch, ax, [&](int m, int ix, int iy, int iz) {
            const std::size_t q = m * size + std::size_t(at.mem_at(ax, ix, iy, iz));
            s.psi[ax][q] = T(dp(rng));
            s.zeta[ax][q] = T(dz(rng));
        });
    }
    return s;
}

template <class T>
kernels::StepArgs<T> host_args(State<T>& s) {
    kernels::StepArgs<T> A;
    A.box = s.box;
    A.mem = s.mem;
    A.batch = s.batch;
    for (int i = 0; i < 3; ++i) {
        A.inv_h2[i] = s.inv_h2[i];
        A.inv_h[i] = s.inv_h[i];
        A.a[i] = s.a[i].empty() ? nullptr : s.a[i].data();
        A.b[i] = s.b[i].empty() ? nullptr : s.b[i].data();
        A.psi[i] = s.psi[i].empty() ? nullptr : s.psi[i].data();
        A.zeta[i] = s.zeta[i].empty() ? nullptr : s.zeta[i].data();
    }
    A.vdt2 = s.v.data();
    A.damp = s.damp.empty() ? nullptr : s.damp.data();
    return A;
}

template <class T>
void check_step(const Case& c, const std::string& variant, unsigned seed, int steps = 100, bool split = true,
                int zchunk = 16, int overlap = 0, cudaStream_t stream = nullptr) {
    const double tol = twin_bound(steps, sizeof(T) == 4 ? Precision::Single : Precision::Double);
    const char* prec = sizeof(T) == 4 ? "fp32" : "fp64";
    State<T> cpu = make_state<T>(c, seed);
    State<T> init = cpu;

    // GPU copy of the same state.
    kc::DeviceBuffer<T> du(init.u), dw(init.w), dv(init.v), ddamp, da[3], db[3], dpsi[3], dzeta[3];
    kernels::StepArgs<T> G = host_args(init);
    if (!init.damp.empty()) {
        ddamp.upload(init.damp);
        G.damp = ddamp.data();
    }
    for (int i = 0; i < 3; ++i) {
        if (init.a[i].empty()) continue;
        da[i].upload(init.a[i]);
        db[i].upload(init.b[i]);
        dpsi[i].upload(init.psi[i]);
        dzeta[i].upload(init.zeta[i]);
        G.a[i] = da[i].data();
        G.b[i] = db[i].data();
        G.psi[i] = dpsi[i].data();
        G.zeta[i] = dzeta[i].data();
    }
    G.vdt2 = dv.data();
    kc::LaunchConfig cfg;
    cfg.variant = kc::parse_variant(variant);
    cfg.zchunk = variant == "naive" ? 0 : zchunk;  // 16: several chunks per column
    cfg.split = split;
    cfg.overlap = overlap;

    kernels::StepArgs<T> H = host_args(cpu);
    T* hu = cpu.u.data();
    T* hw = cpu.w.data();
    T* gu = du.data();
    T* gw = dw.data();
    for (int n = 0; n < steps; ++n) {
        H.u = hu;
        H.w = hw;
        kernels::step_cpu(H);
        std::swap(hu, hw);
        G.u = gu;
        G.w = gw;
        kc::step_cuda(G, cfg, stream);
        std::swap(gu, gw);
    }
    RTM_CUDA_CHECK(cudaDeviceSynchronize());
    // After an even number of swaps u_ holds u[n]; compare both fields.
    const bool even = steps % 2 == 0;
    const auto gpu_u = (even ? du : dw).download();
    const auto gpu_w = (even ? dw : du).download();
    const auto& cpu_u = even ? cpu.u : cpu.w;
    const auto& cpu_w = even ? cpu.w : cpu.u;
    INFO(describe(c, variant, prec) << (split ? "" : ", one launch (no split)") << ", overlap " << overlap
                                    << ", seed " << seed << ", "
                                    << steps << " steps, bound " << tol);
    const Diff du_ = compare(cpu.box, gpu_u, cpu_u);
    const Diff dw_ = compare(cpu.box, gpu_w, cpu_w);
    INFO("u[n]: relative L2 " << du_.rel << ", " << du_.at);
    INFO("u[n-1]: relative L2 " << dw_.rel << ", " << dw_.at);
    CHECK(du_.rel <= tol);
    CHECK(dw_.rel <= tol);
    for (int i = 0; i < 3; ++i) {
        if (init.psi[i].empty()) continue;
        const Diff dp = compare(cpu.box, dpsi[i].download(), cpu.psi[i]);
        const Diff dz = compare(cpu.box, dzeta[i].download(), cpu.zeta[i]);
        // zeta accumulates a t, t = d_ii u + d_i psi_i: its roundings are of the size of
        // the stencil's terms, sum_k |c_k| |u|, not of t, which cancels them. Its
        // relative difference is the twin bound times that cancellation factor,
        // kappa = || sum_k |c_k| |u_k| || / || sum_k c_k u_k || over zeta's points
        // (measured on the CPU's field, as the dot tests measure theirs).
        // (psi and zeta as the propagators keep them, kernels::CpmlMemory: the positions
        // named above are of a wavefield's layout.)
        const long st = i == 0 ? 1 : i == 1 ? cpu.box.sy() : cpu.box.sz();
        double terms = 0, sum = 0;
        for_layer_points(cpu.box, cpu.batch, i, [&](int m, int ix, int iy, int iz) {
            const std::size_t p = m * cpu.box.padded_size() + std::size_t(cpu.box.at(ix, iy, iz));
            double a = std::abs(stencil::c2(0) * double(cpu_u[p])), t = stencil::c2(0) * double(cpu_u[p]);
            for (int k = 1; k <= stencil::R; ++k) {
                a += std::abs(stencil::c2(k)) * (std::abs(double(cpu_u[p + k * st])) + std::abs(double(cpu_u[p - k * st])));
                t += stencil::c2(k) * (double(cpu_u[p + k * st]) + double(cpu_u[p - k * st]));
            }
            terms += a * a;
            sum += t * t;
        });
        const double kappa = sum > 0 ? std::max(1.0, std::sqrt(terms / sum)) : 1.0;
        INFO("axis " << i << ": psi relative L2 " << dp.rel << ", " << dp.at << "; zeta relative L2 " << dz.rel
                     << " (bound " << tol * kappa << ", cancellation factor " << kappa << "), " << dz.at);
        CHECK(dp.rel <= tol);
        CHECK(dz.rel <= tol * kappa);
    }
}

const Case kCases[] = {
    {3, 45, 37, 41, 6, 7, false},   // layers all round
    {3, 45, 37, 41, 6, 7, true},    // free surface on top
    {3, 53, 19, 35, 0, 0, false},   // no layers: interior kernel only
    {3, 33, 29, 23, 0, 0, true},    // no layers, free surface
    {2, 157, 1, 93, 9, 8, false},
    {2, 157, 1, 93, 9, 8, true},
    {2, 131, 1, 77, 0, 0, false},
    {3, 40, 33, 37, 0, 6, false},   // layers at the high ends only (C-PML memory kept on one side)
    {2, 131, 1, 77, 7, 0, false},   // 2D, layers at the low ends only
    {3, 45, 37, 41, 6, 7, false, true},  // damping layers all round
    {3, 45, 37, 41, 6, 7, true, true},   // damping, free surface on top
    {2, 157, 1, 93, 9, 8, false, true},
    {2, 157, 1, 93, 9, 8, true, true},
    // The fp32 TMA tiles start R columns left of the box (kTileShift): where nx + R passes
    // a multiple of the tile width, the shift adds a column of tiles (32 wide in 3D, 128
    // in 2D); nx = 62 also leaves a thread of the vector kernel 2 of its 4 points.
    {3, 64, 21, 23, 6, 7, false},
    {3, 62, 19, 25, 0, 0, false},
    {2, 128, 1, 61, 9, 8, false},
};

}  // namespace

TEST_CASE("CUDA step matches step_cpu to rounding in fp32 after 100 steps (every variant, 2D and 3D, layers, free surface)",
          "[gpu]") {
    if (!gpu_or_skip()) return;
    unsigned seed = 1000;
    for (const auto& c : kCases)
        for (const auto& v : kc::variant_names()) {
            // 2D: one kernel of each kind (q, t with 6 and 12 rows ahead, the vector rows)
            if (c.ndim == 2 && v != "naive" && v != "q32x16" && v != "t32x16" && v != "t32x8s6" && v != "t32x32v4")
                continue;
            check_step<float>(c, v, seed++);
        }
}

TEST_CASE("CUDA step matches step_cpu to rounding in fp64 after 100 steps", "[gpu]") {
    if (!gpu_or_skip()) return;
    unsigned seed = 2000;
    for (const auto& c : kCases)
        for (const char* v : {"naive", "q32x16", "q32x8", "t32x16", "t32x32v4"}) {  // (v4: t32x16's kernels)
            if (c.ndim == 2 && std::string(v) == "q32x8") continue;
            check_step<double>(c, v, seed++);
        }
}

TEST_CASE("CUDA step with layers in one launch (no interior split) matches step_cpu", "[gpu]") {
    // (t variants: the TMA kernel's own layer arithmetic over the whole box)
    if (!gpu_or_skip()) return;
    unsigned seed = 4000;
    for (const auto& c : kCases) {
        if (!c.pml_lo && !c.pml_hi) continue;
        for (const char* v : {"q32x16", "q32x8", "t32x8", "t32x16"}) {
            if (c.ndim == 2 && std::string(v) != "q32x16" && std::string(v) != "t32x8") continue;
            check_step<float>(c, v, seed++, 100, false);
        }
    }
}

TEST_CASE("CUDA step with pass 1 / the shell on a second stream (overlap 1, 2) matches step_cpu", "[gpu]") {
    if (!gpu_or_skip()) return;
    unsigned seed = 5000;
    for (int ov : {1, 2})
        for (const auto& c : kCases) {
            if (!c.pml_lo && !c.pml_hi) continue;
            for (const char* v : {"q32x8", "q32x16", "t32x8"}) {
                if (c.ndim == 2 && std::string(v) != "q32x16") continue;
                check_step<float>(c, v, seed++, 100, true, 16, ov);
            }
            check_step<double>(c, c.ndim == 3 ? "q32x8" : "q32x16", seed++, 100, true, 16, ov);
        }
    // Automatic z chunks on a larger box (many blocks in both launches at once), and a
    // caller's own stream (the side stream forks from and joins into it).
    cudaStream_t st = nullptr;
    RTM_CUDA_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    check_step<float>({3, 131, 97, 150, 20, 20, false}, "q32x8", 5101, 20, true, 0, 1, st);
    check_step<float>({3, 131, 97, 150, 20, 20, true}, "q32x8", 5102, 20, true, 0, 2, st);
    check_step<float>({3, 131, 97, 150, 20, 20, false, true}, "q32x8", 5103, 20, true, 0, 2, st);
    check_step<float>({3, 131, 97, 150, 20, 20, false}, "q32x8", 5104, 20, true, 0, 2);
    RTM_CUDA_CHECK(cudaStreamDestroy(st));
}

TEST_CASE("CUDA step with automatic z chunks matches step_cpu on a larger 3D box", "[gpu]") {
    if (!gpu_or_skip()) return;
    check_step<float>({3, 131, 97, 150, 20, 20, false}, "q32x8", 3004, 20, true, 0);
    check_step<float>({3, 131, 97, 150, 20, 20, false, true}, "q32x8", 3005, 20, true, 0);
    check_step<double>({3, 131, 97, 150, 20, 20, true, true}, "q32x16", 3006, 20, true, 0);
    check_step<float>({3, 131, 97, 150, 20, 20, false}, "q32x16", 3001, 20, true, 0);
    check_step<float>({3, 131, 97, 150, 20, 20, true}, "q32x8", 3002, 20, true, 0);
    check_step<float>({3, 131, 97, 150, 20, 20, false}, "t32x16", 3007, 20, true, 0);
    check_step<float>({3, 131, 97, 150, 0, 0, true}, "t32x8s6", 3008, 20, true, 0);
    check_step<float>({3, 131, 97, 150, 0, 0, false}, "t32x32v4", 3012, 20, true, 0);
    check_step<double>({3, 131, 97, 150, 20, 20, false, true}, "t32x8", 3009, 20, true, 0);
    // Chunks shorter than the TMA kernels' copy-ahead depth (3 planes, the last 2).
    for (const char* v : {"t32x16", "t32x8s6"}) {
        check_step<float>({3, 45, 37, 41, 0, 0, false}, v, 3010, 30, true, 3);
        check_step<float>({3, 45, 37, 41, 6, 7, true}, v, 3011, 30, true, 3);
    }
    check_step<float>({3, 45, 37, 41, 0, 0, false}, "t32x32v4", 3013, 30, true, 3);  // (3D with layers: t32x16's kernels)
    // 2D vector rows: automatic z chunks, alone and as the interior beside the layer kernel.
    check_step<float>({2, 1001, 1, 403, 0, 0, true}, "t32x32v4", 3014, 20, true, 0);
    check_step<float>({2, 1001, 1, 403, 20, 20, false}, "t32x32v4", 3015, 20, true, 0);
    check_step<float>({2, 157, 1, 93, 9, 8, false}, "t32x32v4", 3016, 30, true, 3);
    // C-PML pass 1 walks y and z layers in pieces when its columns are few (on a GPU of
    // 3+ SMs, 5 pieces of 3 and 5 cells, the last shorter: 13 and 22 cells).
    check_step<float>({2, 301, 1, 181, 13, 22, false}, "t32x32v4", 3017, 20, true, 0);
    check_step<float>({3, 131, 97, 150, 13, 22, false}, "t32x16", 3018, 20, true, 0);
    // The library's default path: t32x32v4, overlap 2 (pass 1 and the shell on the side
    // stream, the 2D vector interior on the caller's), automatic chunks (the shell's own,
    // down to 4 planes), damping and C-PML, one shot and a batch; and damping on chunks
    // shorter than the rows copied ahead (its k loaded a step ahead, 1-plane chunks).
    unsigned seed = 3020;
    for (const Case& c : {Case{2, 301, 1, 181, 20, 20, false, true}, Case{2, 301, 1, 181, 20, 20, true, false, 5},
                          Case{2, 301, 1, 181, 20, 20, false, true, 5}, Case{3, 131, 97, 150, 20, 20, false, true}})
        check_step<float>(c, "t32x32v4", seed++, 20, true, 0, 2);
    check_step<float>({3, 45, 37, 41, 6, 7, true, true}, "t32x16", seed++, 30, true, 1);
    check_step<float>({2, 157, 1, 93, 9, 8, false, true}, "t32x32v4", seed++, 30, true, 3);
}

TEST_CASE("CUDA step of a batch of boxes in one launch matches step_cpu member by member", "[gpu]") {
    if (!gpu_or_skip()) return;
    // Members differ (own random u, w, psi, zeta), share vdt2, damping and profiles;
    // split and unsplit launches, fixed and automatic z chunks, every kind of layer.
    unsigned seed = 6000;
    for (Case c : kCases) {
        c.batch = 3;
        for (const char* v : {"naive", "q32x16", "q32x8", "t32x16", "t32x32v4"}) {
            if (c.ndim == 2 && std::string(v) == "q32x8") continue;
            check_step<float>(c, v, seed++, 40);
            check_step<float>(c, v, seed++, 40, false, 0);
        }
        check_step<double>(c, "q32x16", seed++, 40, true, 0, 2);
    }
    check_step<float>({2, 301, 1, 181, 20, 20, false, false, 17}, "q32x16", seed++, 20, true, 0, 2);
    check_step<float>({2, 301, 1, 181, 20, 20, true, true, 17}, "q32x16", seed++, 20, true, 0, 2);
}

TEST_CASE("CUDA stencil-only kernel matches the CPU Laplacian", "[gpu]") {
    if (!gpu_or_skip()) return;
    for (const Case& c : {Case{3, 45, 37, 41, 0, 0, false}, Case{2, 157, 1, 93, 0, 0, false}})
        for (const auto& v : kc::variant_names()) {
            if (c.ndim == 2 && v != "naive" && v != "q32x16" && v != "t32x8s6" && v != "t32x32v4") continue;
            State<float> s = make_state<float>(c, 77);
            const auto& B = s.box;
            // CPU reference in double.
            std::vector<double> ref(B.padded_size(), 0.0);
            const long st[3] = {1, B.sy(), B.sz()};
            for (int iz = 0; iz < B.nz; ++iz)
                for (int iy = 0; iy < B.ny; ++iy)
                    for (int ix = 0; ix < B.nx; ++ix) {
                        const long p = B.at(ix, iy, iz);
                        double lap = 0;
                        for (int ax = 0; ax < 3; ++ax) {
                            if (ax == 1 && B.ndim == 2) continue;
                            double d2 = stencil::c2(0) * s.u[p];
                            for (int k = 1; k <= 4; ++k) d2 += stencil::c2(k) * (s.u[p + k * st[ax]] + s.u[p - k * st[ax]]);
                            lap += d2 * s.inv_h2[ax];
                        }
                        ref[p] = lap;
                    }
            kc::DeviceBuffer<float> du(s.u), dout(std::vector<float>(B.padded_size(), 0.f));
            kc::LaunchConfig cfg;
            cfg.variant = kc::parse_variant(v);
            cfg.zchunk = v == "naive" ? 0 : 16;
            kc::stencil_cuda<float>(B, s.inv_h2, du.data(), dout.data(), cfg);
            const Diff d = compare(B, dout.download(), ref);
            INFO(describe(c, v, "fp32") << ": relative L2 " << d.rel << ", " << d.at);
            // One fp32 Laplacian of fp32 inputs against the double one: 25 roundings
            // (3D), each within 2^-24 of partial sums of up to twice the result's size
            // (white noise: the centre terms, 3 x 2.85 |u| / h^2, against an rms
            // Laplacian of 6.3 |u| / h^2): rms sqrt(25) 2^-24 / sqrt(3) x 2 = 3.4e-7,
            // three times that for a bound: 1e-6.
            CHECK(d.rel <= 1e-6);
        }
}

TEST_CASE("CUDA free-surface mirror matches free_surface_cpu", "[gpu]") {
    if (!gpu_or_skip()) return;
    State<float> s = make_state<float>({3, 45, 37, 41, 0, 0, true}, 99);
    kc::DeviceBuffer<float> d(s.u);
    kernels::free_surface_cpu(s.box, s.u.data());
    kc::free_surface_cuda(s.box, d.data());
    const Diff df = compare(s.box, d.download(), s.u);
    INFO(df.at);
    CHECK(df.max_abs == 0);
    // A batch of 3 boxes in one launch.
    State<float> b = make_state<float>({2, 157, 1, 93, 0, 0, true, false, 3}, 98);
    kc::DeviceBuffer<float> db(b.u);
    for (int m = 0; m < 3; ++m) kernels::free_surface_cpu(b.box, b.u.data() + m * b.box.padded_size());
    kc::free_surface_cuda(b.box, db.data(), nullptr, 3);
    const Diff dbf = compare(b.box, db.download(), b.u);
    INFO(dbf.at);
    CHECK(dbf.max_abs == 0);
}

// upload_staged and download_staged move bytes, nothing else: every size class they take
// (empty, one plain copy below 1 MiB, exactly 1 MiB, one chunk of 32 MiB, two whole
// chunks, five and a byte (both staging buffers reused twice and more)), exactly, each
// direction against a plain cudaMemcpy (so that a fault shared by both could not cancel
// out), with random values (chunks out of order would show); and after a stream's work.
TEST_CASE("upload_staged and download_staged move the bytes exactly at every size, after the stream's queued work",
          "[gpu]") {
    if (!gpu_or_skip()) return;
    constexpr std::size_t MiB = std::size_t(1) << 20, chunk = 32 * MiB;
    std::mt19937_64 rng(7);
    for (std::size_t bytes : {std::size_t(0), std::size_t(24), MiB - 8, MiB, chunk, 2 * chunk, 5 * chunk + 1}) {
        INFO(bytes << " bytes");
        std::vector<unsigned char> host(bytes), back(bytes, 0), plain(bytes, 0);
        for (auto& x : host) x = static_cast<unsigned char>(rng());
        kc::DeviceBuffer<unsigned char> dev(bytes);
        kc::upload_staged(host.data(), bytes, dev.data());
        if (bytes) REQUIRE(cudaMemcpy(plain.data(), dev.data(), bytes, cudaMemcpyDeviceToHost) == cudaSuccess);
        REQUIRE(plain == host);
        dev.zero();
        if (bytes) REQUIRE(cudaMemcpy(dev.data(), host.data(), bytes, cudaMemcpyHostToDevice) == cudaSuccess);
        kc::download_staged(dev.data(), bytes, back.data());
        REQUIRE(back == host);
    }
    // Copies queued on a non-blocking stream after its other work: the upload after the
    // zeroing, the download after the upload.
    cudaStream_t s;
    REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
    const std::size_t n = (70 * MiB) / 8;
    std::vector<double> host(n);
    for (auto& x : host) x = double(rng());
    kc::DeviceBuffer<double> dev(n);
    dev.zero(s);
    dev.upload(host, s);
    std::vector<double> back(n);
    kc::download_staged(dev.data(), n * sizeof(double), back.data(), s);
    REQUIRE(back == host);
    REQUIRE(dev.download() == host);
    cudaStreamDestroy(s);
}
