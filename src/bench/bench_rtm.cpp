// rtm bench --mode rtm: one reverse-time-migration shot (migrate_shot, cross-correlation,
// source wavefield kept by boundary saving and by snapshots, each forced) against one
// forward modelling propagation (model_shots, one shot, the same steps, the damping
// boundary the engine uses) on the same device, wall-clock medians, and their ratios.
// Then the same steps taken apart at the propagator (where the time goes): plain steps,
// reserve_bands, steps with store_band, backward steps with load_band (the band history
// where the backend puts it, and on a GPU forced into pinned host memory too), steps
// with keep every k, recall + correlate, and the host work the engine does around them.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "bench/bench_common.h"
#include "bench/bench_json.h"
#include "core/error.h"
#include "physics/stability.h"
#include "pipeline/acquisition.h"
#include "pipeline/migration.h"
#include "pipeline/modelling.h"
#include "pipeline/shot_window.h"
#include "physics/wavelet.h"
#include "propagation/backend.h"

namespace rtm {
#ifdef RTM_HAVE_CUDA
std::pair<std::size_t, std::size_t> cuda_kept_where(const Propagator& p);
std::pair<int, const void*> cuda_bands_where(const Propagator& p);
#endif

namespace bench {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

template <class F>
double median_of(int reps, F&& f) {
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) {
        const auto t0 = Clock::now();
        f();
        t.push_back(since(t0));
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

constexpr double kCell = 10;  // m, every axis

// The Ricker wavelet the shot is modelled and migrated with.
Wavelet rtm_wavelet() {
    Wavelet w;
    w.dt = 1e-4;
    w.f_dominant = 8;
    w.samples = ricker(w.f_dominant, w.dt, int(3.0 / w.f_dominant / w.dt) + 1);
    w.f_max = ricker_max_frequency(w.f_dominant);
    return w;
}

// The record interval, which is the propagation step (no resampling): 80% of the
// stability limit at 4000 m/s, above the model's fastest 3500 m/s.
double rtm_step(int ndim) { return 0.999 * 0.8 * max_stable_dt(4000, kCell, ndim == 3 ? kCell : 0, kCell); }

MigrationOptions rtm_migration_options() {
    MigrationOptions mo;
    mo.aperture = -1;  // the whole model: the same window as the forward modelling
    mo.memory_budget = 1e12;
    mo.condition = ImagingCondition::CrossCorrelation;
    return mo;
}

}  // namespace

void require_rtm_steps(const Options& o) {
    // migrate_shot refuses a shot of no more steps than one imaging interval, naming
    // migration.image-every, which bench does not have, and only after the forward
    // modelling: the same sums here, before any work, on a model of two cells that
    // holds rtm_mode's slowest and fastest velocities (they set the time step).
    Model m;
    m.vp = Volume(Grid{});
    Grid& g = m.vp.grid;
    g.nx = g.nz = 2;
    g.ny = o.ndim() == 3 ? 2 : 1;
    g.dx = g.dy = g.dz = kCell;
    m.vp.data.assign(g.size(), 1500.f);
    m.vp.data.back() = 3500.f;
    ShotGather shot;
    shot.nt = o.steps;
    shot.dt = rtm_step(o.ndim());
    const Wavelet w = rtm_wavelet();
    const MigrationOptions mo = rtm_migration_options();
    const TimeAxis ta = time_axis(m, shot, w, mo.propagation);
    // (The interval alone, on an axis no record is too short for.)
    const int k = imaging_interval(mo, w, TimeAxis{ta.dt, std::numeric_limits<int>::max()});
    if (ta.nt <= k)
        fail("option --steps",
             std::to_string(o.steps) + " steps are too few for --mode rtm: the shot is imaged every " +
                 std::to_string(k) + " steps (the wavelet's band), so its image would hold t = 0 alone",
             "Give --steps " + std::to_string(k + 1) + " or more");
}

void rtm_mode(const Options& o, const std::string& json_file, const std::string& cmd, const std::string& device_name) {
    const bool gpu = o.device == "gpu";
    const int ndim = o.ndim();
    const double h = kCell;
    // Layered model: 1500 m/s at the top to 3500 m/s at the bottom, a jump at 60% depth
    // (require_rtm_steps holds the two).
    Model m;
    m.vp = Volume(Grid{});
    Grid& g = m.vp.grid;
    g.nx = o.nx;
    g.ny = ndim == 3 ? o.ny : 1;
    g.nz = o.nz;
    g.dx = g.dy = g.dz = h;
    m.vp.data.resize(g.size());
    for (int iz = 0; iz < g.nz; ++iz)
        for (std::size_t i = 0; i < std::size_t(g.nx) * g.ny; ++i)
            m.vp.data[std::size_t(iz) * g.nx * g.ny + i] =
                float(1500 + 1500.0 * iz / std::max(1, g.nz - 1) + (iz > 0.6 * g.nz ? 500 : 0));
    const Wavelet w = rtm_wavelet();
    const double dt = rtm_step(ndim);  // o.steps samples
    RegularAcquisition acq;
    acq.sources = {0.5 * g.x_max() + 3.7, 0, 1, ndim == 3 ? 0.5 * g.y_max() + 1.3 : 0, 0, 1, 10};
    const double rdx = ndim == 3 ? 2 * h : h;
    acq.receivers = {0, rdx, int(g.x_max() / rdx) + 1, 0, ndim == 3 ? rdx : 0, ndim == 3 ? int(g.y_max() / rdx) + 1 : 1,
                     2 * h};
    acq.dt = dt;
    acq.nt = o.steps;
    const auto geo = regular_geometry(acq, g);

    PropagationOptions p;
    p.boundary = Boundary::Damping;  // the engine's boundary
    p.pml_cells = o.pml;
    p.backend.gpu = gpu;
    p.precision = o.dbl ? Precision::Double : Precision::Single;
    MigrationOptions mo = rtm_migration_options();
    mo.propagation = p;

    std::printf("device : %s\n", device_name.c_str());
    std::printf("rtm shot vs forward: %dD model %d x %d x %d (h %g m), damping %d cells, %d receivers, fp%d\n",
                ndim, g.nx, g.ny, g.nz, h, o.pml, int(geo.front().ntraces()), o.dbl ? 64 : 32);
    std::fflush(stdout);

    // Forward (also makes the data to migrate). The first run warms the device up.
    ShotGather shot;
    const int reps = std::max(1, o.repeats);
    model_shots(m, geo, w, p);
    const double t_fwd = median_of(reps, [&] { shot = model_shots(m, geo, w, p).front(); });
    PropagationOptions pc = p;
    pc.boundary = Boundary::Cpml;
    const double t_fwd_cpml = median_of(reps, [&] { model_shots(m, geo, w, pc); });

    auto migrate = [&](SourceStorage s, bool bf16, ShotMigration* out) {
        MigrationOptions x = mo;
        x.storage = s;
        x.bf16_snapshots = bf16;
        return median_of(reps, [&] { *out = migrate_shot(m, shot, w, x); });
    };
    ShotMigration mb, ms, ms16;
    const double t_band = migrate(SourceStorage::Boundary, false, &mb);
    const double t_snap = migrate(SourceStorage::Snapshots, false, &ms);
    const double t_snap16 = migrate(SourceStorage::Snapshots, true, &ms16);
    const int N = mb.steps, k = mb.image_every;

    // Taken apart at the propagator, on the engine's domain.
    const TimeAxis ta = time_axis(m, shot, w, p);
    const ShotWindow win = shot_window(m, shot, -1);
    double t_domain = 0;
    std::unique_ptr<Domain> dom;
    t_domain = median_of(1, [&] { dom = std::make_unique<Domain>(win.grid, win.vp, domain_options(p, ta.dt, w)); });
    const Domain& d = *dom;
    auto sync = [&](Propagator&) {
#ifdef RTM_HAVE_CUDA
        if (gpu) gpu_synchronize();
#endif
    };
    auto fresh = [&] {
        auto q = make_propagator(d, p.precision, p.backend);
        q->set_sources({source_stencil(d, win, m, shot)}, {source_trace(w, ta, p)});
        q->set_receivers({}, N);
        q->reset();
        return q;
    };
    auto src = fresh();
    const std::size_t nb = src->band_size();
    for (int n = 0; n < 20 && n < N; ++n) src->step(n);  // warm-up
    src->reset();
    sync(*src);
    const double t_steps = median_of(1, [&] {
        for (int n = 0; n < N; ++n) src->step(n);
        sync(*src);
    });
    // The band history as migrate_shot uses it: reserve, store after each forward step,
    // load after each backward step.
    struct BandTimes {
        double reserve = 0, store = 0, load = 0;
        std::string where;
    };
    auto band_run = [&](Propagator& q) {
        BandTimes b;
        q.reset();
        sync(q);
        b.reserve = median_of(1, [&] {
            q.reserve_bands(std::size_t(N) + 1);
            sync(q);
        });
#ifdef RTM_HAVE_CUDA
        if (gpu) b.where = cuda_bands_where(q).first == 1 ? " (device memory)" : " (pinned host memory)";
#endif
        b.store = median_of(1, [&] {
            q.store_band(0);
            for (int n = 0; n < N; ++n) {
                q.step(n);
                q.store_band(std::size_t(n) + 1);
            }
            sync(q);
        });
        q.reverse_time();
        b.load = median_of(1, [&] {
            for (int n = N - 1; n >= 1; --n) {
                q.step(n);
                q.load_band(std::size_t(n) - 1);
            }
            sync(q);
        });
        return b;
    };
    const BandTimes bt = band_run(*src);
    BandTimes bh;  // GPU: the history forced into pinned host memory (no headroom fits)
    if (gpu) {
        setenv("RTM_KEEP_HEADROOM_GB", "1e9", 1);
        auto hsrc = fresh();
        bh = band_run(*hsrc);
        unsetenv("RTM_KEEP_HEADROOM_GB");
    }
    src->reset();
    std::size_t kept = 0;
    const double t_keep = median_of(1, [&] {
        for (int n = 0; n < N; ++n) {
            if (n % k == 0) {
                src->keep(false);
                ++kept;
            }
            src->step(n);
        }
        sync(*src);
    });
    std::string where = "";
#ifdef RTM_HAVE_CUDA
    if (gpu) {
        const auto kw = cuda_kept_where(*src);
        where = " (" + std::to_string(kw.first) + " in device memory, " + std::to_string(kw.second) + " pinned host)";
    }
#endif
    auto rec = fresh();
    const double t_corr = median_of(1, [&] {
        for (std::size_t s = kept; s-- > 0;) {
            src->recall(s);
            rec->correlate(*src, 1.0);
        }
        sync(*rec);
    });
    src->clear_kept();

    const double r_band = t_band / t_fwd, r_snap = t_snap / t_fwd, r_snap16 = t_snap16 / t_fwd;
    std::printf("steps N = %d, imaging every k = %d, dt %.3g ms, window + layers %d x %d x %d, band %zu nodes\n", N, k,
                ta.dt * 1e3, d.box().nx, d.box().ny, d.box().nz, nb);
    const std::string head = "what (wall clock, median of " + std::to_string(reps) + ")";
    std::printf("%-58s %10s %8s %8s\n", head.c_str(), "seconds", "ratio", "target");
    std::printf("%-58s %10.4f %8s %8s\n", "forward: model_shots, 1 shot, damping (the reference)", t_fwd, "1.00", "");
    std::printf("%-58s %10.4f %8.2f %8s\n", "forward: model_shots, 1 shot, C-PML", t_fwd_cpml, t_fwd_cpml / t_fwd, "");
    std::printf("%-58s %10.4f %8.2f %8s  %s\n", "RTM shot, boundary saving (migrate_shot)", t_band, r_band, "<= 3.3",
                r_band <= 3.3 ? "met" : "missed");
    std::printf("%-58s %10.4f %8.2f %8s  %s\n", "RTM shot, snapshots fp32 (migrate_shot)", t_snap, r_snap, "<= 2.3",
                r_snap <= 2.3 ? "met" : "missed");
    std::printf("%-58s %10.4f %8.2f %8s  %s\n", "RTM shot, snapshots bf16 (migrate_shot)", t_snap16, r_snap16, "<= 2.3",
                r_snap16 <= 2.3 ? "met" : "missed");
    std::printf("where the time goes (the engine's domain, one propagator):\n");
    auto line = [&](const char* what, double t) { std::printf("  %-56s %10.4f %8.2f\n", what, t, t / t_fwd); };
    line("N plain steps (no receivers)", t_steps);
    line(("reserve_bands(N + 1)" + bt.where).c_str(), bt.reserve);
    line(("N steps + store_band each step" + bt.where).c_str(), bt.store);
    line(("N-1 backward steps + load_band each step" + bt.where).c_str(), bt.load);
    if (gpu) {
        line(("reserve_bands(N + 1)" + bh.where).c_str(), bh.reserve);
        line(("N steps + store_band each step" + bh.where).c_str(), bh.store);
        line(("N-1 backward steps + load_band each step" + bh.where).c_str(), bh.load);
    }
    line(("N steps + keep every k" + where).c_str(), t_keep);
    line("recall + correlate, every imaging step", t_corr);
    line("host: Domain construction", t_domain);
    std::printf("model: boundary ~ reserve + store-steps + load-steps + steps + correlate + host; snapshots ~ "
                "keep-steps + steps + correlate + host\n");
    std::fflush(stdout);

    if (!json_file.empty()) {
        nlohmann::json j = json_header(cmd, device_name);
        j["grid"] = {g.nx, g.ny, g.nz};
        j["steps"] = N;
        j["image_every"] = k;
        j["seconds"] = {{"forward_damping", t_fwd},      {"forward_cpml", t_fwd_cpml}, {"rtm_boundary", t_band},
                        {"rtm_snapshots", t_snap},      {"rtm_snapshots_bf16", t_snap16},
                        {"steps", t_steps},             {"reserve_bands", bt.reserve}, {"steps_store_band", bt.store},
                        {"steps_load_band", bt.load},   {"steps_keep", t_keep},       {"recall_correlate", t_corr},
                        {"host_domain", t_domain}};
        if (gpu)
            j["seconds"].update({{"reserve_bands_pinned", bh.reserve},
                                 {"steps_store_band_pinned", bh.store},
                                 {"steps_load_band_pinned", bh.load}});
        j["band_history"] = bt.where;
        j["ratio"] = {{"boundary", r_band}, {"snapshots", r_snap}, {"snapshots_bf16", r_snap16}};
        std::ofstream f(json_file);
        if (!f) fail(json_file, "cannot be written", "Check the folder exists and is writable");
        f << j.dump(2) << "\n";
    }
}

}  // namespace bench
}  // namespace rtm
