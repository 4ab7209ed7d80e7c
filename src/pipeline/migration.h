#pragma once
// Reverse-time migration of one shot or of a batch of shots, and Born modelling (its
// adjoint partner).
//
// Per shot: the model is cut to the shot's window (source and receivers plus an
// aperture), with damping layers around it (their discrete adjoint is exact: the same
// step run backwards in time). The source wavefield u runs forward; the receiver
// wavefield l runs backward in time from the time-reversed traces, injected with the
// stencils that recorded them; every k steps the imaging condition combines them.
// The backward pass needs u backwards in time, kept one of three ways (memory_plan.h
// chooses within migration.memory-budget):
//   snapshots:   u on the window every k steps (optionally bfloat16): two propagations;
//   boundary:    the window's edge band every step, u rebuilt backwards in step with l
//                (u[n-1] = 2u[n] - u[n+1] + (v dt)^2 Lap u[n] inside the band): three;
//   checkpoints: the source propagator's whole state at a few imaging steps, the
//                states between recomputed forward from them (Griewank's schedule,
//                checkpoint_schedule.h): 1 + the recomputation factor propagations,
//                and the same image as snapshots bit for bit (states are kept in the
//                propagation's precision and the steps repeat exactly).
//
// Conditions (sums over imaging steps, times k dt):
//   cross-correlation   I = sum u l
//   inverse scattering  I = sum ( u_t l_t / v^2 - grad u . grad l )  (energy norm:
//                       suppresses the low-wavenumber backscatter of cross-correlation)
//   born-adjoint        I = -sum (v^2 Lap u[n-1]) l[n], with k = 1: the exact adjoint of
//                       born_shots (their dot products agree to rounding); VTI/TTI:
//                       -sum v^2 (H p[n-1] . p_l[n] + V q[n-1] . q_l[n]) (Propagator::correlate).
// The illumination is sum u^2.
// Time dispersion (PropagationOptions::time_dispersion_correction): the source wavefield
// is driven by the forward-transformed wavelet, as in modelling, and the data enter
// through the transposes of the resampling and of the inverse transform (data_at_step),
// so born-adjoint stays the exact adjoint. The other conditions correlate the stepped
// wavefields, whose frequency w stands for the exact one w' = (2/dt) sin(w dt/2): the
// zero-lag sum over steps is the exact correlation weighted by 1 / cos(w dt / 2) (an
// amplitude weight, no shift: 3% at 40 Hz with a 2 ms step); inverse scattering's time
// derivatives are one-step differences, not exact ones.
// A batch: shots of one window and record sampling (batch_key) propagated together,
// member m of the source and receiver propagators being shot m (Propagator: one launch
// per kernel for all of them, what fills a GPU in 2D), each shot's image kept apart and
// equal bit for bit to the one it gets alone.
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "pipeline/memory_plan.h"
#include "pipeline/modelling.h"
#include "pipeline/shot_window.h"

namespace rtm {

struct MigrationOptions {
    PropagationOptions propagation;   // its boundary is replaced by Damping
    double aperture = 1000;           // m beyond the source and receivers; < 0: whole model
    int image_every = 0;              // k, steps between imaging steps; 0: Nyquist of f_max
    SourceStorage storage = SourceStorage::Auto;
    bool bf16_snapshots = false;      // snapshots in bfloat16 (half the memory)
    double memory_budget = 0;         // bytes for the kept source wavefield; 0: auto (memory_plan.h)
    ImagingCondition condition = ImagingCondition::CrossCorrelation;
    bool mute_direct = false;         // zero the data before the direct arrival + mute_after
    double mute_after = -1;           // s after the direct wave's onset; < 0: the wavelet's length
    // -d/dt on the data: receivers injected as monopoles over the spread integrate the
    // back-propagated field in time, so cross-correlation images reflectors 90 degrees
    // out of phase; one derivative makes them zero-phase at their depth with SEG normal
    // polarity (positive where impedance increases downward), as the flat-reflector
    // tests measure in 2D and 3D. Never for BornAdjoint, which must stay the adjoint.
    bool rho_filter = true;
    // A half-cosine taper over the record's last end_taper seconds before the backward
    // pass (not for BornAdjoint): the record's abrupt end would start it with a broadband
    // step that the imaging steps alias (docs/anisotropy.md). < 0: 1 / the wavelet's f_max.
    double end_taper = -1;
};

// Per shot; a shot migrated in a batch gets its share (1 / members) of the batch's
// memory and times.
struct ShotMigration {
    ShotWindow window;  // where the image lies in the model (grid and place; no volumes)
    UninitVector<double> image, illumination;  // on the window
    SourceStorage storage = SourceStorage::Auto;  // the one used
    double bytes_kept = 0;                        // memory it took
    int checkpoints = 0;                          // states held (checkpoints)
    int steps = 0, image_every = 0;
    long source_steps = 0;   // source propagator steps: forward, rebuilt or recomputed
    double recompute = 1;    // source_steps / steps
    double seconds = 0;      // wall time of the shot
    double busy_seconds = 0; // of which in propagation steps (Propagator::busy_seconds)
    double point_updates = 0;  // grid points x steps of both propagators
    int batch = 1;             // shots propagated together with it (itself included)
};

// Steps between imaging steps: migration.image-every, or from the Nyquist rate of the
// wavelet's f_max (1 for the born-adjoint condition); throws, naming the option, when
// no imaging step would come after t = 0.
int imaging_interval(const MigrationOptions& opt, const Wavelet& wavelet, const TimeAxis& ta);

// The direct-wave mute of migration.mute-direct on one shot: trace r is zeroed before
// start(r), the direct wave's onset (offset over vp at the source) plus the window
// (mute_after, or the wavelet's length), and rises to full strength over `taper` (one
// dominant period) after it.
struct DirectMute {
    double v_src = 0, window = 0, taper = 0;
    DirectMute(const ShotGather& shot, const Model& model, const Wavelet& wavelet, double mute_after);
    double start(const ShotGather& shot, std::size_t r) const;
};

// Seconds of each record's end tapered before the backward pass (MigrationOptions::
// end_taper; 0 for the born-adjoint condition).
double end_taper_seconds(const MigrationOptions& opt, const Wavelet& wavelet);

ShotMigration migrate_shot(const Model& model, const ShotGather& shot, const Wavelet& wavelet,
                           const MigrationOptions& opt);

// Shots with equal keys may be migrated together: their window (first node and size)
// and record sampling (nt, dt), hence their domain and time steps, are the same.
using BatchKey = std::tuple<int, int, int, int, int, int, double>;
BatchKey batch_key(const Model& model, const ShotGather& shot, const MigrationOptions& opt);

// How many shots of `shots` like `shot` to migrate together: modelling's choice
// (modelling_batch, propagation.batch: 0 chooses, 1 on the CPU, on a GPU enough for
// kBatchPoints grid points) for its window with damping layers and its data at the step.
int migration_batch(const Model& model, const ShotGather& shot, const Wavelet& wavelet, const MigrationOptions& opt,
                    long shots);

// What consecutive batches of one window share, kept by the caller (a job) between
// migrate_shots calls, so that only the first batch of a window pays for them:
//  - the window's domain, tens of millions of points in double in 3D (1.3 s of a shot's
//    2.5 s set-up on the H100's host, 2026-11-23);
//  - its source and receiver propagators with what they allocated (wavefields, model
//    arrays on the device, snapshot slots, the band history, states: the other 1.6 s);
//  - the memory free before those propagators were made, from which the automatic
//    budget is planned (so every batch of the window gets the plan the first one got).
// A domain is immutable once built, and a kept propagator is reset (wavefields, memory
// variables, traces, image and illumination to zero) and given its batch's sources
// before it runs again, so a shot's image does not depend on what ran before it (tested
// bit for bit). A batch that fails takes its propagators with it (the next one makes new).
class WindowCache {
public:
    // The domain kept for `key` (batch_key: the window and the record sampling, hence
    // the steps, within one job's model and options), or make()'s, kept instead; what
    // was kept for another key is let go first, so that two are never held.
    std::shared_ptr<const Domain> domain(const BatchKey& key, const std::function<std::shared_ptr<const Domain>()>& make);

    // free_memory(backend) when the window's first propagators were not made yet,
    // measured once per window: every batch of it gets the automatic budget the first got.
    double free_memory(const Backend& backend);

    // The propagators of the domain last handed out, for batches of `members` shots:
    // taken by a batch (empty when none are kept for that many: it makes them) and
    // given back when it succeeds. Kept for one batch size at a time.
    struct Propagators {
        int members = 0;
        std::unique_ptr<Propagator> source, receiver;
    };
    Propagators take(int members);
    void give_back(Propagators p) { kept_ = std::move(p); }

private:
    BatchKey key_{};
    std::shared_ptr<const Domain> domain_;
    double free_ = -1;  // < 0: not measured for this window
    Propagators kept_;
};

// Shots of one batch_key (throws naming the first that differs) migrated together: one
// result per shot, in order, each image bit for bit migrate_shot's. `kept`, when
// given, keeps the window's domain and propagators for the next call (WindowCache). Every shot keeps its
// source wavefield the way it would alone (the plan for one shot); when the whole batch
// cannot keep them that way within the budget, it runs in parts of as many shots as can
// (logged). A blow-up or bad data in any shot stops the batch (the error names its shots).
std::vector<ShotMigration> migrate_shots(const Model& model, const std::vector<const ShotGather*>& shots,
                                         const Wavelet& wavelet, const MigrationOptions& opt,
                                         WindowCache* kept = nullptr);

// Born modelling: data scattered by dm (a perturbation of slowness squared, s^2/m^2,
// on the model grid) in the background model, recorded with `shot`'s geometry and
// sampling: m0 du_tt - Lap du = -dm (v^2 Lap u0), u0 the background wavefield. Uses
// the same windows, boundaries and steps as migrate_shot, so BornAdjoint migration is
// its exact adjoint.
// busy_seconds, when given, gets the seconds its propagation steps took.
ShotGather born_shot(const Model& model, const Volume& dm, const ShotGather& shot,
                     const Wavelet& wavelet, const MigrationOptions& opt, double* busy_seconds = nullptr);

// dm from a reflectivity r (normal incidence, constant density: r = dv / 2v, so
// dm = d(1/v^2) = -2 dv / v^3 = -4 r / v^2).
Volume slowness_perturbation_from_reflectivity(const Model& model, const Volume& reflectivity);

}  // namespace rtm
