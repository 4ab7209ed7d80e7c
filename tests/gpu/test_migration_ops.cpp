// CudaPropagator's migration operations against CpuPropagator on the same inputs
// (damping boundary, 2D and 3D): the damped run itself, previous_wavefield, add_field,
// save_band / restore_band, reverse_time; the rebuild of a forward wavefield by
// stepping backwards with the saved edge band, on both backends; and the band history
// kept by the propagator (reserve_bands / store_band / load_band: CudaPropagator's in
// device memory and in pinned host memory against CpuPropagator's host default).
#include <algorithm>
#include <cstdlib>
#include <random>

#include "gpu_simulate.h"
#include "gpu_test.h"

using namespace rtm;
using namespace rtm::test;

namespace {

Run damped_run(int ndim, Precision prec, int nt) {
    return small_model_run(ndim, prec, Boundary::Damping, nt, {301.3, 233.7, 247.1});
}

struct Pair {
    Run r;
    Domain d;
    std::unique_ptr<Propagator> cpu, gpu;
    explicit Pair(const Run& run) : r(run), d(run.grid, velocity_field(run), run.domain) {
        cpu = make_cpu_propagator(d, r.precision);
        gpu = make_cuda_propagator(d, r.precision);
        const auto w = ricker(r.f0, r.domain.dt, r.nt);
        for (Propagator* p : {cpu.get(), gpu.get()}) {
            p->set_sources({d.point(r.source.x, r.source.y, r.source.z, "source")},
                           {std::vector<double>(w.begin(), w.end())});
            p->set_receivers({d.point(100, r.source.y, 40, "receiver")}, r.nt);
        }
    }
};

double rel(const std::vector<double>& a, const std::vector<double>& b) { return rel_l2(a.data(), b.data(), b.size()); }
double rel_f(const std::vector<float>& a, const std::vector<float>& b) {
    return rel(std::vector<double>(a.begin(), a.end()), std::vector<double>(b.begin(), b.end()));
}
double peak(const std::vector<double>& f) {
    double m = 0;
    for (double x : f) m = std::max(m, std::abs(x));
    return m;
}

void check_ops(int ndim, Precision prec) {
    // Every comparison below is after at most 111 steps (80 + 1 + 10 + 10 forward, 20
    // back): twin_bound (gpu_test.h) at 111 steps, fp32 8.4e-6, fp64 1.6e-14. The band
    // holds the fields rounded to fp32: in fp64 two fields 1e-14 apart round to the same
    // float but where they straddle a rounding boundary (one ulp, 2^-24): the fp32
    // floor 2^-23 (every value one ulp off) bounds save_band's comparison.
    const double tol = twin_bound(111, prec);
    const double tol_band = std::max(tol, std::ldexp(1.0, -23));
    Pair P(damped_run(ndim, prec, 200));
    INFO(ndim << "D, " << (prec == Precision::Single ? "fp32" : "fp64") << ", damping boundary");
    std::mt19937 rng(ndim * 10 + int(prec));
    std::uniform_real_distribution<double> U(-1, 1);
    int n = 0;
    for (; n < 80; ++n) {
        P.cpu->step(n);
        P.gpu->step(n);
    }
    // The damped run itself, and the previous wavefield.
    const auto cu = P.cpu->wavefield();
    CHECK(peak(cu) > 0);
    CHECK(rel(P.gpu->wavefield(), cu) <= tol);
    CHECK(rel(P.gpu->previous_wavefield(), P.cpu->previous_wavefield()) <= tol);

    // add_field right after a step: a random volume source of the field's size.
    const double amp = peak(cu);
    std::vector<double> f(P.d.window().size());
    for (double& x : f) x = U(rng) * amp / 5;
    P.cpu->step(n);
    P.gpu->step(n);
    ++n;
    P.cpu->add_field(f);
    P.gpu->add_field(f);
    {
        const double e = rel(P.gpu->wavefield(), P.cpu->wavefield());
        INFO("after add_field: relative L2 " << e);
        CHECK(e <= tol);
    }
    for (int k = 0; k < 10; ++k, ++n) {
        P.cpu->step(n);
        P.gpu->step(n);
    }
    // save_band: same values; restore_band with random values, then steps.
    REQUIRE(P.gpu->band_size() == P.cpu->band_size());
    REQUIRE(P.gpu->band_size() == P.d.band().size());
    std::vector<float> bc(P.cpu->band_size()), bg(P.gpu->band_size(), std::nanf(""));
    P.cpu->save_band(bc.data());
    P.gpu->save_band(bg.data());
    {
        const double e = rel_f(bg, bc);
        INFO("save_band: relative L2 " << e);
        CHECK(e <= tol_band);
    }
    // The band holds exactly the window's edge nodes of the wavefield.
    {
        const auto wf = P.gpu->wavefield();
        const Grid& g = P.d.window();
        std::size_t i = 0;
        bool same = true;
        for (int iz = 0; iz < g.nz; ++iz)
            for (int iy = 0; iy < g.ny; ++iy)
                for (int ix = 0; ix < g.nx; ++ix) {
                    const bool edge = ix < 4 || ix >= g.nx - 4 || iz < 4 || iz >= g.nz - 4 ||
                                      (ndim == 3 && (iy < 4 || iy >= g.ny - 4));
                    if (edge) same = same && float(wf[g.index(ix, iy, iz)]) == bg[i++];
                }
        CHECK(i == bg.size());
        CHECK(same);
    }
    std::vector<float> rb(bc.size());
    for (float& x : rb) x = float(U(rng) * amp);
    P.cpu->restore_band(rb.data());
    P.gpu->restore_band(rb.data());
    {
        std::vector<float> back(rb.size());
        P.gpu->save_band(back.data());
        CHECK(back == rb);
    }
    for (int k = 0; k < 10; ++k, ++n) {
        P.cpu->step(n);
        P.gpu->step(n);
    }
    {
        const double e = rel(P.gpu->wavefield(), P.cpu->wavefield());
        INFO("10 steps after restore_band: relative L2 " << e);
        CHECK(e <= tol);
    }
    // reverse_time swaps u[n] and u[n-1]; then steps run backwards.
    const auto u_before = P.gpu->wavefield(), prev_before = P.gpu->previous_wavefield();
    P.cpu->reverse_time();
    P.gpu->reverse_time();
    CHECK(P.gpu->wavefield() == prev_before);
    CHECK(P.gpu->previous_wavefield() == u_before);
    for (int k = 0; k < 20; ++k) {
        --n;
        P.cpu->step(n);
        P.gpu->step(n);
    }
    {
        const double e = rel(P.gpu->wavefield(), P.cpu->wavefield());
        const double ep = rel(P.gpu->previous_wavefield(), P.cpu->previous_wavefield());
        INFO("20 steps after reverse_time: relative L2 " << e << " (previous " << ep << ")");
        CHECK(e <= tol);
        CHECK(ep <= tol);
    }
}

// Forward N steps saving the band after each, reverse_time, then step(n) for n = N-1..1
// restoring band[n-1] after each: the window's interior needs nothing from outside the
// band, so the rebuilt u[n] equals the forward one up to rounding. Bound: the M steps
// back and the M forward steps they undo round independently (the backward step is a
// different expression, 2 u[n] - u[n+1] + ..., of the same numbers), about 30 fp32
// operations per update each: the random walk of twin_bound (gpu_test.h) over M steps
// (fp32: 1.2e-5 at M = 225; measured 2.6e-6 on the CPU, 2.0e-6 on an H200). GPU
// against CPU: both rebuilt fields carry such errors, independent: sqrt(2) more.
struct Rebuild {
    std::vector<double> err;  // relative L2 at each checked time
    std::vector<int> steps_back;
    std::vector<std::vector<double>> rebuilt;
};

Rebuild rebuild(Propagator& p, const Domain& d, int N, const std::vector<int>& times) {
    std::vector<std::vector<float>> band(N + 1, std::vector<float>(p.band_size(), 0.f));
    std::vector<std::vector<double>> fwd(N + 1);
    p.save_band(band[0].data());
    for (int n = 0; n < N; ++n) {
        p.step(n);
        p.save_band(band[n + 1].data());
        for (int t : times)
            if (t == n + 1) fwd[t] = p.wavefield();
    }
    p.reverse_time();
    Rebuild out;
    for (int n = N - 1; n >= 1; --n) {
        p.step(n);                         // u[n-1]
        p.restore_band(band[n - 1].data());
        for (int t : times)
            if (t == n - 1) {
                const auto u = p.wavefield();
                out.err.push_back(rel(u, fwd[t]));
                out.steps_back.push_back(N - t);
                out.rebuilt.push_back(u);
            }
    }
    (void)d;
    return out;
}

void check_rebuild(int ndim) {
    const int N = 300;
    const std::vector<int> times = {225, 150, 75};  // (checked in this order going back)
    Pair P(damped_run(ndim, Precision::Single, N));
    const Rebuild c = rebuild(*P.cpu, P.d, N, times);
    const Rebuild g = rebuild(*P.gpu, P.d, N, times);
    REQUIRE(c.err.size() == times.size());
    REQUIRE(g.err.size() == times.size());
    for (std::size_t i = 0; i < times.size(); ++i) {
        const double bound = std::sqrt(2.0) * twin_bound(c.steps_back[i], Precision::Single);
        const double cross = rel(g.rebuilt[i], c.rebuilt[i]);
        INFO(ndim << "D fp32, u[" << times[i] << "] rebuilt after " << c.steps_back[i] << " steps back: relative L2 cpu "
                  << c.err[i] << ", gpu " << g.err[i] << ", gpu vs cpu " << cross << " (bound " << bound << ")");
        CHECK(c.err[i] <= bound);
        CHECK(g.err[i] <= bound);
        CHECK(cross <= bound);
        if (i == times.size() - 1)
            WARN(ndim << "D fp32 rebuild of u[" << times[i] << "] after " << c.steps_back[i] << " steps back: cpu "
                      << c.err[i] << ", gpu " << g.err[i] << " (bound " << bound << ")");
    }
}

// Sets RTM_KEEP_HEADROOM_GB for the scope (1e9 GB: the band history goes to pinned
// host memory); nullptr leaves the default (device memory at these sizes).
struct Headroom {
    explicit Headroom(const char* gb) {
        if (gb) setenv("RTM_KEEP_HEADROOM_GB", gb, 1);
    }
    ~Headroom() { unsetenv("RTM_KEEP_HEADROOM_GB"); }
};

// The band history on both backends, used as migrate_shot uses it: reserve N + 1 slots,
// store slot 0 and slot n + 1 after each of N forward steps (no host wait in between),
// reverse_time, then step(n) for n = N-1..1 loading slot n - 1 after each. Checked:
//   - the rebuilt u[t] (t = 90, 75, 60 of N = 120) against the forward one and GPU
//     against CPU, within the rebuild bound sqrt(2) twin_bound(M) (M steps back; see
//     Rebuild above; fp32: the band is fp32 in both precisions, and in fp64 its
//     rounding, 2^-24 at the edge each step, is what the rebuilt field carries). Not
//     earlier: the bound takes the
//     rounding relative to the field being rebuilt, and before t = 60 the wavelet's
//     onset makes the field 10 to 1000 times smaller than during the steps back (CPU,
//     fp32: 3e-6 at u[60], 1.5e-5 at u[50], 2.4e-3 at u[30] with peaks 0.14, 0.034,
//     2.4e-4 in 2D);
//   - loads in any order (slots N, 0, N/2, ...; with pinned host memory most miss the
//     staging buffers): the band read back by save_band against the CPU's band of the
//     same slot, within twin_bound after the N = 120 steps (fp32, 8.8e-6; fp64: 2^-23,
//     the two fields differ by ~1e-14 and their fp32 roundings by at most one ulp,
//     2^-24 relative, where they straddle a rounding boundary); where
//     the CPU's band is all zero (the first steps, before anything reaches the
//     window's edge) the GPU's must be too;
//   - store then load after the wavefield moved on gives the stored band bit for bit;
//   - reserve_bands again with fewer slots reuses the allocation, with more makes a
//     new one; a slot beyond the reserved ones is an error.
void check_band_history(int ndim, Precision prec, bool host) {
    const int N = 120;
    const std::vector<int> times = {90, 75, 60};  // (checked in this order going back)
    const Headroom headroom(host ? "1e9" : nullptr);
    Pair P(damped_run(ndim, prec, N));
    INFO(ndim << "D, " << (prec == Precision::Single ? "fp32" : "fp64") << ", band history in "
              << (host ? "pinned host" : "device") << " memory");
    const std::size_t nb = P.gpu->band_size();
    for (Propagator* p : {P.cpu.get(), P.gpu.get()}) {
        p->reserve_bands(std::size_t(N) + 1);
        p->store_band(0);
    }
    const auto where = cuda_bands_where(*P.gpu);
    REQUIRE(where.first == (host ? 2 : 1));
    std::vector<std::vector<double>> fwd(N + 1);
    for (int n = 0; n < N; ++n)
        for (Propagator* p : {P.cpu.get(), P.gpu.get()}) {
            p->step(n);
            p->store_band(std::size_t(n) + 1);
            for (int t : times)
                if (t == n + 1 && p == P.gpu.get()) fwd[t] = p->wavefield();
        }
    for (Propagator* p : {P.cpu.get(), P.gpu.get()}) p->reverse_time();
    std::size_t checked = 0;
    for (int n = N - 1; n >= 1; --n)
        for (Propagator* p : {P.cpu.get(), P.gpu.get()}) {
            p->step(n);
            p->load_band(std::size_t(n) - 1);
            if (p != P.gpu.get()) continue;
            for (int t : times)
                if (t == n - 1) {
                    const auto g = P.gpu->wavefield(), c = P.cpu->wavefield();
                    const double bound = std::sqrt(2.0) * twin_bound(N - t, Precision::Single);
                    const double e = rel(g, fwd[t]), cross = rel(g, c);
                    INFO("u[" << t << "] rebuilt after " << N - t << " steps back: relative L2 to the forward "
                              << e << ", gpu vs cpu " << cross << " (bound " << bound << ")");
                    CHECK(peak(g) > 0);
                    CHECK(e <= bound);
                    CHECK(cross <= bound);
                    ++checked;
                }
        }
    CHECK(checked == times.size());

    const double tol = std::max(twin_bound(N, prec), std::ldexp(1.0, -23));
    std::vector<float> bc(nb), bg(nb);
    for (int s : {N, 0, N / 2, 1, N / 2 + 1, N / 2 - 1, N / 3, N - 1, N - 2, 2}) {
        P.cpu->load_band(std::size_t(s));
        P.gpu->load_band(std::size_t(s));
        std::fill(bg.begin(), bg.end(), std::nanf(""));
        P.cpu->save_band(bc.data());
        P.gpu->save_band(bg.data());
        if (std::all_of(bc.begin(), bc.end(), [](float x) { return x == 0.f; })) {
            INFO("slot " << s << " loaded out of order: the CPU's band is zero");
            CHECK(bg == bc);
            continue;
        }
        const double e = rel_f(bg, bc);
        INFO("slot " << s << " loaded out of order: relative L2 to the CPU's " << e);
        CHECK(e <= tol);
    }

    // Store, move on, load: bit for bit (several stores queued before any load).
    std::vector<std::vector<float>> stored;
    for (int s : {5, 6, 7, 8, 9, 10}) {
        P.gpu->step(s);
        P.gpu->store_band(std::size_t(s));
        stored.emplace_back(nb);
        P.gpu->save_band(stored.back().data());
    }
    for (int k = 0; k < 3; ++k) P.gpu->step(k);
    for (int i : {5, 0, 3, 1, 4, 2}) {
        P.gpu->load_band(std::size_t(5 + i));
        std::fill(bg.begin(), bg.end(), std::nanf(""));
        P.gpu->save_band(bg.data());
        INFO("slot " << 5 + i << " stored, then loaded");
        CHECK(bg == stored[i]);
    }

    // Reuse and growth.
    P.gpu->reserve_bands(std::size_t(N) / 2);
    CHECK(cuda_bands_where(*P.gpu) == where);
    CHECK_THROWS(P.gpu->store_band(std::size_t(N) / 2));
    P.gpu->reserve_bands(2 * std::size_t(N) + 2);
    const auto grown = cuda_bands_where(*P.gpu);
    CHECK(grown.first == where.first);
    for (std::size_t s : {std::size_t(0), 2 * std::size_t(N) + 1}) {
        P.gpu->store_band(s);
        std::vector<float> x(nb);
        P.gpu->save_band(x.data());
        P.gpu->step(0);
        P.gpu->load_band(s);
        std::fill(bg.begin(), bg.end(), std::nanf(""));
        P.gpu->save_band(bg.data());
        CHECK(bg == x);
    }
    CHECK_THROWS(P.gpu->load_band(2 * std::size_t(N) + 2));
}

}  // namespace

TEST_CASE("CudaPropagator with damping layers matches CpuPropagator, and so do its migration operations",
          "[gpu]") {
    if (!gpu_or_skip()) return;
    for (int ndim : {2, 3})
        for (Precision p : {Precision::Single, Precision::Double}) check_ops(ndim, p);
}

TEST_CASE("a wavefield rebuilt backwards from the saved edge band matches the forward one (GPU and CPU)", "[gpu]") {
    if (!gpu_or_skip()) return;
    check_rebuild(2);
    check_rebuild(3);
}

TEST_CASE("the band history kept on the GPU (device and pinned host memory) matches CpuPropagator's", "[gpu]") {
    if (!gpu_or_skip()) return;
    for (bool host : {false, true})
        for (int ndim : {2, 3})
            for (Precision p : {Precision::Single, Precision::Double}) check_band_history(ndim, p, host);
}
