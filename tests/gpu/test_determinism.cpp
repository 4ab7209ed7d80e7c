// Reproducible GPU results by construction (issue 8, items 5 and 7):
// - injection where stencils overlap heavily is bit for bit the CPU twin's
//   (kernels::inject_cpu), at the kernel and at the propagator, and two GPU runs agree
//   bit for bit; so do two GPU migrations of a shot with such receivers;
// - CudaPropagator::finite() finds one planted NaN (or infinity) in any batch member;
// - a batch whose launches would exceed CUDA's 65535 grid blocks along z equals its
//   members run alone, bit for bit.
// The command-line checks are in test_determinism_cli.cpp.
#include <algorithm>
#include <cstdlib>
#include <random>

#include "gpu_simulate.h"
#include "gpu_test.h"
#include "kernels/cpu/inject_cpu.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/points_cuda.h"
#include "migration_fixture.h"
#include "propagation/injection.h"

using namespace rtm;
using namespace rtm::test;

namespace {

// n receiver stencils at random off-grid points within `cells` cells of `c` (2D: y = 0):
// with 8-point stencils per axis nearly every tap lands on a point that many others hit.
std::vector<PointStencil> cluster(const Domain& d, Position c, int n, double cells, std::mt19937& rng) {
    const Grid& g = d.window();
    std::uniform_real_distribution<double> off(-cells, cells);
    std::vector<PointStencil> out;
    for (int i = 0; i < n; ++i)
        out.push_back(d.point(c.x + off(rng) * g.dx, g.ny > 1 ? c.y + off(rng) * g.dy : 0.0, c.z + off(rng) * g.dz,
                              "receiver"));
    return out;
}

// n traces of nt samples, random in [-1, 1), a few exact zeros (skipped taps) among them.
std::vector<std::vector<double>> random_traces(int n, int nt, std::mt19937& rng) {
    std::uniform_real_distribution<double> v(-1, 1);
    std::vector<std::vector<double>> t(n, std::vector<double>(nt));
    for (auto& tr : t)
        for (double& x : tr) x = v(rng) < -0.9 ? 0.0 : v(rng);
    return t;
}

// The largest number of taps that land on one point.
int most_taps(const kernels::Injection& inj) {
    int m = 0;
    for (std::size_t t = 0; t + 1 < inj.offset.size(); ++t) m = std::max(m, inj.offset[t + 1] - inj.offset[t]);
    return m;
}

template <class T>
void check_inject_kernel(int ndim) {
    INFO(ndim << "D, " << (sizeof(T) == 4 ? "fp32" : "fp64"));
    std::mt19937 rng(7 + ndim);
    const Run r = small_model_run(ndim, sizeof(T) == 4 ? Precision::Single : Precision::Double, Boundary::Cpml, 12,
                                  {301.3, 233.7, 147.1});
    const Domain d(r.grid, velocity_field(r), r.domain);
    const auto where = cluster(d, r.source, 200, 2.0, rng);
    const auto inj = injection_of(d, where, random_traces(200, r.nt, rng));
    // Taps of 200 stencils 8 points wide per axis, within 2 cells of one point: the
    // central points take a tap from nearly every source.
    INFO("taps " << inj.coef.size() << " on " << inj.target.size() << " points, at most " << most_taps(inj)
                 << " on one");
    REQUIRE(most_taps(inj) >= 150);

    const auto w0 = random_field<T>(d.box(), rng, -1, 1);
    std::vector<T> cpu = w0;
    kernels::cuda::DeviceBuffer<T> w(w0);
    kernels::cuda::DeviceBuffer<long> target(inj.target);
    kernels::cuda::DeviceBuffer<int> offset(inj.offset), source(inj.source);
    kernels::cuda::DeviceBuffer<double> coef(inj.coef), traces(inj.traces);
    for (int n = 0; n < r.nt; ++n) {
        kernels::inject_cpu(inj, n, cpu.data());
        kernels::cuda::inject_cuda(w.data(), int(inj.target.size()), target.data(), offset.data(), source.data(),
                                   coef.data(), traces.data(), inj.nt, inj.inv_vol, n);
    }
    RTM_CUDA_CHECK(cudaDeviceSynchronize());
    const auto gpu = w.download();
    const Diff e = compare(d.box(), gpu, cpu);
    INFO("GPU vs CPU injection over " << r.nt << " steps: " << e.at);
    CHECK(gpu == cpu);  // bit for bit: the same roundings in the same order

    // The check can fail: the same taps added in another order (each point's taps
    // reversed, as an unordered atomic sum may add them) change the last bits.
    kernels::Injection reversed = inj;
    for (std::size_t t = 0; t + 1 < inj.offset.size(); ++t) {
        std::reverse(reversed.source.begin() + inj.offset[t], reversed.source.begin() + inj.offset[t + 1]);
        std::reverse(reversed.coef.begin() + inj.offset[t], reversed.coef.begin() + inj.offset[t + 1]);
    }
    std::vector<T> other = w0;
    for (int n = 0; n < r.nt; ++n) kernels::inject_cpu(reversed, n, other.data());
    CHECK(other != cpu);
}

// The GPU and CPU propagators with 200 clustered sources, random traces; fp32.
struct Clustered {
    Run r;
    Domain d;
    std::vector<PointStencil> where;
    std::vector<std::vector<double>> traces;
    Clustered(int ndim, Boundary b, int nt)
        : r(small_model_run(ndim, Precision::Single, b, nt, {301.3, 233.7, 147.1})), d(r.grid, velocity_field(r), r.domain) {
        std::mt19937 rng(11 + ndim);
        where = cluster(d, r.source, 200, 2.0, rng);
        traces = random_traces(200, nt, rng);
    }
    std::unique_ptr<Propagator> make(bool gpu) const {
        auto p = gpu ? make_cuda_propagator(d, r.precision) : make_cpu_propagator(d, r.precision);
        p->set_sources(where, traces);
        std::mt19937 rng(3);  // the same five receivers on every propagator
        p->set_receivers(cluster(d, r.source, 5, 3.0, rng), r.nt);
        return p;
    }
};

// Sets an environment variable for the scope.
struct Env {
    std::string name;
    Env(const char* n, const char* v) : name(n) { setenv(n, v, 1); }
    ~Env() { unsetenv(name.c_str()); }
};

}  // namespace

TEST_CASE("GPU injection of heavily overlapping stencils equals the CPU twin bit for bit (fp32, fp64, 2D, 3D)",
          "[gpu]") {
    if (!gpu_or_skip()) return;
    for (int ndim : {2, 3}) {
        check_inject_kernel<float>(ndim);
        check_inject_kernel<double>(ndim);
    }
}

TEST_CASE("200 sources within two cells: the GPU's first step equals the CPU's bit for bit, two GPU runs agree bit for bit",
          "[gpu]") {
    if (!gpu_or_skip()) return;
    for (int ndim : {2, 3}) {
        INFO(ndim << "D");
        const Clustered c(ndim, Boundary::Cpml, 200);
        // From rest the step adds nothing (2*0 - 0 + vdt2 * 0 = 0 exactly on both), so
        // u[1] is the injection alone, which must agree bit for bit.
        auto gpu = c.make(true), cpu = c.make(false);
        gpu->step(0);
        cpu->step(0);
        const auto g1 = gpu->wavefield(), c1 = cpu->wavefield();
        double peak = 0;
        for (double x : c1) peak = std::max(peak, std::abs(x));
        CHECK(peak > 0);
        CHECK(g1 == c1);
        // The whole run twice on fresh GPU propagators, and once more after reset().
        for (int n = 1; n < c.r.nt; ++n) gpu->step(n);
        auto again = c.make(true);
        for (int n = 0; n < c.r.nt; ++n) again->step(n);
        CHECK(gpu->wavefield() == again->wavefield());
        CHECK(gpu->receiver_traces() == again->receiver_traces());
        again->reset();
        for (int n = 0; n < c.r.nt; ++n) again->step(n);
        CHECK(gpu->wavefield() == again->wavefield());
    }
}

TEST_CASE("migrate_shot on the GPU twice with 200 receivers within two cells gives identical images bit for bit",
          "[gpu]") {
    if (!gpu_or_skip()) return;
    for (int ndim : {2, 3}) {
        INFO(ndim << "D");
        const int nx = ndim == 3 ? 41 : 121, ny = ndim == 3 ? 37 : 1, nz = ndim == 3 ? 41 : 61;
        const Model m = make_model(nx, ny, nz, 10, [](double x, double, double z) { return 1800 + z + 0.2 * x; });
        ShotGather shot = shot_geometry(m, nx * 5 + 3.1, ndim == 3 ? ny * 5 + 1.7 : 0, 20, 0.3, 0.002);
        std::mt19937 rng(5);
        std::uniform_real_distribution<double> off(-20, 20), v(-1, 1);
        shot.receivers.clear();
        shot.channels.clear();
        for (int i = 0; i < 200; ++i) {
            shot.receivers.push_back({shot.source.x + 40 + off(rng), ndim == 3 ? shot.source.y + off(rng) : 0.0,
                                      30 + off(rng)});
            shot.channels.push_back(i + 1);
        }
        shot.data.resize(shot.receivers.size() * std::size_t(shot.nt));
        for (float& x : shot.data) x = float(v(rng));
        MigrationOptions opt;
        opt.aperture = -1;
        opt.propagation.pml_cells = 15;
        opt.propagation.backend.gpu = true;
        const Wavelet w = ricker_wavelet(15);
        const ShotMigration a = migrate_shot(m, shot, w, opt), b = migrate_shot(m, shot, w, opt);
        double peak = 0;
        for (double x : a.image) peak = std::max(peak, std::abs(x));
        CHECK(peak > 0);
        CHECK(a.image == b.image);
        CHECK(a.illumination == b.illumination);
    }
}

TEST_CASE("CudaPropagator::finite() reports one planted NaN or infinity in any batch member, and not a clean field",
          "[gpu]") {
    if (!gpu_or_skip()) return;
    for (int ndim : {2, 3})
        for (Precision prec : {Precision::Single, Precision::Double}) {
            INFO(ndim << "D, " << (prec == Precision::Single ? "fp32" : "fp64"));
            const Run r = small_model_run(ndim, prec, Boundary::Cpml, 30, {301.3, 233.7, 147.1});
            const Domain d(r.grid, velocity_field(r), r.domain);
            const auto w = ricker(r.f0, r.domain.dt, r.nt);
            const std::vector<double> wav(w.begin(), w.end());
            // One NaN (or infinity) through add_field at one window node, after clean steps.
            for (double bad : {std::nan(""), HUGE_VAL}) {
                auto p = make_cuda_propagator(d, prec);
                p->set_sources({d.point(r.source.x, r.source.y, r.source.z, "source")}, {wav});
                p->set_receivers({}, r.nt);
                for (int n = 0; n < 10; ++n) p->step(n);
                CHECK(p->finite());
                std::vector<double> f(d.window().size(), 0.0);
                f[d.window().index(d.window().nx - 1, 0, d.window().nz - 1)] = bad;  // the last window node
                p->add_field(f);
                CHECK_FALSE(p->finite());
            }
            // A batch of 3: member 2's trace turns NaN at step 20, members 0 and 1 stay clean.
            auto p = make_cuda_propagator(d, prec, 3);
            std::vector<PointStencil> src;
            for (int m = 0; m < 3; ++m)
                src.push_back(member_stencil(d.point(r.source.x, r.source.y, r.source.z, "source"), d.box(), m));
            auto tainted = wav;
            tainted[20] = std::nan("");
            p->set_sources(src, {wav, wav, tainted});
            p->set_receivers({}, r.nt);
            for (int n = 0; n < r.nt; ++n) {
                p->step(n);
                INFO("after step " << n);
                CHECK(p->finite() == (n < 20));
            }
        }
}

TEST_CASE("a GPU batch whose launches exceed 65535 z blocks equals its members run alone, bit for bit", "[gpu]") {
    if (!gpu_or_skip()) return;
    struct Config {
        Boundary boundary;
        bool free_surface;
        const char* variant;  // nullptr: the default
    };
    for (const Config cf : {Config{Boundary::Cpml, false, nullptr}, Config{Boundary::Damping, true, "naive"},
                            Config{Boundary::Cpml, true, "q32x16"}}) {
        INFO((cf.boundary == Boundary::Cpml ? "C-PML" : "damping") << ", free surface " << cf.free_surface
                                                                   << ", variant " << (cf.variant ? cf.variant : "default"));
        std::unique_ptr<Env> env;
        if (cf.variant) env = std::make_unique<Env>("RTM_CUDA_VARIANT", cf.variant);
        Run r = small_model_run(2, Precision::Single, cf.boundary, 60, {301.3, 0, 147.1});
        r.domain.free_surface = cf.free_surface;
        const Domain d(r.grid, velocity_field(r), r.domain);
        // Every member's planes are z blocks of the naive and C-PML pass-1 launches: one
        // launch of the whole batch would need batch * nz > 65535 of them.
        const int nz = d.box().nz, batch = 65535 / nz + 2;
        INFO("batch " << batch << " x " << nz << " planes = " << long(batch) * nz << " z blocks");
        REQUIRE(long(batch) * nz > 65535);
        const auto w = ricker(r.f0, r.domain.dt, r.nt);
        const std::vector<double> wav(w.begin(), w.end());
        const Position at[4] = {{121.3, 0, 102.7}, {307.9, 0, 43.1}, {452.4, 0, 351.6}, {77.7, 0, 488.2}};
        std::vector<PointStencil> src, rec;
        for (int m = 0; m < batch; ++m) {
            const Position& s = at[m % 4];
            src.push_back(member_stencil(d.point(s.x, s.y, s.z, "source"), d.box(), m));
            rec.push_back(member_stencil(d.point(s.z, 0, s.x, "receiver"), d.box(), m));
        }
        auto all = make_cuda_propagator(d, r.precision, batch);
        all->set_sources(src, std::vector<std::vector<double>>(batch, wav));
        all->set_receivers(rec, r.nt);
        for (int n = 0; n < r.nt; ++n) all->step(n);
        const auto ft = all->wavefield(), tt = all->receiver_traces();
        all.reset();
        const std::size_t cells = d.window().size();
        for (int k = 0; k < 4; ++k) {
            auto one = make_cuda_propagator(d, r.precision);
            one->set_sources({d.point(at[k].x, 0, at[k].z, "source")}, {wav});
            one->set_receivers({d.point(at[k].z, 0, at[k].x, "receiver")}, r.nt);
            for (int n = 0; n < r.nt; ++n) one->step(n);
            const auto f = one->wavefield(), t = one->receiver_traces();
            double peak = 0;
            for (double x : f) peak = std::max(peak, std::abs(x));
            CHECK(peak > 0);
            int differ = 0;
            for (int m = k; m < batch; m += 4)
                differ += !std::equal(f.begin(), f.end(), ft.begin() + m * cells) ||
                          !std::equal(t.begin(), t.end(), tt.begin() + std::size_t(m) * r.nt);
            INFO("source position " << k << ": members that differ from the shot alone");
            CHECK(differ == 0);
        }
    }
}
