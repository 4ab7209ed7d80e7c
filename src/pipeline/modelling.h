#pragma once
// Forward modelling: a model, shot geometries and a wavelet -> synthetic gathers.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/survey.h"
#include "physics/time_dispersion.h"
#include "physics/wavelet.h"
#include "propagation/backend.h"

namespace rtm {

struct Wavelet {
    std::vector<float> samples;  // starting at t = 0
    double dt = 0;               // s
    double f_max = 0;            // highest frequency with energy, Hz (for dispersion)
    double f_dominant = 0;       // Hz (for the C-PML frequency shift)
    // What set f_max, for messages about it (e.g. "option wavelet.ricker-f0"); empty: the
    // options that can set it.
    std::string band_from;
    // s after the first sample by which 1% of its energy has come (physics/wavelet.h's
    // wavelet_timing): a record must last longer; and what it is, for messages about it
    // ("the Ricker of option wavelet.ricker-f0", "the wavelet of FILE").
    double onset = 0;
    std::string name;
};

struct PropagationOptions {
    Boundary boundary = Boundary::Cpml;
    int pml_cells = 20;
    bool free_surface = false;
    double dt = 0;                   // time step, s; 0 = chosen from the CFL limit
    double courant_safety = 0.8;     // automatic dt = record dt / ceil(record dt / (safety * dt_max))
    // Koene et al.'s time-dispersion transforms (physics/time_dispersion.h): the source
    // forward-transformed before propagation, the traces inverse-transformed after it, so
    // that leapfrog's time error is gone (migration: their exact transposes).
    bool time_dispersion_correction = true;
    Precision precision = Precision::Single;
    Backend backend;                 // CPU unless set (see choose_backend)
    // Shots propagated together by `rtm model` and `rtm migrate` (one launch per kernel for
    // all of them; migration: shots of one window, migration_batch):
    // 0 chooses, 1 on the CPU (its threads are busy with one shot already) and on the
    // GPU enough shots for kBatchPoints grid points (a 2D shot alone leaves most of a GPU
    // idle), but no more than kBatchSamples receiver samples (the traces of a batch are
    // held on the device, then in double on the host).
    int batch = 0;
};

constexpr double kBatchPoints = 32e6;
constexpr double kBatchSamples = 128e6;

// The batch model_shots uses for `shots` shots of `points` grid points and `samples`
// receiver samples (receivers x time steps) each.
int modelling_batch(const PropagationOptions& opt, long shots, double points, double samples);

// The time step used for a model and record interval (checked against CFL; throws
// with the largest stable dt when an explicit one is unstable, and when the wavelet's
// band reaches the step's Nyquist frequency).
double choose_time_step(const Grid& g, double v_max, double record_dt, const Wavelet& wavelet,
                        const PropagationOptions& opt);
// Warns when the wavelet's shortest wavelength at v_min, the model's slowest velocity
// (physics/anisotropy.h's slowest_velocity), spans fewer than kMinPointsPerWavelength
// grid points. Once per job, from its plan: the per-shot time axes need neither the
// warning nor that pass over the model.
void warn_dispersion(const Grid& g, double v_min, const Wavelet& wavelet);

// The time step and step count shared by all shots of a job (from the whole model)
// for records like `shot`'s.
struct TimeAxis {
    double dt = 0;
    int nt = 0;
};
TimeAxis time_axis(const Model& model, const ShotGather& shot, const Wavelet& wavelet,
                   const PropagationOptions& opt);

// The domain settings of a propagation with these options.
DomainOptions domain_options(const PropagationOptions& opt, double dt, const Wavelet& wavelet);
// The samples a source injects: the wavelet resampled to the step, forward
// time-dispersion transformed when the correction is on.
std::vector<double> source_trace(const Wavelet& wavelet, const TimeAxis& steps, const PropagationOptions& opt);

// Receiver traces from the propagation's steps to the record's samples: the inverse
// time-dispersion transform (when on), then the resampling to the record interval.
// Both are linear maps of the samples; migration injects recorded data through their
// exact transposes in reverse order (transpose), which makes it the adjoint of (Born)
// modelling whatever the record interval and the step.
class StepsToRecord {
public:
    StepsToRecord(const TimeAxis& steps, int record_nt, double record_dt, const PropagationOptions& opt);
    void apply(const double* steps, float* record) const;      // steps.nt in, record_nt out
    void transpose(const float* record, double* steps) const;  // record_nt in, steps.nt out

private:
    int nt_;
    Resampler resample_;
    std::shared_ptr<const TimeDispersion> dispersion_;  // none when the correction is off
};

struct ModellingStats {
    long shots = 0, steps = 0;
    double point_updates = 0, seconds = 0;
    double busy_seconds = 0;  // of seconds, in propagation steps (Propagator::busy_seconds)
    double dt = 0;
};

// Receives gather `index` of the geometry as soon as its batch is modelled, in order.
using GatherSink = std::function<void(std::size_t index, ShotGather&& gather)>;

// Models every gather of `geometry` (receivers, nt, dt used; data replaced) and hands
// each to `sink` when its batch is done: the caller holds one batch of gathers at a
// time. Positions are world coordinates, mapped through the model's frame. Under
// several ranks (parallel/world.h; every rank calls it) the batches are shared out as
// ranks ask for them, each rank's sink gets its own gathers, and the stats are this
// rank's. After a signal (core/stop_signal.h) no rank takes another batch: the gathers
// sunk are then fewer than the geometry's (stats->shots says how many).
void model_shots(const Model& model, const std::vector<ShotGather>& geometry, const Wavelet& wavelet,
                 const PropagationOptions& opt, const GatherSink& sink, ModellingStats* stats = nullptr);

// All gathers at once (tests, benches): model_shots into a vector.
std::vector<ShotGather> model_shots(const Model& model, const std::vector<ShotGather>& geometry,
                                    const Wavelet& wavelet, const PropagationOptions& opt,
                                    ModellingStats* stats = nullptr);

}  // namespace rtm
