#pragma once
// A plan before the work (issue 9): what rtm model and rtm migrate will do, stated
// before the first propagation (the grid with its absorbing layers, the time step and
// why, the steps, the shots, memory per shot on the device and on the host, the source
// wavefield's storage, an estimated time), and the plans refused before anything large
// is allocated: step counts beyond what can run, memory beyond the machine,
// velocities that are not m/s, shots that do not fit the model or hold no record.
#include <functional>
#include <string>

#include <vector>

#include "core/host_memory.h"
#include "pipeline/migration.h"

namespace rtm {

// Velocities a model in m/s may hold: slower than air is not rock, and nothing in the
// Earth's crust or mantle runs faster than 15 km/s.
constexpr double kMinVelocity = 300, kMaxVelocity = 15000;
// More steps than this per shot is not a seismic job: a 20 s record at 0.1 ms is 2e5.
constexpr double kMaxSteps = 1e7;

// The samples of a record `length` s long at `dt` (length / dt + 1, rounded to the
// nearer sample, which is said when `say` and the length lies between two); refused,
// naming `where`, when it is not finite or would not fit an int.
int record_samples(double length, double dt, const std::string& where, bool say = true);

// Refuses a model (named by `where`) with a velocity outside kMinVelocity..kMaxVelocity,
// naming the node; a model whose velocities all lie in 0.3..15 reads as km/s.
void check_velocities(const Model& model, const std::string& where);

// The host memory one rank may plan for: host_memory() (core/host_memory.h) shared by
// the ranks of its node.
HostMemory rank_memory();

// The shots of a job, without their samples.
struct PlanShots {
    std::size_t count = 0;
    std::function<const ShotGather&(std::size_t)> geometry;
    std::function<std::string(std::size_t)> source;  // the file or options shot k comes from
};

// Checks every shot against the model and the wavelet (positions inside the model, off
// a 2D line by at most kOffLineTolerance, a record longer than one period of f_max, a
// geometry that is not a velocity model's), chooses the time step and the storage as the
// job will, refuses what cannot run, and returns the plan's lines.
// migration == nullptr: rtm model (the whole model, C-PML, one sampling for all shots),
// with born: Born modelling (two propagations at once, the Born source's scratch).
std::vector<std::string> plan_job(const Model& model, const std::string& model_path, const PlanShots& shots,
                                  const Wavelet& wavelet, const PropagationOptions& prop,
                                  const MigrationOptions* migration, bool born = false);

}  // namespace rtm
