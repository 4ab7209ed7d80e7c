#include "pipeline/plan.h"

#include "pipeline/memory_plan.h"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <exception>
#include <sstream>

#include <omp.h>
#include <spdlog/spdlog.h>

#include "core/error.h"
#include "core/log.h"
#include "core/host_memory.h"
#include "kernels/step_args.h"
#include "parallel/slab_layout.h"
#include "parallel/world.h"
#include "physics/anisotropy.h"
#include "physics/stability.h"
#include "physics/stencil.h"
#include "physics/time_dispersion.h"
#include "pipeline/shot_window.h"

namespace rtm {

namespace {

std::string fmt(double v, int digits = 3) {
    std::ostringstream os;
    os.precision(digits);
    os << v;
    return os.str();
}

std::string bytes(double b) {
    if (b >= 1e9) return fmt(b / 1e9) + " GB";
    if (b >= 1e6) return fmt(b / 1e6) + " MB";
    return fmt(b / 1e3) + " kB";
}

std::string duration(double s) {
    if (s < 60) return fmt(s, 2) + " s";
    if (s < 3600) return fmt(s / 60, 2) + " min";
    if (s < 86400 * 2) return fmt(s / 3600, 2) + " h";
    return fmt(s / 86400, 2) + " days";
}

// Nominal propagation rates for the time estimate. GPU: a share of the device's peak
// memory bandwidth over the update's 16 B/point. Whole jobs on an H200 (4.9 TB/s peak,
// 307 Gpoints/s at 16 B; docs/performance.md, 2026-11-24) ran at 50-184 Gpoints/s over
// their wall time: 2D Marmousi 16 shots modelled 50, migrated 104; 256 shots migrated
// 184; the 3D dome modelled 86, migrated 131. A share of 0.3 (92 Gpoints/s there) puts
// every one of them within 2x. Anisotropic: SWiC's step alone runs at 33 Gpoints/s at
// 512^3 on the H200 (0.11 of the same) and whole TTI jobs at 20.6-22.4 over their wall time
// (2026-11-24): 0.05, 15 Gpoints/s, puts them within 1.5x (the estimate above the wall,
// as a plan should err). Without the device's figures, 10 Gpoints/s.
// CPU: the kernel about 0.2-0.45 Gpoints/s a thread; the VTI/TTI step, two fields and
// the rotated operator, 18 Mpoints/s a thread for 3D TTI on a 2-core host (2026-11-23,
// the aniso3d example; the isotropic step ran 0.33 Gpoints/s a thread there).
constexpr double kGpuBandwidthShare = 0.3, kGpuAnisotropicBandwidthShare = 0.05, kGpuFallbackPointsPerSecond = 10e9;
constexpr double kCpuPointsPerThread = 0.2e9, kCpuAnisotropicPointsPerThread = 0.018e9;

// Nodes of a window within the update's reach of its edge (Domain's band): R, 2 R when tilted.
double band_points(const Grid& w, bool tilted) {
    const int R = tilted ? 2 * stencil::R : stencil::R;
    auto inner = [&](int n) { return double(std::max(0, n - 2 * R)); };
    return double(w.size()) - inner(w.nx) * inner(w.nz) * (w.ndim() == 3 ? inner(w.ny) : 1.0);
}

// One contribution to a shot's memory: its bytes, what it is, and the option or file
// that sets its size (named when the total is refused).
struct Need {
    double bytes;
    std::string what, cause;
};

double total(const std::vector<Need>& n) {
    double t = 0;
    for (const auto& x : n) t += x.bytes;
    return t;
}

const Need& largest(const std::vector<Need>& n) {
    return *std::max_element(n.begin(), n.end(), [](const Need& a, const Need& b) { return a.bytes < b.bytes; });
}

// single_trace_gathers: every gather of a migration (more than one) is one trace;
// migration: rtm migrate's (which can leave receivers outside the model out).
void check_shot(const Model& model, const ShotGather& s, const std::string& source, const Wavelet& wavelet,
                bool single_trace_gathers, bool migration, bool free_surface) {
    const std::string who = source + ": shot " + std::to_string(s.id);
    if (s.receivers.empty()) fail(who, "has no receivers", "Give every shot at least one trace");
    // Every gather one trace recorded at its own source: a velocity model (rtm writes a
    // model's node positions as source, group and CDP X/Y) or a stacked section, not
    // shots. (Several receivers at the source are a zero-offset experiment, and allowed.)
    if (single_trace_gathers && s.receivers[0].x == s.source.x && s.receivers[0].y == s.source.y)
        fail(who,
             "like every gather here, it is one trace with its receiver at its source (X " + fmt(s.source.x, 10) + ", Y " +
                 fmt(s.source.y, 10) + "): no acquisition geometry. A velocity model given as the shots file looks like this",
             "Give the recorded shot gathers here (source X/Y bytes 73/77 and group X/Y bytes 81/85 set), and the "
             "velocity model as model.vp");
    // A record shorter than one period of the wavelet's highest frequency holds no
    // reflection: the image would be zero (a 1 us sample interval, 1-2 samples a trace).
    const double length = (s.nt - 1) * s.dt;
    if (s.nt < 2 || length < 1 / wavelet.f_max)
        fail(who,
             "its traces hold " + std::to_string(s.nt) + " samples at " + fmt(s.dt * 1e6, 6) + " us: a record of " +
                 fmt(length, 3) + " s, shorter than one period of the wavelet's highest frequency (" +
                 fmt(wavelet.f_max) + " Hz: " + fmt(1 / wavelet.f_max) + " s); nothing could be imaged",
             "Check the sample interval (trace byte 117 or binary byte 3217, in microseconds) and the sample count "
             "(byte 115 or 3221), or the wavelet's band (" + wavelet.band_from + ")");
    // The wavelet's first sample fires at the shot's time 0: a record that ends before its
    // energy comes holds nothing (the gathers, or the image, would be zero).
    if (wavelet.onset >= length)
        fail(who,
             "its record ends " + fmt(length) + " s after the shot, before " + wavelet.name + " has sent 1% of its "
             "energy (by " + fmt(wavelet.onset) + " s after its first sample, which fires at the shot's time 0): "
             "nothing would be recorded or imaged",
             "Cut the wavelet so that it starts where its energy does (a zero-phase wavelet centred in its trace "
             "fires half its length late), or record longer");
    require_in_model(model, s.source, who + " source");
    for (std::size_t r = 0; r < s.receivers.size(); ++r)
        require_in_model(model, s.receivers[r], who + " receiver " + std::to_string(r + 1),
                         migration ? ", or leave the receivers outside it out of the migration (data.receivers-outside drop)"
                                   : "");
    // A free surface holds the pressure at zero on the model's top: a source there
    // injects nothing and a receiver there records nothing (the image, or the gathers,
    // came out all zeros). Land data and files that leave the depths at 0 put them there.
    if (!free_surface) return;
    const Grid& g = model.grid();
    const auto on_surface = [&](const Position& p) { return p.z - g.z0 < 1e-3 * g.dz; };
    const std::string fix =
        "Give its real depth below the surface (any depth below it records: a buried geophone's, a hydrophone's; "
        "source depth is trace byte 49, receiver elevation byte 41, scaled by byte 69; in rtm model "
        "acquisition.source-depth and acquisition.receiver-depth), or leave out propagation.free-surface";
    const std::string at = "lies on the free surface (propagation.free-surface: the model's top, depth " + fmt(g.z0) +
                           " m), where the pressure is held at zero: it would ";
    if (on_surface(s.source)) fail(who + " source", at + "inject nothing", fix);
    const auto n = std::count_if(s.receivers.begin(), s.receivers.end(), on_surface);
    if (n > 0) {
        const auto first = std::find_if(s.receivers.begin(), s.receivers.end(), on_surface) - s.receivers.begin();
        fail(who + " receiver " + std::to_string(first + 1),
             at + "record nothing (" + std::to_string(n) + " of its " + std::to_string(s.receivers.size()) +
                 " receivers lie there)",
             fix);
    }
}

}  // namespace

int record_samples(double length, double dt, const std::string& where, bool say) {
    const double n = length / dt;
    if (!std::isfinite(n) || n + 1 > double(INT_MAX))
        fail(where,
             "a record of " + fmt(length) + " s at " + fmt(dt) + " s is " + fmt(n + 1) + " samples, more than a trace can hold (" +
                 std::to_string(INT_MAX) + ")",
             "Give the record length in seconds, e.g. 4");
    // A length between two samples is rounded to the nearer, and said (0.503 s at 4 ms
    // became 0.504 s without a word).
    if (say && std::abs(n - std::round(n)) > 1e-6 * std::max(1.0, n) && parallel::World::get().root())
        spdlog::info("{}: {} s is not a whole number of {} ms samples: the record is {} s", where, fmt(length, 6),
                     fmt(dt * 1e3, 6), fmt(std::round(n) * dt, 6));
    return int(std::lround(n)) + 1;
}

void check_velocities(const Model& model, const std::string& where) {
    const auto& v = model.vp.data;
    const auto [lo, hi] = value_range(v);
    if (lo >= kMinVelocity && hi <= kMaxVelocity) return;
    if (lo >= kMinVelocity / 1000 && hi <= kMaxVelocity / 1000)
        fail(where,
             "velocities from " + fmt(lo) + " to " + fmt(hi) + " look like km/s; rtm reads m/s (" +
                 fmt(kMinVelocity) + " to " + fmt(kMaxVelocity) + ")",
             "Multiply the model by 1000");
    const auto bad = std::find(v.begin(), v.end(), hi > kMaxVelocity ? hi : lo);  // (its first node)
    const Grid& g = model.grid();
    const std::size_t k = std::size_t(bad - v.begin());
    const std::size_t ix = k % g.nx, iy = (k / g.nx) % g.ny, iz = k / (std::size_t(g.nx) * g.ny);
    fail(where,
         "vp at node (ix " + std::to_string(ix) + ", iy " + std::to_string(iy) + ", iz " + std::to_string(iz) +
             ", depth " + fmt(g.z0 + iz * g.dz) + " m) is " + fmt(*bad) + " m/s, outside the plausible " +
             fmt(kMinVelocity) + " to " + fmt(kMaxVelocity) + " m/s",
         "Fix the model (a spike, a null value, or another unit): velocities are m/s");
}

HostMemory rank_memory() { return host_memory(parallel::World::get().node_size()); }

std::vector<std::string> plan_job(const Model& model, const std::string& model_path, const PlanShots& shots,
                                  const Wavelet& wavelet, const PropagationOptions& prop,
                                  const MigrationOptions* migration, bool born) {
    const std::string model_where = "model.vp " + model_path;
    check_velocities(model, model_where);
    if (shots.count == 0) fail("shots", "there are none", "Give at least one shot");

    // Every shot's geometry and record, the longest record, the most receivers and, for
    // migration, the largest window.
    const Grid& g = model.grid();
    std::size_t longest = 0, most_receivers = 0;
    for (std::size_t k = 0; k < shots.count; ++k) most_receivers = std::max(most_receivers, shots.geometry(k).receivers.size());
    Grid window = g;
    for (std::size_t k = 0; k < shots.count; ++k) {
        const ShotGather& s = shots.geometry(k);
        // (Gathers of one trace at their own source are a zero-offset survey to model, and
        // to migrate most likely a velocity model given as the shots.)
        check_shot(model, s, shots.source(k), wavelet, migration && most_receivers == 1 && shots.count > 1, migration,
                   prop.free_surface);
        const ShotGather& first = shots.geometry(0);
        if (!migration && (s.dt != first.dt || s.nt != first.nt))
            fail(shots.source(k) + ": shot " + std::to_string(s.id),
                 "its sampling (" + std::to_string(s.nt) + " samples at " + fmt(s.dt) + " s) differs from the first shot's (" +
                     std::to_string(first.nt) + " at " + fmt(first.dt) + " s)",
                 "Model shots with different sampling in separate runs");
        const ShotGather& l = shots.geometry(longest);
        if ((s.nt - 1) * s.dt > (l.nt - 1) * l.dt) longest = k;
        if (migration) {
            // The largest padded box (rows of 32 values: not always the most points).
            const Grid w = window_extent(model, s, migration->aperture).grid;
            const auto padded_of = [&](const Grid& x) {
                return Domain::box_of(x, prop.pml_cells, prop.free_surface).padded_size();
            };
            if (k == 0 || padded_of(w) > padded_of(window)) window = w;
        }
    }
    const ShotGather& rec = shots.geometry(longest);
    const double record = (rec.nt - 1) * rec.dt;

    // The time step, as the job will choose it (time_axis: the CFL velocity, which
    // anisotropy raises), and the steps it makes.
    const auto [vmin, vmax] = value_range(model.vp.data);
    const double v_cfl = cfl_velocity(model);
    const double dt = choose_time_step(g, v_cfl, rec.dt, wavelet, prop);
    if (parallel::World::get().root()) warn_dispersion(g, slowest_velocity(model), wavelet);
    const double dt_cfl = max_stable_dt(v_cfl, g.dx, g.ndim() == 3 ? g.dy : 0, g.dz);
    const double raw_steps = std::ceil(record / dt - 1e-9) + 1;
    if (!(raw_steps <= kMaxSteps))
        fail(prop.dt > 0 ? "option propagation.dt" : model_where,
             fmt(raw_steps) + " time steps of " + fmt(dt) + " s for the " + fmt(record) + " s record (v_max " + fmt(vmax) +
                 " m/s): more than " + fmt(kMaxSteps) + " steps cannot run",
             prop.dt > 0 ? "Give propagation.dt 0 (the largest stable step) or a larger step"
                         : "Check the model's largest velocity and the record's length and sample interval");
    const TimeAxis ta = time_axis(model, rec, wavelet, prop);
    const double steps = ta.nt;

    // The grid one propagation runs on: its computed points (what the steps update) and
    // its padded box (what its arrays hold), as the shot's Domain makes it (a small 3D
    // window's padding doubles it: one checkpoint planned at half its size passed budgets
    // with which every shot then failed).
    const int p = prop.pml_cells;
    const kernels::Box box = Domain::box_of(window, p, prop.free_surface);
    const double P = double(box.points()), W = double(window.size()), M = double(g.size());
    const double padded = double(box.padded_size());
    const double b = prop.precision == Precision::Double ? 8 : 4;
    const double R = double(most_receivers);
    const std::string receivers_cause =
        migration ? "the receivers per shot and the record length (" + shots.source(longest) + ")"
                  : "acquisition.receiver-nx/ny and acquisition.record-length";
    const std::string layers_cause = "propagation.pml (" + std::to_string(p) + " cells) and the model's size";

    std::vector<Need> device, host;
    std::string storage_line;
    const int group_ranks = prop.backend.group ? prop.backend.group->size() : 1;
    int gpus_needed = 0;  // ranks per shot whose shares fit, when this many do not (0: none found)
    std::string over_ranks;  // what the refusals suggest when gpus_needed is found
    double propagations = 1;
    std::exception_ptr over_budget;  // migration's refusal of its memory budget, raised after the machine's checks
    // A rank of a shot group holds its slab of the box and the slab's halos: the largest
    // slab's share (migration plans it in detail through slab_share below).
    double share = 1;
    if (group_ranks > 1) {
        int most = 0;
        for (const auto& s : parallel::slab_layout(box.nz, prop.free_surface ? 0 : p, p, prop.free_surface, group_ranks))
            most = std::max(most, s.planes());
        share = std::min(1.0, (most + 2.0 * stencil::R) / box.nz);
    }
    // A VTI/TTI propagator's arrays per padded point (damping layers): p and q at two
    // levels, W's three entries and the damping, with a tilt the axis and the six fluxes
    // (memory_plan.cpp set_physics).
    const bool aniso = !model.extra.empty(), tilt = aniso && tilted(model);
    if (!migration) {
        // Isotropic: the largest propagator's values (a rank of a shot group: its slab's),
        // u at two levels and (v dt)^2 on the padded box, and the C-PML memory, kept near
        // the slab's own layers (kernels::CpmlMemory), or the damping.
        const bool cpml = prop.boundary == Boundary::Cpml;
        double iso_values = 0;
        const auto slabs = group_ranks > 1 ? parallel::slab_layout(box.nz, box.pml_lo[2], p, prop.free_surface, group_ranks)
                                           : std::vector<parallel::Slab>{{0, box.nz}};
        for (const parallel::Slab& s : slabs) {
            const kernels::Box sb = kernels::planes_of(box, s.z0, s.z1);
            const double slab_padded = double(sb.padded_size());
            iso_values = std::max(iso_values, (cpml ? 3 : 4) * slab_padded +
                                                  (cpml ? 2.0 * double(kernels::cpml_memory(sb).values()) : 0.0));
        }
        const double values = aniso ? padded * share * (8 + (tilt ? 9 : 0)) : iso_values;
        const std::string layers = aniso || !cpml ? "damping" : "C-PML memory";
        device.push_back({values * b * (born ? 2 : 1),
                          (born ? "background and scattered wavefields, coefficients, " : "wavefields, coefficients, ") + layers,
                          layers_cause});
        // A GPU keeps two buffers in the propagation's precision (a batch's traces are
        // fetched while the next batch records into the other: receiver_traces_later);
        // the CPU one, in double.
        device.push_back({R * steps * (prop.backend.gpu ? 2 * b : 8),
                          prop.backend.gpu ? "receiver traces at the step (two batches' worth)" : "receiver traces at the step",
                          receivers_cause});
    } else {
        const MigrationOptions& mo = *migration;
        const int k = imaging_interval(mo, wavelet, ta);
        const int shift = mo.condition == ImagingCondition::BornAdjoint ? 1 : 0;
        // The shot's own choice (memory_plan.h), from the window's sizes: it refuses here,
        // before any shot, a budget that cannot hold even one checkpoint.
        MemoryNeeds needs;
        needs.window_points = W;
        needs.padded_points = padded;
        needs.band_points = band_points(window, tilted(model));
        needs.steps = ta.nt;
        needs.states = int(std::ceil(double(ta.nt) / k) - shift);
        needs.state_every = k;
        needs.value_bytes = mo.propagation.precision == Precision::Double ? 8 : 4;
        needs.bf16_snapshots = mo.bf16_snapshots;
        set_physics(needs, mo.condition, !model.extra.empty(), tilted(model));
        needs.first_state = needs.two_snapshots ? 1 : 0;  // as migrate_shot's e
        // A rank of a shot group of z-slabs (parallel.ranks-per-shot) holds its slab's
        // share, as the shots plan it (migration.cpp); `ranks` of them for the GPUs a
        // shot would need when it does not fit.
        const int band_depth = tilted(model) ? 2 * stencil::R : stencil::R;
        const auto share = [&](int ranks) {
            return slab_share(needs, window.nz, double(window.nx) * window.ny, prop.free_surface ? 0 : p, p,
                              prop.free_surface, band_depth, ranks);
        };
        const auto budget_for = [&](const MemoryNeeds& n) {
            return mo.memory_budget > 0 ? mo.memory_budget
                                        : auto_memory_budget(free_memory(mo.propagation.backend), propagation_bytes(n));
        };
        // One rank's device needs: the propagation's arrays, and the kept source wavefield.
        const auto device_needs = [&](const MemoryNeeds& n, double kept, SourceStorage st) {
            const double Pr = n.padded_points, Wr = n.window_points;
            return std::vector<Need>{
                {2 * Pr * b * (n.state_arrays + n.parameter_arrays),
                 model.extra.empty() ? "two wavefields with damping layers"
                                     : "two VTI/TTI wavefields (p, q) with damping layers",
                 layers_cause},
                {(16 + 8.0 * n.window_scratch) * Wr,
                 n.window_scratch ? "shot image and illumination, diag(H, V) of the source wavefield"
                                  : "shot image and illumination",
                 "migration.aperture"},
                {R * steps * 8, "data at the step", receivers_cause},
                {kept, std::string("source wavefield (") + storage_name(st) + ")",
                 "migration.storage, migration.memory-budget, migration.image-every and migration.aperture"}};
        };
        const MemoryNeeds mine = share(group_ranks);
        const double budget = budget_for(mine);
        // The fewest ranks per shot whose shares fit (the budget, and on a GPU its free
        // memory), for the refusals below: a shot too large for one GPU runs on several.
        const auto fits_on = [&](int ranks) {
            const MemoryNeeds n = share(ranks);
            const MemoryPlan q = try_plan_memory(n, mo.storage, budget_for(n));
            return q.fits && (!prop.backend.gpu || total(device_needs(n, q.bytes_kept, q.storage)) <= device_free_bytes());
        };
        if (!fits_on(group_ranks))
            for (int r = group_ranks + 1; r <= 64 && !gpus_needed; ++r) try {
                    if (fits_on(r)) gpus_needed = r;
                } catch (const std::exception&) {
                    break;  // slabs thinner than the halo: no more ranks help
                }
        over_ranks =
            gpus_needed ? "Run the shot over " + std::to_string(gpus_needed) + (prop.backend.gpu ? " GPUs" : " ranks") +
                              ": parallel.ranks-per-shot = " + std::to_string(gpus_needed) +
                              (prop.backend.gpu ? " under mpirun, one rank per GPU" : " under mpirun") +
                              " (README, On a cluster)"
                        : "";
        // A plan that does not fit the budget is refused (naming migration.memory-budget)
        // after the checks of the machine's memory below, which count no kept wavefield
        // then: an automatic budget is what the propagation leaves, so where its own
        // arrays overflow the machine, what sets their size is at fault.
        const MemoryPlan mp = try_plan_memory(mine, mo.storage, budget);
        if (!mp.fits) try {
                plan_memory(mine, mo.storage, budget, "a shot of this job",
                            over_ranks.empty() ? "" : over_ranks + "; or " + other_storage(mo.storage) +
                                                                   "a smaller aperture");
            } catch (const Error&) {
                over_budget = std::current_exception();
            }
        const SourceStorage st = mp.storage;
        const double kept = mp.fits ? mp.bytes_kept : 0;
        propagations = st == SourceStorage::Boundary ? 3 : 1 + mp.recompute;  // the receivers' and the source's (recomputed)
        device = device_needs(mine, kept, st);
        storage_line = "source wavefield: " + std::string(storage_name(st)) + " (" + bytes(kept) + " a shot" +
                       (group_ranks > 1 ? " on each of its " + std::to_string(group_ranks) + " ranks" : "") +
                       "; snapshots " + bytes(mp.snapshot_bytes) + ", boundary band " + bytes(mp.band_bytes) +
                       ", budget " + bytes(budget) + (mo.memory_budget > 0 ? "" : " (auto)") + "), imaging every " +
                       std::to_string(k) + " steps";
        host.push_back({128 * M, "stacks (the job's and this run's, exact sums)", model_where});
        host.push_back({R * steps * 8, "data resampled to the step", receivers_cause});
    }
    host.push_back({4 * M * double(1 + model.extra.size()), "model", model_where});
    // The domain's arrays (a group's rank builds its slab's, and its slab propagator a copy)
    // and the window's velocities.
    // (VTI/TTI add W_pp, W_pq, and with a tilt the axis, in double.)
    const double domain_bytes = (migration ? 24 : 16) + (aniso ? 16 + (tilt ? 24 : 0) : 0);
    host.push_back({(domain_bytes * padded + 8 * W) * share * (group_ranks > 1 ? 2 : 1) + 4 * W, "domain", layers_cause});
    // Born modelling's source. Where the host forms it each step (the CPU, z-slabs): the
    // background's window and L of it (p, q, H p, V q and the six fluxes for VTI/TTI) and
    // the source, in double. One GPU forms it on the device: the host keeps dm v^2, the
    // device dm v^2 and the source's weights (isotropic: add_field's; VTI/TTI: W's three
    // entries and diag(H, V)'s scratch, with a tilt the six fluxes too).
    if (born) {
        const bool on_device = prop.backend.gpu && group_ranks == 1;
        host.push_back({8 * W * (on_device ? 1 : aniso ? 12 : 3), "Born source scratch", layers_cause});
        if (on_device)
            device.push_back({8 * W * (aniso ? 4 + (tilt ? 8 : 2) : 2), "Born perturbation and source weights", layers_cause});
    }
    // Modelling on a GPU writes a gather while the next one propagates (model_shots).
    if (!migration && prop.backend.gpu)
        host.push_back({2 * (R * rec.nt * 4.0 + R * steps * 8), "two gathers' traces (one written while the next is modelled)",
                        receivers_cause});
    else  // (migration: the next gather is read while one migrates, migration_job.cpp; modelling
          // on the CPU: a gather is written while the next is resampled, model_shots)
        host.push_back({2 * R * rec.nt * 4.0 + R * steps * 8, "two gathers and one's traces", receivers_cause});
    // On the CPU the propagators live in host memory too.
    std::vector<Need> all = host;
    if (!prop.backend.gpu) all.insert(all.end(), device.begin(), device.end());
    const HostMemory have = rank_memory();
    if (total(all) > have.total) {
        const Need& big = largest(all);
        fail(big.cause,
             "the plan needs " + bytes(total(all)) + " of memory for one shot, more than " + have.said() +
                 " (the largest part: " + big.what + ", " + bytes(big.bytes) + ")",
             "Make what sets it smaller");
    }

    // On a GPU the propagation's arrays and the kept wavefield must fit its free memory.
    if (prop.backend.gpu && total(device) > device_free_bytes()) {
        const Need& big = largest(device);
        fail(big.cause,
             "the plan needs " + bytes(total(device)) + " of GPU memory for one shot, more than the " +
                 bytes(device_free_bytes()) + " free on this GPU (the largest part: " + big.what + ", " +
                 bytes(big.bytes) + ")" + (group_ranks > 1 ? " on each of its " + std::to_string(group_ranks) +
                                                                  " ranks per shot" : ""),
             gpus_needed ? over_ranks + "; or make what sets it smaller"
             : over_budget ? "Make what sets it smaller"  // (the kept wavefield is counted as none already)
                           : "Make what sets it smaller, or lower migration.memory-budget so that the source wavefield "
                             "is checkpointed");
    }

    if (over_budget) std::rethrow_exception(over_budget);

    const int threads = omp_get_max_threads();
    const double bandwidth = prop.backend.gpu ? device_memory_bandwidth() : 0;
    const double rate =
        prop.backend.gpu
            ? (bandwidth > 0 ? bandwidth / 16 * (model.extra.empty() ? kGpuBandwidthShare : kGpuAnisotropicBandwidthShare)
                             : kGpuFallbackPointsPerSecond)
            : (model.extra.empty() ? kCpuPointsPerThread : kCpuAnisotropicPointsPerThread) * threads;
    const double seconds = P * steps * propagations * double(shots.count) / rate;
    std::vector<std::string> out;
    out.push_back("plan: " + std::to_string(g.ndim()) + "D model " + std::to_string(g.nx) + " x " + std::to_string(g.ny) +
                  " x " + std::to_string(g.nz) + " nodes (" + fmt(g.dx) + " x " + fmt(g.dy) + " x " + fmt(g.dz) +
                  " m), vp " + fmt(vmin, 6) + " to " + fmt(vmax, 6) + " m/s");
    out.push_back("plan: " + std::string(migration ? "largest shot window " : "grid ") + std::to_string(window.nx) + " x " +
                  std::to_string(window.ny) + " x " + std::to_string(window.nz) + " + " + std::to_string(p) + " " +
                  // (Migration, and every anisotropic model, propagate with damping layers.)
                  (migration || prop.boundary == Boundary::Damping || !model.extra.empty() ? "damping" : "C-PML") +
                  " cells a side" + (prop.free_surface ? " (free surface on top)" : "") +
                  " = " + std::to_string((long long)P) + " points");
    out.push_back("plan: dt " + fmt(dt * 1e3) + " ms (" +
                  (prop.dt > 0 ? "propagation.dt" : "the largest divisor of the " + fmt(rec.dt * 1e3) +
                                                        " ms record interval within " + fmt(100 * prop.courant_safety) +
                                                        "% of the stability limit") +
                  " " + fmt(dt_cfl * 1e3) + " ms " +
                  (model.extra.empty() ? "at v_max " + fmt(vmax, 6) + " m/s"
                                       : "of the anisotropic scheme, an isotropic medium's at " + fmt(v_cfl, 6) +
                                             " m/s; vp at most " + fmt(vmax, 6) + " m/s") +
                  "), " + std::to_string(ta.nt) +
                  " steps for the " + fmt(record) + " s record");
    out.push_back("plan: " + counted(shots.count, "shot") + ", up to " +
                  std::to_string(most_receivers) + " receivers each; every source and receiver lies in the model");
    auto list = [](const std::vector<Need>& n) {
        std::string s;
        for (const auto& x : n) s += (s.empty() ? "" : ", ") + x.what + " " + bytes(x.bytes);
        return s;
    };
    out.push_back("plan: memory per shot: " + std::string(prop.backend.gpu ? "device " : "propagation ") +
                  bytes(total(device)) + " (" + list(device) + "); host " + bytes(total(host)) + " (" + list(host) +
                  "); a rank may hold " + have.said());
    if (!storage_line.empty()) out.push_back("plan: " + storage_line);
    out.push_back("plan: estimated time for the " + counted(shots.count, "shot") + ": " + duration(seconds) + " (" +
                  fmt(propagations) + " propagation" +
                  (propagations > 1 ? "s" : "") + " a shot at a nominal " +
                  (prop.backend.gpu ? fmt(rate / 1e9, 2) + " Gpoints/s on the GPU" : fmt(rate / 1e9, 2) + " Gpoints/s on " +
                                                                     std::to_string(threads) + " CPU thread" +
                                                                     (threads > 1 ? "s" : "")) +
                  ")");
    return out;
}

}  // namespace rtm
