#pragma once
// How a migration shot keeps its source wavefield for the backward pass, within a
// memory budget:
//   snapshots:   the window every imaging step (two for inverse scattering: u[s], u[s+1]);
//   boundary:    the window's edge band every time step (fp32), u rebuilt backwards;
//   checkpoints: the whole propagation state (both time levels on the padded grid) at
//                a few imaging steps, the states between recomputed from them by
//                Griewank's schedule (checkpoint_schedule.h): any shot fits that can
//                hold one state. The schedule's first checkpoint is not stored: it
//                is the state at rest stepped to the first imaging step, rebuilt so
//                whenever the schedule restores it; k states stored give k + 1.
// Auto takes the first that fits the budget, in that order (fewest propagations first).
// The budget "auto" (0) is what the machine can give: on a GPU the free device memory,
// on the CPU the available host memory, after the propagation's own arrays and a margin.
#include <string>

#include "propagation/backend.h"

namespace rtm {

enum class SourceStorage { Auto, Snapshots, Boundary, Checkpoints };

const char* storage_name(SourceStorage s);  // "auto", "snapshots", "boundary", "checkpoints"

// What one shot's propagation holds, in values and bytes; a batch of `members` shots
// migrated together (Propagator batch) holds each shot's share once per member, and
// shares (v dt)^2, the damping and v^2.
struct MemoryNeeds {
    double window_points = 0;   // window nodes (what a snapshot holds)
    double padded_points = 0;   // computed points with layers and halos (one wavefield array)
    double band_points = 0;     // edge-band nodes saved per step
    int steps = 0;              // time steps N
    int states = 0;             // imaging steps: the source states the backward pass takes
    int state_every = 1;        // time steps between them (k)
    int first_state = 0;        // time step of the first (its state: after that many steps)
    int value_bytes = 4;        // the propagation's precision (4 or 8)
    bool bf16_snapshots = false;
    bool two_snapshots = false;  // inverse scattering keeps u[s] and u[s+1]
    int fields = 1;              // wavefields per time level: u, or p and q (VTI/TTI)
    double state_arrays = 2;     // padded arrays in one state: both time levels of every field, and the
                                 // C-PML memory (kept near the layers: a fraction of an array per axis)
    int parameter_arrays = 2;    // padded parameter arrays of a propagator, shared by its members
    int members = 1;             // shots of the batch
    int window_scratch = 0;      // more window arrays in double for imaging (the VTI/TTI born
                                 // adjoint's diag(H, V): 2, and 6 fluxes when tilted)
};

// Fields and arrays of the isotropic or the VTI/TTI propagators (host_wavefields.h,
// tti_cpu_propagator.cpp, tti_cuda_propagator.cu): isotropic u, with (v dt)^2 and the
// damping; VTI/TTI p and q (snapshots, bands and states hold both), with W's three
// entries and the damping, and when tilted the axis (3) and the two-pass kernel's flux
// scratch (6). The C-PML memory is counted apart (memory_needs; anisotropy never has it).
// And what imaging with `condition` adds: two snapshots a step for inverse scattering,
// and the window scratch (MemoryNeeds::window_scratch) of the VTI/TTI born adjoint's
// diag(H, V) of the source wavefield, with a tilt its six fluxes (device_wavefields.h,
// window_operator); nothing for the others.
void set_physics(MemoryNeeds& n, ImagingCondition condition, bool anisotropic, bool tilted);

// A migration shot's needs on domain d: `states` imaging steps `every` time steps
// apart from time step `first`, in `precision`; for a batch of `members` shots.
MemoryNeeds memory_needs(const Domain& d, int steps, int states, int every, int first, Precision precision,
                         bool bf16_snapshots, ImagingCondition condition, int members = 1);

// What one rank of a shot group of `ranks` z-slabs (parallel.ranks-per-shot,
// parallel/slab_layout.h) holds of a shot's needs `whole`: its slab's padded planes
// (with the 2 R halo planes), window planes, and of the band its window planes' share
// plus the top and bottom faces (`band_depth` planes of `window_plane` nodes) where it
// has them; the largest of each over the slabs, so that one plan holds on every rank.
// The box has window_nz window planes between pml_lo and pml_hi layer planes.
MemoryNeeds slab_share(const MemoryNeeds& whole, int window_nz, double window_plane, int pml_lo, int pml_hi,
                       bool free_surface, int band_depth, int ranks);

// The propagation's own arrays (both propagators, receiver traces aside): per
// propagator the state arrays of every member and the parameter arrays, and the
// image, illumination and v^2 on the window in double (per member but (v dt)^2, the
// damping and v^2).
double propagation_bytes(const MemoryNeeds& n);

struct MemoryPlan {
    SourceStorage storage = SourceStorage::Auto;  // the one chosen
    bool fits = true;                             // bytes_kept within the budget (checkpoints: one state)
    double budget = 0;                            // bytes allowed for it
    double snapshot_bytes = 0, band_bytes = 0;    // what each way would hold
    double state_bytes = 0;                       // one checkpoint
    int checkpoints = 0;   // the schedule's checkpoints (storage == Checkpoints): stored + the first
    long forward_steps = 0;  // source time steps run forward: first sweep, recomputation, rebuilding the first state
    double recompute = 1;    // forward_steps over one forward sweep (1 for snapshots)
    double bytes_kept = 0;   // memory the chosen way holds
};

// "use migration.storage auto or checkpoints, or " where `requested` is another storage
// than those (they hold the least already), else "": a refusal's advice.
std::string other_storage(SourceStorage requested);
// The plan for `requested` (Auto: the first that fits) within `budget` bytes; throws,
// naming migration.memory-budget and every way's size, when it does not fit (with
// checkpoints: not one state stored). All sizes are the whole batch's.
// fix: what the refusal suggests (empty: a larger budget, another storage, a smaller
// aperture).
MemoryPlan plan_memory(const MemoryNeeds& n, SourceStorage requested, double budget, const std::string& shot,
                       const std::string& fix = "");
// The same without throwing: fits says whether it does.
MemoryPlan try_plan_memory(const MemoryNeeds& n, SourceStorage requested, double budget);

// The memory the machine has free now: on a GPU the device's, on the CPU this rank's
// part of the available host memory (host_memory(): MemAvailable within the cgroup's
// and the address-space limits, shared by the node's ranks); throws, naming
// migration.memory-budget, when it cannot be read.
double free_memory(const Backend& backend);
// What the machine can give to the kept source wavefield: `free` (free_memory: now, or
// measured before the propagators a job keeps were made), less `not_yet_allocated`
// bytes still to come and a margin of 10% of it (other processes, allocator slack).
double auto_memory_budget(double free, double not_yet_allocated);

}  // namespace rtm
