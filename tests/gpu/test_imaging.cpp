// Snapshots and cross-correlation on the GPU (keep / recall / clear_kept / correlate /
// correlation) against CpuPropagator on the same inputs, with the snapshots in device
// memory and forced into pinned host memory; and migrate_shot on the GPU against the
// CPU for every imaging condition with both source-wavefield strategies.
#include <cstdlib>
#include <random>

#include "core/bfloat16.h"
#include "gpu_simulate.h"
#include "gpu_test.h"
#include "migration_fixture.h"

using namespace rtm;
using namespace rtm::test;

namespace {

Run damped(int ndim, Precision prec, int nt, double xs) {
    return small_model_run(ndim, prec, Boundary::Damping, nt, {xs, 211.7, 221.1});
}

void with_source(Propagator* p, const Run& r, const Domain& d) {
    const auto w = ricker(r.f0, r.domain.dt, r.nt);
    p->set_sources({d.point(r.source.x, r.source.y, r.source.z, "source")}, {std::vector<double>(w.begin(), w.end())});
    p->set_receivers({}, r.nt);
    p->reset();
}

// (Either allocator: a migration's image is an UninitVector.)
template <class A, class B>
double rel(const std::vector<double, A>& a, const std::vector<double, B>& b) {
    return rel_l2(a.data(), b.data(), b.size());
}

// Sets RTM_KEEP_HEADROOM_GB for the scope (1e9 GB: every snapshot goes to pinned host memory).
struct Headroom {
    explicit Headroom(const char* gb) {
        if (gb) setenv("RTM_KEEP_HEADROOM_GB", gb, 1);
    }
    ~Headroom() { unsetenv("RTM_KEEP_HEADROOM_GB"); }
};

void check_ops(int ndim, Precision prec, bool bf16, bool host) {
    // The fields: both backends run the same steps (at most 120 + 7 K = 190 here) and
    // differ by twin_bound (gpu_test.h): fp32 1.1e-5, fp64 2.2e-14 at 190 steps. Image and
    // illumination are sums of products of two such fields: relative errors add,
    // sqrt(2) for independent ones: sqrt(2) twin_bound (the double sums' own rounding is
    // far below). bf16 snapshots: both sides round their (slightly different) fields to
    // bf16, 8 significant bits: bf16 values lie s = 2^-8 to 2^-7 of themselves apart, so
    // for fields eps apart a fraction eps / s of the values straddles a rounding
    // boundary and differs by one bf16 ulp, s: relative L2 sqrt(eps / s) s =
    // sqrt(eps s) <= sqrt(eps 2^-7) = 2.9e-4 for eps = 1.1e-5; three times that for a
    // bound (like twin_bound's), on top of the fields' own difference: 8.8e-4.
    const double fields = twin_bound(190, prec);
    const double bf16_flips = 3 * std::sqrt(fields / 128);
    const double tol = std::sqrt(2.0) * fields + (bf16 ? bf16_flips : 0);
    INFO(ndim << "D " << (prec == Precision::Single ? "fp32" : "fp64") << (bf16 ? ", bf16 snapshots" : "")
              << (host ? ", snapshots in pinned host memory" : ", snapshots in device memory"));
    Headroom hr(host ? "1e9" : nullptr);
    const Run rs = damped(ndim, prec, 160, 291.3), rr = damped(ndim, prec, 160, 171.9);
    const Domain d(rs.grid, velocity_field(rs), rs.domain);
    auto cs = make_cpu_propagator(d, prec), gs = make_cuda_propagator(d, prec);
    auto cr = make_cpu_propagator(d, prec), gr = make_cuda_propagator(d, prec);
    for (Propagator* p : {cs.get(), gs.get()}) with_source(p, rs, d);
    for (Propagator* p : {cr.get(), gr.get()}) with_source(p, rr, d);

    // keep every 15 steps, slots 0..K-1; the GPU's own fields at those times.
    std::vector<std::vector<double>> at_keep;
    int n = 0;
    for (; n < 120; ++n) {
        if (n >= 30 && n % 15 == 0) {
            const std::size_t a = cs->keep(bf16), b = gs->keep(bf16);
            CHECK(a == b);
            CHECK(b == at_keep.size());
            at_keep.push_back(gs->wavefield());
        }
        cs->step(n);
        gs->step(n);
    }
    const std::size_t K = at_keep.size();
    const auto where = cuda_kept_where(*gs);
    CHECK(where.first + where.second == K);
    CHECK((host ? where.second : where.first) == K);

    // recall: exactly the kept field (bf16: its rounding), and the CPU's recall.
    for (std::size_t s : {K - 1, std::size_t(1), std::size_t(0)}) {
        gs->recall(s);
        cs->recall(s);
        const auto g = gs->wavefield();
        std::vector<double> expect = at_keep[s];
        if (bf16)
            for (double& x : expect) x = from_bf16(to_bf16(float(x)));
        CHECK(g == expect);
        const double e = rel(g, cs->wavefield());
        INFO("recall(" << s << "): relative L2 against the CPU " << e);
        CHECK(e <= fields + (bf16 ? bf16_flips : 0));
    }

    // correlate in descending slot order, the receiver side stepping between (as migration).
    const double w = 0.37;
    std::vector<double> img_host(d.window().size(), 0.0), ill_host(img_host.size(), 0.0);
    for (std::size_t s = K; s-- > 0;) {
        for (int k = 0; k < 7; ++k, ++n) {
            cr->step(n);
            gr->step(n);
        }
        cs->recall(s);
        gs->recall(s);
        cr->correlate(*cs, w);
        gr->correlate(*gs, w);
        // The same sums on the host from the GPU's own fields, in the same order.
        const auto us = gs->wavefield(), u = gr->wavefield();
        for (std::size_t i = 0; i < us.size(); ++i) {
            img_host[i] += w * us[i] * u[i];
            ill_host[i] += w * us[i] * us[i];
        }
    }
    const auto gi = gr->correlation(false), gl = gr->correlation(true);
    const auto ci = cr->correlation(false), cl = cr->correlation(true);
    {
        const double ei = rel(gi, ci), el = rel(gl, cl), hi = rel(gi, img_host), hl = rel(gl, ill_host);
        INFO("image vs CPU " << ei << ", illumination vs CPU " << el << "; vs the host sums of the GPU's fields "
                             << hi << ", " << hl);
        CHECK(ei <= tol);
        CHECK(el <= tol);
        // The same double sums in the same order over the same (the GPU's own) fields:
        // at most a rounding of 2^-53 per term apart (FMA contraction), K <= 6 terms:
        // 1e-15; bound 1e-14.
        CHECK(hi <= 1e-14);
        CHECK(hl <= 1e-14);
        double peak = 0;
        for (double x : ci) peak = std::max(peak, std::abs(x));
        CHECK(peak > 0);
    }
    // reset zeroes the image; clear_kept forgets the slots (keep starts at 0 again).
    gr->reset();
    for (double x : gr->correlation(false)) REQUIRE(x == 0);
    for (double x : gr->correlation(true)) REQUIRE(x == 0);
    gs->clear_kept();
    CHECK(cuda_kept_where(*gs).first + cuda_kept_where(*gs).second == 0);
    CHECK(gs->keep(!bf16) == 0);  // the other kind is allowed after clearing
}

// One shot over a flat reflector, reflections only, migrated on both backends.
struct Case {
    Model truth, smooth;
    ShotGather shot;
    Wavelet w = ricker_wavelet(15);
};

Case make_case(int ndim) {
    Case c;
    const int nx = ndim == 3 ? 51 : 151, ny = ndim == 3 ? 41 : 1, nz = ndim == 3 ? 41 : 71;
    c.truth = make_model(nx, ny, nz, 10, [](double, double, double z) { return z < 250 ? 2000.0 : 2500.0; });
    c.smooth = make_model(nx, ny, nz, 10, [](double, double, double) { return 2000.0; });
    const double xs = (nx - 1) * 5 + 3.7, ys = ndim == 3 ? (ny - 1) * 5 + 1.3 : 0;
    const ShotGather geo = shot_geometry(c.truth, xs, ys, 20, ndim == 3 ? 0.35 : 0.5, 0.002);
    PropagationOptions p;
    p.pml_cells = 15;
    c.shot = reflections(c.truth, c.smooth, geo, c.w, p);
    return c;
}

ShotMigration migrate_on(const Case& c, bool gpu, SourceStorage storage, bool bf16, ImagingCondition cond) {
    MigrationOptions opt;
    opt.aperture = -1;
    opt.propagation.pml_cells = 15;
    opt.propagation.backend.gpu = gpu;
    opt.storage = storage;
    opt.bf16_snapshots = bf16;
    opt.condition = cond;
    return migrate_shot(c.smooth, c.shot, c.w, opt);
}

void check_migration(int ndim, ImagingCondition cond) {
    const Case c = make_case(ndim);
    const char* cname = cond == ImagingCondition::CrossCorrelation    ? "cross-correlation"
                        : cond == ImagingCondition::InverseScattering ? "inverse scattering"
                                                                      : "born-adjoint";
    struct V {
        SourceStorage s;
        bool bf16;
        const char* name;
    };
    for (const V v : {V{SourceStorage::Snapshots, false, "snapshots"}, V{SourceStorage::Snapshots, true, "bf16 snapshots"},
                      V{SourceStorage::Boundary, false, "boundary"}}) {
        const ShotMigration cpu = migrate_on(c, false, v.s, v.bf16, cond), gpu = migrate_on(c, true, v.s, v.bf16, cond);
        REQUIRE(gpu.storage == v.s);
        REQUIRE(gpu.image.size() == cpu.image.size());
        double peak = 0;
        for (double x : cpu.image) peak = std::max(peak, std::abs(x));
        const double ei = rel(gpu.image, cpu.image), el = rel(gpu.illumination, cpu.illumination);
        // fp32 on both sides, the same operations in a different order (FMA contraction
        // and summation order in the stencil on the GPU): each field differs by
        // twin_bound (gpu_test.h) after the run's steps, the image, a sum of products of
        // two such fields, by sqrt(2) that (2D: 500 steps, fp32 1.8e-5 per field, image
        // 2.5e-5 at 500 steps). bf16 snapshots: the flips of one bf16 ulp where the two
        // fp32 fields straddle a rounding boundary (see check_ops): 3 sqrt(eps 2^-7) for
        // fields eps apart (1.1e-3 at 500 steps). Inverse scattering and the Born adjoint
        // differentiate the fields, which amplifies the fresh (white) part of their
        // rounding differences against the fields themselves: the time rates by
        // 2 / (w0 dt) ~ 8 and the Laplacian by 6.5 / (k0 h)^2 ~ 10 at the wavelet's peak
        // here: ten times the bounds.
        const double fields = twin_bound(gpu.steps, Precision::Single);
        const double tol = (std::sqrt(2.0) * fields + (v.bf16 ? 3 * std::sqrt(fields / 128) : 0)) *
                           (cond == ImagingCondition::CrossCorrelation ? 1 : 10);
        INFO(ndim << "D migrate_shot, " << cname << ", " << v.name << ": image relative L2 GPU vs CPU " << ei
                  << ", illumination " << el << " (" << gpu.steps << " steps, imaging every " << gpu.image_every
                  << "; GPU " << gpu.seconds << " s, CPU " << cpu.seconds << " s)");
        CHECK(peak > 0);
        CHECK(ei <= tol);
        CHECK(el <= tol);
        WARN(ndim << "D migrate_shot " << cname << ", " << v.name << ": image GPU vs CPU " << ei << ", illumination " << el
                  << " (tolerance " << tol << ")");
    }
}

}  // namespace

TEST_CASE("GPU snapshots (device and pinned host memory, fp32/fp64/bf16) and cross-correlation match the CPU",
          "[gpu]") {
    if (!gpu_or_skip()) return;
    for (int ndim : {2, 3})
        for (bool host : {false, true}) {
            check_ops(ndim, Precision::Single, false, host);
            check_ops(ndim, Precision::Single, true, host);
        }
    check_ops(2, Precision::Double, false, false);
    check_ops(3, Precision::Double, true, true);
}

TEST_CASE("migrate_shot on the GPU matches the CPU (every imaging condition, with snapshots, bf16 snapshots and boundary)",
          "[gpu]") {
    if (!gpu_or_skip()) return;
    for (auto cond : {ImagingCondition::CrossCorrelation, ImagingCondition::InverseScattering,
                      ImagingCondition::BornAdjoint}) {
        check_migration(2, cond);
        check_migration(3, cond);
    }
}

// Isotropic Born modelling forms its source -dm v^2 Lap u0 on the device
// (born_source_window_cuda) where the CPU twin forms it on the host. fp32: the
// background fields differ by twin_bound after the run's steps, the Laplacian amplifies
// their fresh rounding differences about ten times at the wavelet's peak (see
// check_migration), and the scattered field adds its own twin_bound: 11 twin_bound.
// fp64: the traces are stored as fp32 on both sides, 2^-24 a sample: 1e-7.
TEST_CASE("isotropic Born modelling on the GPU matches the CPU (born_shot, fp32 and fp64, 2D and 3D)", "[gpu]") {
    if (!gpu_or_skip()) return;
    for (int ndim : {2, 3}) {
        const Case c = make_case(ndim);
        const Grid& g = c.smooth.grid();
        const Volume dm = blob_perturbation(g);
        for (Precision prec : {Precision::Single, Precision::Double}) {
            MigrationOptions opt;
            opt.aperture = -1;
            opt.propagation.pml_cells = 15;
            opt.propagation.precision = prec;
            opt.propagation.backend.gpu = false;
            const ShotGather cpu = born_shot(c.smooth, dm, c.shot, c.w, opt);
            opt.propagation.backend.gpu = true;
            double busy = 0;
            const ShotGather gpu = born_shot(c.smooth, dm, c.shot, c.w, opt, &busy);
            const int steps = time_axis(c.smooth, c.shot, c.w, opt.propagation).nt;
            double peak = 0;
            for (float x : cpu.data) peak = std::max(peak, double(std::abs(x)));
            const double e = rel(std::vector<double>(gpu.data.begin(), gpu.data.end()),
                                 std::vector<double>(cpu.data.begin(), cpu.data.end()));
            const double tol = prec == Precision::Double ? 1e-7 : 11 * twin_bound(steps, Precision::Single);
            WARN(ndim << "D isotropic Born data, " << (prec == Precision::Single ? "fp32" : "fp64") << ", " << steps
                      << " steps: GPU vs CPU relative L2 " << e << " (bound " << tol << ")");
            CHECK(peak > 0);
            CHECK(busy > 0);
            CHECK(e <= tol);
        }
    }
}
