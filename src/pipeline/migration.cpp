#include "pipeline/migration.h"


#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <future>
#include <sstream>

#include <spdlog/spdlog.h>

#include "core/error.h"
#include "core/phases.h"
#include "core/progress.h"
#include "core/threads.h"
#include "physics/stencil.h"
#include "physics/wavelet.h"
#include "parallel/world.h"
#include "pipeline/blow_up.h"
#include "pipeline/checkpoint_schedule.h"
#include "pipeline/plan.h"

namespace rtm {

namespace {

DomainOptions damping_domain(const MigrationOptions& opt, double dt, const Wavelet& w) {
    PropagationOptions p = opt.propagation;
    p.boundary = Boundary::Damping;
    return domain_options(p, dt, w);
}

// The shot's traces at the propagation's step, muted before the direct arrival when asked.
// Record to step is the exact transpose of modelling's step to record (StepsToRecord:
// the resampling's transpose, then the inverse time-dispersion transform's), so that
// born-adjoint migration is the adjoint of Born modelling for any record interval.
// Amplitudes: the resampling's transpose is interpolation times dt / record dt (its
// weights carry the gain that keeps amplitudes when downsampling), so the receiver
// wavefield is that much weaker than one driven by the interpolated data: the
// born-adjoint image is smaller by that factor than before (it is now the adjoint); for
// the other conditions migrate_shot scales the data back by record dt / dt, so their
// images and the illumination do not depend on the record interval (up to the
// time-dispersion correction).
// The end taper (before it), the mute and the rho filter (after it) lie outside the
// adjoint pair (all off for the born-adjoint condition, which must stay the adjoint).
// The end taper: a half cosine over the record's last `end_taper` seconds (to 0 at its
// last sample), on the record before the transposes (the time-dispersion transform's
// transpose moves a frequency w of the record's end earlier by the factor cos(w dt / 2):
// a taper after it would leave those). The record stops abruptly at its end, so without
// it the backward pass starts with a step at every receiver, a broadband source up to
// the grid's highest frequencies. Those reach depth fast in TTI (the rotated operator's
// grid-scale waves, kh 0.5 pi to 0.9 pi, run at up to 1.85 times vp) and the imaging
// steps, every k steps at the Nyquist rate of the wavelet's f_max, alias them into the
// image at the grid's Nyquist wavenumber (docs/anisotropy.md, "Why it matters").
// `to_record` is the shot's (its sampling and the steps'), made once for a batch: its
// resampler's weights cost more than the transposes of a 2D shot's traces.
// Returned as the backward pass's sources: each trace reversed in time and times
// `gain`, in the one loop over traces that runs on every core (a batch of 32 2D
// Marmousi shots is 77 M samples).
std::vector<std::vector<double>> data_at_step(const ShotGather& shot, const TimeAxis& ta, const StepsToRecord& to_record,
                                              const Model& model, const Wavelet& wavelet, bool mute, double mute_after,
                                              bool rho, double end_taper, double gain) {
    std::vector<std::vector<double>> out(shot.ntraces());
    const DirectMute muting(shot, model, wavelet, mute_after);
    const int nt = ta.nt;
    // The end taper's weights on the record's last samples.
    std::vector<float> end_weight;
    for (int n = shot.nt - 1; n >= 0 && (shot.nt - 1 - n) * shot.dt < end_taper; --n)
        end_weight.push_back(float(0.5 - 0.5 * std::cos(M_PI * (shot.nt - 1 - n) * shot.dt / end_taper)));
#pragma omp parallel for schedule(dynamic)
    for (std::size_t r = 0; r < shot.ntraces(); ++r) {
        std::vector<double> tmp(nt);
        const float* record = shot.trace(r);
        std::vector<float> tapered;
        if (!end_weight.empty()) {
            tapered.assign(record, record + shot.nt);
            for (std::size_t k = 0; k < end_weight.size(); ++k) tapered[shot.nt - 1 - k] *= end_weight[k];
            record = tapered.data();
        }
        to_record.transpose(record, tmp.data());
        const double t0 = mute ? muting.start(shot, r) : -1, taper = muting.taper;
        for (int n = 0; n < nt; ++n) {
            const double t = n * ta.dt;
            double g = 1;
            if (t < t0) g = 0;
            else if (t < t0 + taper) g = 0.5 - 0.5 * std::cos(M_PI * (t - t0) / taper);
            tmp[n] *= g;
        }
        std::vector<double>& o = out[r];
        o.resize(std::size_t(nt));
        for (int n = 0; n < nt; ++n) {
            // The rho filter, -d/dt by central differences.
            const double x = rho ? -((n + 1 < nt ? tmp[n + 1] : 0.0) - (n > 0 ? tmp[n - 1] : 0.0)) / (2 * ta.dt) : tmp[n];
            o[std::size_t(nt - 1 - n)] = x * gain;
        }
    }
    return out;
}

}  // namespace

DirectMute::DirectMute(const ShotGather& shot, const Model& model, const Wavelet& wavelet, double mute_after)
    : window(mute_after >= 0 ? mute_after : double(wavelet.samples.size() - 1) * wavelet.dt),  // (a Ricker's: 3 / f0)
      taper(1.0 / wavelet.f_dominant) {
    double x, y;
    model.grid().frame.to_local(shot.source.x, shot.source.y, x, y);
    const Grid& g = model.grid();
    const int ix = std::clamp(int(std::lround(x / g.dx)), 0, g.nx - 1);
    const int iy = g.ny > 1 ? std::clamp(int(std::lround(y / g.dy)), 0, g.ny - 1) : 0;
    const int iz = std::clamp(int(std::lround((shot.source.z - g.z0) / g.dz)), 0, g.nz - 1);
    v_src = model.vp.at(ix, iy, iz);
}

double DirectMute::start(const ShotGather& shot, std::size_t r) const {
    const double dx = shot.receivers[r].x - shot.source.x, dy = shot.receivers[r].y - shot.source.y,
                 dz = shot.receivers[r].z - shot.source.z;
    return std::sqrt(dx * dx + dy * dy + dz * dz) / v_src + window;
}

double end_taper_seconds(const MigrationOptions& opt, const Wavelet& wavelet) {
    if (opt.condition == ImagingCondition::BornAdjoint) return 0;
    return opt.end_taper >= 0 ? opt.end_taper : 1.0 / wavelet.f_max;
}

int imaging_interval(const MigrationOptions& opt, const Wavelet& wavelet, const TimeAxis& ta) {
    if (opt.condition == ImagingCondition::BornAdjoint) return 1;
    int k = opt.image_every;
    if (k <= 0) k = std::max(1, int(std::floor(1.0 / (2.0 * wavelet.f_max * ta.dt))));
    // Imaging steps are 0, k, 2k, ... < nt: with k >= nt only t = 0, before any wave
    // has travelled, and the image would be zero.
    if (k >= ta.nt)
        fail("option migration.image-every",
             std::to_string(k) + " steps between imaging steps is beyond the record's " + std::to_string(ta.nt) +
                 " steps: the image would be zero",
             "Give 0 (from the wavelet's band: " +
                 std::to_string(std::max(1, int(std::floor(1.0 / (2.0 * wavelet.f_max * ta.dt))))) +
                 " steps here) or fewer steps");
    return k;
}

namespace {

// "shot 3" or "shots 3, 4, 5".
std::string who_of(const ShotGather* const* shots, int count) {
    std::string who = count > 1 ? "shots" : "shot";
    for (int i = 0; i < count; ++i) who += (i ? ", " : " ") + std::to_string(shots[i]->id);
    return who;
}

// Shots of one batch_key migrated together: what they share (the window, its domain,
// the time axis and the imaging steps), and run() for some of them.
struct BatchMigration {
    const Model& model;
    const Wavelet& wavelet;
    const MigrationOptions& opt;
    TimeAxis ta;
    int N;
    ShotWindow window;                          // its grid and place (no volumes: window_extent)
    WindowCache* kept;                          // the caller's, or none
    std::shared_ptr<const Domain> domain_kept;  // the window's, shared with `kept`
    const Domain& domain;
    StepsToRecord to_record;  // the batch's record sampling (batch_key) and steps
    bool born, is;
    int k;
    // Imaging at receiver-wavefield times j (multiples of k) with the source wavefield
    // at s(j) = j, or j - 1 for the Born adjoint (Born injects at step n into u[n+1]):
    // s = 0, k, 2k, ... (source_times, ascending).
    int shift;
    std::vector<int> source_times;
    int M;
    // Checkpointed states: state i is the source propagator after e + i k steps, e = 1
    // for inverse scattering (current u[s+1], previous u[s]: reversed in time, the
    // current u[s] and previous u[s+1] it images with), else 0 (current u[s]).
    int e;

    BatchMigration(const Model& model, const ShotGather& first, const Wavelet& wavelet, const MigrationOptions& opt,
                   WindowCache* kept)
        : model(model), wavelet(wavelet), opt(opt), ta(time_axis(model, first, wavelet, opt.propagation)), N(ta.nt),
          window(window_extent(model, first, opt.aperture)), kept(kept),
          domain_kept(domain_of(first)),
          domain(*domain_kept),
          to_record(ta, first.nt, first.dt, opt.propagation),
          born(opt.condition == ImagingCondition::BornAdjoint),
          is(opt.condition == ImagingCondition::InverseScattering), k(imaging_interval(opt, wavelet, ta)),
          shift(born ? 1 : 0), e(is ? 1 : 0) {
        for (int j = 0; j < N; j += k)
            if (j - shift >= 0) source_times.push_back(j - shift);
        M = int(source_times.size());
    }

    // The window's velocities (and anisotropy) are cut from the model only when its
    // domain is built: a kept one needs none (a 3D window is the model's 48 M nodes,
    // cut before every shot and copied into its result: most of the 0.2 s before each
    // 3D shot's steps on the H200 host, 2026-11-23).
    std::shared_ptr<const Domain> domain_of(const ShotGather& first) const {
        const auto make = [&] {
            const ShotWindow w = shot_window(model, first, opt.aperture);
            return std::make_shared<const Domain>(w.grid, w.vp, damping_domain(opt, ta.dt, wavelet), w.extra);
        };
        return kept ? kept->domain(batch_key(model, first, opt), make) : make();
    }

    // How to keep the source wavefield (memory_plan.h) for `members` shots; the budget
    // "auto" (0) from the memory free before their propagators are made.
    // In a shot group of z-slabs, what the rank with the largest share holds: every rank
    // plans for it, so that all choose alike.
    MemoryNeeds needs_of(int members) const {
        const MemoryNeeds whole =
            memory_needs(domain, N, M, k, e, opt.propagation.precision, opt.bf16_snapshots, opt.condition, members);
        const kernels::Box& b = domain.box();
        const Grid& w = domain.window();
        return slab_share(whole, w.nz, double(w.nx) * w.ny, b.pml_lo[2], b.pml_hi[2], b.free_surface,
                          domain.anisotropic() && domain.tti().tilted ? 2 * stencil::R : stencil::R, group_size());
    }
    // The automatic budget of a shot group is its members' least: they must agree on the
    // way the source wavefield is kept (a z-slab rank keeping snapshots while another
    // checkpoints would step differently).
    double budget_of(const MemoryNeeds& n) const {
        if (opt.memory_budget > 0) return opt.memory_budget;
        const Backend& b = opt.propagation.backend;
        double budget = auto_memory_budget(kept ? kept->free_memory(b) : free_memory(b), propagation_bytes(n));
        if (group_size() > 1)
            for (const auto& bytes : b.group->allgather(&budget, sizeof budget)) {
                double theirs;
                std::memcpy(&theirs, bytes.data(), sizeof theirs);
                budget = std::min(budget, theirs);
            }
        return budget;
    }
    int group_size() const {
        const parallel::World* g = opt.propagation.backend.group;
        return g ? g->size() : 1;
    }

    // shots[0 .. B-1] propagated together (member m: shots[m]) into out[0 .. B-1].
    void run(const ShotGather* const* shots, int B, ShotMigration* out) const;
};

void BatchMigration::run(const ShotGather* const* shots, int B, ShotMigration* out) const {
    PhaseTimer setting_up("set-up (domain, propagators)");
    const std::string who = who_of(shots, B);
    const MemoryNeeds needs = needs_of(B);
    const double budget = budget_of(needs);
    const MemoryPlan plan = plan_memory(needs, opt.storage, budget, who);
    const SourceStorage storage = plan.storage;
    spdlog::info("{}: source wavefield by {}{} ({:.3g} GB of a budget of {:.3g} GB{}; snapshots {:.3g} GB, boundary "
                 "band {:.3g} GB), recomputation factor {:.2f} ({} source steps for {})",
                 who, storage_name(storage),
                 storage == SourceStorage::Checkpoints
                     ? " (" + std::to_string(plan.checkpoints - 1) + " states stored, the first rebuilt from rest)"
                     : "",
                 plan.bytes_kept / 1e9, budget / 1e9, opt.memory_budget > 0 ? "" : ", auto", plan.snapshot_bytes / 1e9,
                 plan.band_bytes / 1e9, plan.recompute, plan.forward_steps, N);

    // Member m of both propagators is shot m. Kept ones (WindowCache) are reset below.
    WindowCache::Propagators p = kept ? kept->take(B) : WindowCache::Propagators{};
    auto make = [&] { return make_propagator(domain, opt.propagation.precision, opt.propagation.backend, B); };
    auto& src = p.source;
    auto& rec = p.receiver;
    if (!src) src = make();
    if (!rec) rec = make();
    rec->reserve_imaging(opt.condition);  // before the source pass takes the memory
    const double busy_before = src->busy_seconds() + rec->busy_seconds();

    // The receivers as sources of the backward pass: their data at the step (transposed
    // from the records, reversed in time, scaled) and their stencils, given to the
    // receiver propagator. Host work that needs nothing of the source pass: on a GPU it
    // runs while the source pass's steps are queued (a batch of 16 2D Marmousi shots
    // took 2.4 s of the host, four times its steps, H100 2026-11-23); on the CPU the
    // cores are the propagation's, so it runs when it is needed.
    auto receivers_as_sources = [&] {
        PhaseTimer t("receiver data to the step");
        struct {
            std::vector<PointStencil> where;
            std::vector<std::vector<double>> data;
        } r;
        for (int m = 0; m < B; ++m) {
            const ShotGather& shot = *shots[m];
            // The born-adjoint condition keeps the exact transpose; the others take back the
            // transpose's dt / record dt (see data_at_step), so that their images do not
            // depend on the record interval. On the data, not on the imaging weight: the
            // illumination (the source wavefield's) shares that weight and must not move.
            const double gain = domain.cell_volume() * (born ? 1.0 : shot.dt / ta.dt);
            const double end_taper = end_taper_seconds(opt, wavelet);
            for (auto& tr : data_at_step(shot, ta, to_record, model, wavelet, opt.mute_direct, opt.mute_after,
                                         opt.rho_filter && !born, end_taper, gain))
                r.data.push_back(std::move(tr));
            for (auto& s : receiver_stencils(domain, window, model, shot))
                r.where.push_back(member_stencil(std::move(s), domain.box(), m));
        }
        t.stop();
        const PhaseTimer to_device("receivers as sources to the device");
        rec->set_sources(r.where, r.data);
        rec->set_receivers({}, N);
    };
    // (Declared after the propagators: a pass that throws waits for it before they go.)
    // Not for z-slabs: their set_sources is collective over the group, whose messages
    // must not cross the source pass's exchanges.
    std::future<void> receivers;
    const parallel::World* group = opt.propagation.backend.group;
    if (opt.propagation.backend.gpu && !(group && group->size() > 1))
        receivers = run_beside(true, 1.0, [&] { receivers_as_sources(); });
    const auto src_trace = source_trace(wavelet, ta, opt.propagation);
    std::vector<PointStencil> sources;
    for (int m = 0; m < B; ++m)
        sources.push_back(member_stencil(source_stencil(domain, window, model, *shots[m]), domain.box(), m));
    src->set_sources(sources, std::vector<std::vector<double>>(std::size_t(B), src_trace));
    src->set_receivers({}, N);
    src->reset();

    // Source steps: time t is the source propagator's (step(t) comes next); steps past
    // the furthest reached are new and checked for a blow-up, recomputed ones are not.
    int t = 0, reached = 0;
    long source_steps = 0;
    Progress forward(who + ": forward steps", storage == SourceStorage::Checkpoints ? e + long(k) * (M - 1) : N);
    auto source_step = [&]() {
        src->step(t++);
        ++source_steps;
        if (t > reached) {
            reached = t;
            if (finite_check_due(t - 1, N)) require_finite(*src, who, "source (forward)", t - 1, N);
            forward.update(t);
        }
    };

    // Checkpoints: the schedule runs up to each state the backward pass takes; the
    // first sweep (to the last state) runs before the backward pass starts.
    std::vector<CheckpointAction> schedule;
    std::size_t next_action = 0;
    auto advance_to_use = [&]() {
        for (;;) {
            if (next_action >= schedule.size()) fail(who, "the checkpoint schedule ended before the backward pass");
            const CheckpointAction& a = schedule[next_action++];
            switch (a.kind) {
                case CheckpointAction::Advance:
                    while (t < e + a.index * k) source_step();
                    break;
                // Slot 0 holds state 0, which is not stored but rebuilt from rest
                // (memory_plan.h); slot i > 0 is stored state slot i - 1.
                case CheckpointAction::Store:
                    if (a.slot > 0) src->store_state(std::size_t(a.slot - 1));
                    break;
                case CheckpointAction::Restore:
                    if (a.slot > 0) {
                        src->load_state(std::size_t(a.slot - 1));
                        t = e + a.index * k;
                    } else {
                        src->reset();
                        t = 0;
                        while (t < e) source_step();
                    }
                    break;
                case CheckpointAction::Use: return a.index;
            }
        }
    };
    int pending_use = -1;  // the state the first sweep reached, taken by the first imaging step
    setting_up.stop();
    PhaseTimer forward_pass("source steps");

    // Forward pass.
    if (storage == SourceStorage::Checkpoints) {
        src->reserve_states(std::size_t(plan.checkpoints - 1));
        schedule = checkpoint_schedule(M, plan.checkpoints);
        while (t < e) source_step();  // to state 0
        pending_use = advance_to_use();
        require_finite(*src, who, "source (forward)", t - 1, N);  // the sweep ends before step N
    } else {
        std::size_t next_snap = 0;
        if (storage == SourceStorage::Boundary) {
            src->reserve_bands(std::size_t(N) + 1);  // slot n: the band of u[n]
            src->store_band(0);
        }
        if (storage == SourceStorage::Snapshots) {
            src->clear_kept();  // a kept propagator's last shot's
            src->reserve_kept(source_times.size() * (is ? 2 : 1), opt.bf16_snapshots);
        }
        for (int n = 0; n < N; ++n) {
            const bool snap_time = storage == SourceStorage::Snapshots && next_snap < source_times.size() &&
                                   source_times[next_snap] == n;
            if (snap_time) src->keep(opt.bf16_snapshots);  // u[n]: slot next_snap (2 next_snap for IS)
            source_step();                                  // now u[n+1] current, u[n] previous
            if (storage == SourceStorage::Boundary) src->store_band(std::size_t(n) + 1);
            if (snap_time) {
                if (is) src->keep(opt.bf16_snapshots);  // u[n+1]: slot 2 next_snap + 1
                ++next_snap;
            }
        }
    }
    int cs = N - 1;  // the source time held by src (boundary strategy)
    if (storage == SourceStorage::Boundary) src->reverse_time();  // current u[N-1], previous u[N]

    // Backward pass: receiver wavefield from the time-reversed data; injected as
    // point sources (which divide by the cell volume, so multiply it back: the adjoint
    // of sampling a receiver is spreading its value with the same weights).
    forward_pass.stop();
    if (receivers.valid()) receivers.get();
    else receivers_as_sources();
    // Time-integral weight of one imaging step: k dt; the born-adjoint condition is a
    // plain sum.
    const double w = born ? 1.0 : k * ta.dt;
    int snap = M - 1;
    rec->reset();
    PhaseTimer backward_pass("receiver steps and imaging");
    Progress backward(who + ": backward steps", N);
    for (int m = 0; m < N; ++m) {
        rec->step(m);  // current: l[j]
        if (finite_check_due(m, N)) require_finite(*rec, who, "receiver (backward)", m, N);
        backward.update(m + 1);
        const int j = N - 1 - m;
        if (j % k != 0 || j - shift < 0) continue;
        const int s = j - shift;
        // Bring the source wavefield to u[s] (and, for inverse scattering, u[s+1] as its
        // previous wavefield; the receiver's previous one is l[j+1]).
        if (storage == SourceStorage::Boundary) {
            while (cs > s) {
                src->step(cs);  // backwards: current becomes u[cs-1], previous u[cs]
                ++source_steps;
                --cs;
                src->load_band(std::size_t(cs));
            }
        } else if (storage == SourceStorage::Checkpoints) {
            const int i = pending_use >= 0 ? pending_use : advance_to_use();
            pending_use = -1;
            if (i != snap) fail(who, "the checkpoint schedule gave state " + std::to_string(i) + " for " + std::to_string(snap));
            if (is) src->reverse_time();  // current u[s], previous u[s+1]
        } else if (is) {
            src->recall(std::size_t(2 * snap + 1), true);
            src->recall(std::size_t(2 * snap));
        } else {
            src->recall(std::size_t(snap));
        }
        --snap;
        // On the propagators (device memory on a GPU): nothing goes to the host per step.
        rec->correlate(*src, w, opt.condition);
        if (storage == SourceStorage::Checkpoints && is) src->reverse_time();  // back to the state stepped from
    }
    backward_pass.stop();
    PhaseTimer to_host("shot image to the host");
    auto image = rec->member_correlations(false), illumination = rec->member_correlations(true);
    const double busy = src->busy_seconds() + rec->busy_seconds() - busy_before;
    to_host.stop();
    if (kept) {
        p.members = B;
        kept->give_back(std::move(p));
    } else {
        const PhaseTimer t("free the shot's propagators");
        p = {};
    }
    for (int m = 0; m < B; ++m) {
        ShotMigration& r = out[m];
        r.window = window;
        r.image = std::move(image[std::size_t(m)]);
        r.illumination = std::move(illumination[std::size_t(m)]);
        r.storage = storage;
        r.bytes_kept = plan.bytes_kept / B;
        r.checkpoints = plan.checkpoints;
        r.steps = N;
        r.image_every = k;
        r.source_steps = source_steps;
        r.recompute = double(source_steps) / N;
        r.busy_seconds = busy / B;
        r.point_updates = double(domain.box().points()) * double(source_steps + N);
        r.batch = B;
    }
}

}  // namespace

BatchKey batch_key(const Model& model, const ShotGather& shot, const MigrationOptions& opt) {
    const ShotWindow w = window_extent(model, shot, opt.aperture);
    return {w.ix0, w.iy0, w.grid.nx, w.grid.ny, w.grid.nz, shot.nt, shot.dt};
}

int migration_batch(const Model& model, const ShotGather& shot, const Wavelet& wavelet, const MigrationOptions& opt,
                    long shots) {
    const Grid w = window_extent(model, shot, opt.aperture).grid;
    const double p = opt.propagation.pml_cells;
    const double points = (w.nx + 2 * p) * (w.ndim() == 3 ? w.ny + 2 * p : 1.0) *
                          (w.nz + (opt.propagation.free_surface ? 1 : 2) * p);
    const double samples = double(shot.receivers.size()) * time_axis(model, shot, wavelet, opt.propagation).nt;
    return modelling_batch(opt.propagation, shots, points, samples);
}

std::shared_ptr<const Domain> WindowCache::domain(const BatchKey& key,
                                                  const std::function<std::shared_ptr<const Domain>()>& make) {
    if (!domain_ || key != key_) {
        kept_ = {};  // its propagators refer to the domain: they go first
        domain_.reset();
        free_ = -1;
        domain_ = make();
        key_ = key;
    }
    return domain_;
}

double WindowCache::free_memory(const Backend& backend) {
    if (free_ < 0) free_ = rtm::free_memory(backend);
    return free_;
}

WindowCache::Propagators WindowCache::take(int members) {
    Propagators p = std::move(kept_);
    kept_ = {};
    if (p.members != members) p = {};  // another batch size: made anew
    return p;
}

std::vector<ShotMigration> migrate_shots(const Model& model, const std::vector<const ShotGather*>& shots,
                                         const Wavelet& wavelet, const MigrationOptions& opt, WindowCache* kept) {
    if (shots.empty()) return {};
    const auto start = std::chrono::steady_clock::now();
    const ShotGather& first = *shots.front();
    const BatchKey key = batch_key(model, first, opt);
    for (const ShotGather* s : shots)
        if (batch_key(model, *s, opt) != key)
            fail("shot " + std::to_string(s->id),
                 "its window or record sampling differs from shot " + std::to_string(first.id) +
                     "'s, with which it was to be migrated",
                 "Migrate together only shots of one batch_key");
    PhaseTimer setting_up("set-up (domain, propagators)");
    const BatchMigration batch(model, first, wavelet, opt, kept);
    setting_up.stop();
    // Every shot keeps its source wavefield the way it would alone (the same image bit
    // for bit): the batch goes in parts of as many shots as fit that way together.
    const int count = int(shots.size());
    const MemoryNeeds one = batch.needs_of(1);
    const MemoryPlan alone = plan_memory(one, opt.storage, batch.budget_of(one), who_of(shots.data(), count));
    int together = count;
    for (; together > 1; --together) {
        const MemoryNeeds n = batch.needs_of(together);
        const MemoryPlan p = try_plan_memory(n, opt.storage, batch.budget_of(n));
        if (p.fits && p.storage == alone.storage) break;
    }
    if (together < count)
        spdlog::info("{}: {} shots at a time (their source wavefields by {} do not fit the budget all at once)",
                     who_of(shots.data(), count), together, storage_name(alone.storage));
    std::vector<ShotMigration> out(shots.size());
    for (int from = 0; from < count; from += together)
        batch.run(shots.data() + from, std::min(together, count - from), out.data() + from);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (auto& r : out) r.seconds = seconds / double(shots.size());
    return out;
}

ShotMigration migrate_shot(const Model& model, const ShotGather& shot, const Wavelet& wavelet,
                           const MigrationOptions& opt) {
    return std::move(migrate_shots(model, {&shot}, wavelet, opt).front());
}

ShotGather born_shot(const Model& model, const Volume& dm, const ShotGather& shot, const Wavelet& wavelet,
                     const MigrationOptions& opt, double* busy_seconds) {
    const TimeAxis ta = time_axis(model, shot, wavelet, opt.propagation);
    const int N = ta.nt;
    const ShotWindow win = shot_window(model, shot, opt.aperture);
    const Grid& wg = win.grid;
    const Domain domain(wg, win.vp, damping_domain(opt, ta.dt, wavelet), win.extra);
    // dm v^2 on the window: the Born source is W g, g = -dm v^2 L u0 (Propagator::add_born_source).
    std::vector<double> dm_v2(wg.size());
    for (int iz = 0; iz < wg.nz; ++iz)
        for (int iy = 0; iy < wg.ny; ++iy)
            for (int ix = 0; ix < wg.nx; ++ix) {
                const std::size_t i = wg.index(ix, iy, iz);
                dm_v2[i] = dm.at(ix + win.ix0, iy + win.iy0, iz) * double(win.vp[i]) * win.vp[i];
            }

    auto u0 = make_propagator(domain, opt.propagation.precision, opt.propagation.backend);
    auto du = make_propagator(domain, opt.propagation.precision, opt.propagation.backend);
    u0->set_sources({source_stencil(domain, win, model, shot)}, {source_trace(wavelet, ta, opt.propagation)});
    u0->set_receivers({}, N);
    du->set_sources({}, {});
    du->set_receivers(receiver_stencils(domain, win, model, shot), N);
    du->set_born_perturbation(wg, std::move(dm_v2));
    u0->reset();
    du->reset();
    for (int n = 0; n < N; ++n) {
        // W g[n], g[n] = -dm v^2 L u0[n], injected into du[n+1].
        du->step(n);
        du->add_born_source(*u0);
        u0->step(n);
        if (finite_check_due(n, N)) {
            const std::string who = "shot " + std::to_string(shot.id);
            require_finite(*u0, who, "background (Born)", n, N);
            require_finite(*du, who, "scattered (Born)", n, N);
        }
    }
    const auto traces = du->receiver_traces();
    if (busy_seconds) *busy_seconds = u0->busy_seconds() + du->busy_seconds();
    ShotGather out = shot;
    out.data.assign(shot.ntraces() * std::size_t(shot.nt), 0.f);
    const StepsToRecord to_record(ta, shot.nt, shot.dt, opt.propagation);
#pragma omp parallel for schedule(dynamic)
    for (std::size_t r = 0; r < shot.ntraces(); ++r) to_record.apply(traces.data() + r * N, out.trace(r));
    return out;
}

Volume slowness_perturbation_from_reflectivity(const Model& model, const Volume& r) {
    Volume dm(model.grid());
    for (std::size_t i = 0; i < dm.data.size(); ++i) {
        const double v = model.vp.data[i];
        dm.data[i] = float(-4.0 * r.data[i] / (v * v));
    }
    return dm;
}

}  // namespace rtm
