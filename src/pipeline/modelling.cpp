#include "pipeline/modelling.h"

#include <algorithm>
#include <cmath>
#include <future>
#include <mutex>
#include <set>
#include <sstream>
#include <tuple>

#include <spdlog/spdlog.h>

#include "core/error.h"
#include "core/log.h"
#include "core/phases.h"
#include "core/progress.h"
#include "core/stop_signal.h"
#include "core/threads.h"
#include "physics/anisotropy.h"
#include "physics/stability.h"
#include "physics/wavelet.h"
#include "pipeline/blow_up.h"
#include "parallel/work_queue.h"
#include "pipeline/shot_window.h"

namespace rtm {

namespace {

// The predicted error of the time stepping, once per process for each setting (every
// shot of a migration asks for its time axis).
void log_time_stepping(double dt, double f_max, double record_length, bool corrected) {
    static std::mutex mutex;
    static std::set<std::tuple<double, double, double, bool>> said;
    std::lock_guard<std::mutex> lock(mutex);
    if (!said.insert({dt, f_max, record_length, corrected}).second) return;
    const LeapfrogError e = leapfrog_error(f_max, dt);
    const double cycles = e.cycles_per_second * record_length;
    if (corrected)
        spdlog::info("time stepping: dt {:.3g} ms; at f_max {:.1f} Hz leapfrog alone would run waves {:.2f}% fast "
                     "({:.2f} cycles of phase ahead by the end of the {:.2f} s record); the time-dispersion "
                     "transforms remove it: predicted phase error 0 (exact for the step; spatial dispersion remains)",
                     dt * 1e3, f_max, 100 * e.velocity, cycles, record_length);
    else
        spdlog::info("time stepping: dt {:.3g} ms; at f_max {:.1f} Hz leapfrog runs waves {:.2f}% fast: predicted "
                     "phase error {:.2f} cycles by the end of the {:.2f} s record, uncorrected "
                     "(propagation.time-dispersion-correction = false; with it: 0)",
                     dt * 1e3, f_max, 100 * e.velocity, cycles, record_length);
}

// An anisotropic model propagates with damping layers (C-PML is not proven stable for
// VTI/TTI), on either backend.
PropagationOptions anisotropic_options(const Model& model, PropagationOptions opt) {
    if (model.extra.empty()) return opt;
    if (opt.boundary == Boundary::Cpml) {
        opt.boundary = Boundary::Damping;
        spdlog::info("anisotropic model: damping absorbing layers ({} cells; C-PML is not proven stable for VTI/TTI)",
                     opt.pml_cells);
    }
    return opt;
}

}  // namespace

double choose_time_step(const Grid& g, double v_max, double record_dt, const Wavelet& wavelet,
                        const PropagationOptions& opt) {
    const double f_max = wavelet.f_max;
    const double dt_max = max_stable_dt(v_max, g.dx, g.ndim() == 3 ? g.dy : 0, g.dz);
    double dt = opt.dt;
    if (dt < 0 || !std::isfinite(dt))
        fail("option propagation.dt", "the time step " + std::to_string(dt) + " s is not positive",
             "Give a positive dt, or 0 to choose it from the CFL limit");
    if (dt > dt_max) {
        std::ostringstream os;
        os << "the time step " << dt << " s is unstable on this grid: its limit is " << dt_max
           << " s, an isotropic medium's at " << v_max << " m/s (the largest vp; for an anisotropic model, "
              "the speed whose isotropic limit is its scheme's: docs/anisotropy.md)";
        std::ostringstream fix;
        fix << "The largest stable dt is " << dt_max << " s; use propagation.dt <= " << dt_max
            << " or 0 for automatic";
        fail("option propagation.dt", os.str(), fix.str());
    }
    if (dt == 0) dt = record_dt / std::ceil(record_dt / (opt.courant_safety * dt_max));
    // The step samples the wavelet: its energy above the step's Nyquist frequency cannot be
    // propagated (it aliases), and the time-dispersion transforms have no frequency for it.
    if (f_max >= 0.5 / dt)
        fail(wavelet.band_from.empty() ? "options wavelet.ricker-f0 and wavelet.f-max (a wavelet file's band)"
                                       : wavelet.band_from,
             fmt::format("the wavelet's energy reaches {:g} Hz, at or above the time step's Nyquist frequency "
                         "({:g} Hz at dt {:g} ms): it cannot be propagated", f_max, 0.5 / dt, dt * 1e3),
             "Lower the wavelet's frequency (in Hz: a Ricker's peak is typically 5 to 50; a wavelet file's band "
             "can be stated with wavelet.f-max), or give a smaller propagation.dt");
    return dt;
}

void warn_dispersion(const Grid& g, double v_min, const Wavelet& wavelet) {
    const double h_max = std::max({g.dx, g.dz, g.ndim() == 3 ? g.dy : 0.0});
    const double ppw = points_per_wavelength(v_min, wavelet.f_max, h_max);
    if (ppw < kMinPointsPerWavelength)
        spdlog::warn("dispersion: {:.1f} grid points per shortest wavelength (slowest velocity {:.0f} m/s, "
                     "f_max {:.1f} Hz, h {:.1f} m); below {:.0f} the wavefield will be visibly "
                     "dispersed. Refine the grid or lower the frequency",
                     ppw, v_min, wavelet.f_max, h_max, kMinPointsPerWavelength);
}

DomainOptions domain_options(const PropagationOptions& opt, double dt, const Wavelet& wavelet) {
    DomainOptions d;
    d.boundary = opt.boundary;
    d.pml_cells = opt.pml_cells;
    d.free_surface = opt.free_surface;
    d.dt = dt;
    d.f_dominant = wavelet.f_dominant;
    // A rank of a shot group builds only its slab's arrays (the SlabPropagator's share).
    if (opt.backend.group && opt.backend.group->size() > 1) {
        d.slabs = opt.backend.group->size();
        d.slab = opt.backend.group->rank();
    }
    return d;
}

std::vector<double> source_trace(const Wavelet& wavelet, const TimeAxis& steps, const PropagationOptions& opt) {
    const auto w = resample(wavelet.samples.data(), int(wavelet.samples.size()), wavelet.dt, steps.nt, steps.dt);
    std::vector<double> out(w.begin(), w.end());
    if (opt.time_dispersion_correction) time_dispersion(steps.nt)->forward(out.data(), out.data());
    return out;
}

StepsToRecord::StepsToRecord(const TimeAxis& steps, int record_nt, double record_dt, const PropagationOptions& opt)
    : nt_(steps.nt), resample_(steps.nt, steps.dt, record_nt, record_dt) {
    if (opt.time_dispersion_correction) dispersion_ = time_dispersion(steps.nt);
}

void StepsToRecord::apply(const double* steps, float* record) const {
    if (!dispersion_) return resample_.apply(steps, record);
    std::vector<double> exact(nt_);
    dispersion_->inverse(steps, exact.data());
    resample_.apply(exact.data(), record);
}

void StepsToRecord::transpose(const float* record, double* steps) const {
    resample_.apply_transpose(record, steps);
    if (dispersion_) dispersion_->inverse_transpose(steps, steps);
}

int modelling_batch(const PropagationOptions& opt, long shots, double points, double samples) {
    if (opt.batch < 0)
        fail("option propagation.batch", "a batch of " + std::to_string(opt.batch) + " shots",
             "Give 0 (automatic) or a positive number of shots");
    long b = 1;
    if (opt.batch) b = opt.batch;
    else if (opt.backend.gpu)
        b = std::min(long(std::ceil(kBatchPoints / std::max(1.0, points))),
                     std::max(1L, long(kBatchSamples / std::max(1.0, samples))));
    return int(std::clamp(b, 1L, std::max(1L, shots)));
}

TimeAxis time_axis(const Model& model, const ShotGather& shot, const Wavelet& wavelet,
                   const PropagationOptions& opt) {
    TimeAxis t;
    // cfl_velocity: max vp, or for an anisotropic model the velocity whose isotropic
    // limit equals the anisotropic scheme's (physics/anisotropy.h).
    t.dt = choose_time_step(model.grid(), cfl_velocity(model), shot.dt, wavelet, opt);
    t.nt = int(std::ceil((shot.nt - 1) * shot.dt / t.dt - 1e-9)) + 1;
    // Past the record's end by the inverse time-dispersion transform's margin, so that
    // the end of the stepped traces is not the end of the record.
    if (opt.time_dispersion_correction) t.nt += time_dispersion_margin(t.nt);
    log_time_stepping(t.dt, wavelet.f_max, (shot.nt - 1) * shot.dt, opt.time_dispersion_correction);
    return t;
}

void model_shots(const Model& model, const std::vector<ShotGather>& geometry, const Wavelet& wavelet,
                 const PropagationOptions& options, const GatherSink& sink, ModellingStats* stats) {
    if (geometry.empty()) return;
    const PropagationOptions opt = anisotropic_options(model, options);
    const Grid& g = model.grid();
    const double record_dt = geometry.front().dt;
    const int record_nt = geometry.front().nt;
    const TimeAxis ta = time_axis(model, geometry.front(), wavelet, opt);
    const double dt = ta.dt;
    const int nt = ta.nt;

    PhaseTimer setting_up("set-up (domain, propagator)");
    const ShotWindow window = shot_window(model, geometry.front(), -1);
    Domain domain(window.grid, window.vp, domain_options(opt, dt, wavelet), window.extra);
    const auto& box = domain.box();
    std::size_t receivers = 0;
    for (const auto& geo : geometry) receivers = std::max(receivers, geo.receivers.size());
    const int batch = modelling_batch(opt, long(geometry.size()), double(box.points()), double(receivers) * nt);
    auto prop = make_propagator(domain, opt.precision, opt.backend, batch);
    spdlog::info("modelling {} on {} ({}D grid {} x {} x {} with {} absorbing cells), "
                 "dt {:.3g} ms, {} steps, {} at a time", counted(long(geometry.size()), "shot"), prop->name(), g.ndim(),
                 g.nx, g.ny, g.nz, opt.pml_cells, dt * 1e3, nt, counted(batch, "shot"));

    const std::vector<double> src_trace = source_trace(wavelet, ta, opt);
    setting_up.stop();

    const StepsToRecord to_record(ta, record_nt, record_dt, opt);
    // Counted in shot-steps, so that a batch holding every shot still shows progress.
    Progress progress("modelling: shot-steps", long(geometry.size()) * nt);
    // Batches go to the ranks (shot groups) of the job as they ask (one rank: all, in
    // order); each batch's gathers go to its group leader's sink.
    std::vector<long> batches;
    for (long b = 0; b * batch < long(geometry.size()); ++b) batches.push_back(b);
    const long batch_count = long(batches.size());
    parallel::WorkQueue queue(parallel::ShotGroups::get(), std::move(batches), batch_count);
    long shots_here = 0;
    double busy = 0;  // of the propagators replaced
    // A batch's traces come to the host, go to the record's sampling and to the sink
    // while the next batch propagates: on a GPU the host thread only queues steps, and a
    // 3D shot's 20 000 traces took 1.2 s of the host (H100, 2026-11-23), a quarter of
    // the shot, and their copy and transpose 0.5 s more (H200). One batch at most is in
    // flight, so the sink still gets the gathers in order. On the CPU the cores are the
    // propagation's: no overlap there.
    std::future<void> in_flight;
    auto finish_in_flight = [&] {
        if (in_flight.valid()) in_flight.get();  // rethrows what the sink threw
    };
    for (;;) {
        if (stop_signal()) queue.stop();  // (core/stop_signal.h: the caller's handler)
        const parallel::WorkQueue::Claim claim = queue.next();
        if (!claim) break;
        const std::size_t first = std::size_t(claim.item) * std::size_t(batch);
        // Shots first .. first + members - 1 as the members of one batch.
        const int members = int(std::min<std::size_t>(batch, geometry.size() - first));
        // The job's shots done by every rank (batches are whole but the last): rank 0's
        // progress is the job's, not its own share against the job's total.
        const long done_before = std::min(queue.finished_ok() * long(batch), long(geometry.size()) - members);
        if (members != prop->batch()) {
            busy += prop->busy_seconds();
            prop.reset();  // the old batch's device memory is freed before the new one is allocated
            prop = make_propagator(domain, opt.precision, opt.backend, members);
        }
        PhaseTimer placing("sources and receivers to the device");
        std::vector<PointStencil> sources, receivers;
        for (int m = 0; m < members; ++m) {
            const ShotGather& geo = geometry[first + m];
            if (geo.dt != record_dt || geo.nt != record_nt)
                fail("shot " + std::to_string(geo.id), "its sampling differs from the first shot's",
                     "Model shots with different sampling in separate runs");
            sources.push_back(member_stencil(source_stencil(domain, window, model, geo), box, m));
            for (auto& r : receiver_stencils(domain, window, model, geo))
                receivers.push_back(member_stencil(std::move(r), box, m));
        }
        prop->set_sources(sources, std::vector<std::vector<double>>(members, src_trace));
        prop->set_receivers(receivers, nt);
        prop->reset();
        placing.stop();
        PhaseTimer stepping("propagation steps");
        for (int n = 0; n < nt; ++n) {
            prop->step(n);
            if (finite_check_due(n, nt)) {
                std::string who = members > 1 ? "shots" : "shot";
                for (int m = 0; m < members; ++m) who += (m ? ", " : " ") + std::to_string(geometry[first + m].id);
                require_finite(*prop, who, "modelled", n, nt);
            }
            progress.update(done_before * nt + long(members) * (n + 1));
        }
        stepping.stop();
        // The batch before has gone to the sink (its traces' device buffer is back for
        // the next batch's steps).
        finish_in_flight();
        // The members' receivers in turn, fetched (on a GPU) beside the next batch's steps.
        auto fetch = prop->receiver_traces_later();
        // Only a group's leader writes its gathers (the members hold the same traces).
        auto to_sink = [&, fetch = std::move(fetch), first, members]() mutable {
            const FetchedTraces traces = fetch();  // (a GPU's fetch times itself)
            // Member m goes to the sink (written) while member m + 1 is resampled on the
            // cores: the resampling is compute (the inverse time-dispersion transform,
            // about 0.1 ms a trace) and the writing is I/O, one member at a time so the
            // sink still gets them in order. The last batch's had nothing beside it: 16 2D
            // Marmousi shots took 0.14 s of resampling and 0.07 s of writing in turn
            // (H200 host, 2026-11-25).
            std::future<void> sinking;
            std::size_t r0 = 0;
            for (int m = 0; m < members; ++m) {
                PhaseTimer resampling("traces to the record's sampling");
                ShotGather shot = geometry[first + m];
                shot.data.assign(shot.receivers.size() * std::size_t(record_nt), 0.f);
#pragma omp parallel for schedule(dynamic)
                for (std::size_t r = 0; r < shot.receivers.size(); ++r)
                    to_record.apply(traces.data() + (r0 + r) * nt, shot.trace(r));
                r0 += shot.receivers.size();
                resampling.stop();  // the sink times itself
                if (sinking.valid()) sinking.get();  // rethrows what the sink threw
                sinking = run_beside(true, 0, [&sink, k = first + m, shot = std::move(shot)]() mutable {
                    sink(k, std::move(shot));
                });
            }
            if (sinking.valid()) sinking.get();
        };
        if (queue.leader() && opt.backend.gpu) in_flight = run_beside(true, 1.0, std::move(to_sink));
        else if (queue.leader()) to_sink();
        shots_here += members;
        queue.finish(claim, true);
    }
    finish_in_flight();
    if (stats) {
        stats->shots = queue.leader() ? shots_here : 0;  // a group's shots are its leader's
        stats->steps = long(nt) * stats->shots;
        stats->point_updates = double(box.points()) * nt * stats->shots;
        stats->seconds = progress.elapsed();
        stats->busy_seconds = busy + prop->busy_seconds();
        stats->dt = dt;
    }
}

std::vector<ShotGather> model_shots(const Model& model, const std::vector<ShotGather>& geometry,
                                    const Wavelet& wavelet, const PropagationOptions& opt, ModellingStats* stats) {
    std::vector<ShotGather> out;
    model_shots(model, geometry, wavelet, opt, [&](std::size_t, ShotGather&& g) { out.push_back(std::move(g)); },
                stats);
    return out;
}

}  // namespace rtm
