#include "pipeline/memory_plan.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/error.h"
#include "core/host_memory.h"
#include "parallel/slab_layout.h"
#include "parallel/world.h"
#include "physics/stencil.h"
#include "pipeline/checkpoint_schedule.h"

namespace rtm {

const char* storage_name(SourceStorage s) {
    switch (s) {
        case SourceStorage::Snapshots: return "snapshots";
        case SourceStorage::Boundary: return "boundary";
        case SourceStorage::Checkpoints: return "checkpoints";
        default: return "auto";
    }
}

MemoryNeeds memory_needs(const Domain& d, int steps, int states, int every, int first, Precision precision,
                         bool bf16_snapshots, ImagingCondition condition, int members) {
    MemoryNeeds n;
    n.members = members;
    n.window_points = double(d.window().size());
    n.padded_points = double(d.box().padded_size());
    n.band_points = double(d.band_points());
    n.steps = steps;
    n.states = states;
    n.state_every = every;
    n.first_state = first;
    n.value_bytes = precision == Precision::Double ? 8 : 4;
    n.bf16_snapshots = bf16_snapshots;
    set_physics(n, condition, d.anisotropic(), d.anisotropic() && d.tti().tilted);
    if (d.options().boundary == Boundary::Cpml)  // psi and zeta of every axis with layers
        n.state_arrays += 2.0 * double(kernels::cpml_memory(d.box()).values()) / n.padded_points;
    return n;
}

MemoryNeeds slab_share(const MemoryNeeds& whole, int window_nz, double window_plane, int pml_lo, int pml_hi,
                       bool free_surface, int band_depth, int ranks) {
    if (ranks <= 1) return whole;
    const int nz = window_nz + pml_lo + pml_hi;
    MemoryNeeds n = whole;
    n.padded_points = n.window_points = n.band_points = 0;
    for (const parallel::Slab& s : parallel::slab_layout(nz, pml_lo, pml_hi, free_surface, ranks)) {
        const int w0 = std::max(s.z0, pml_lo), w1 = std::min(s.z1, pml_lo + window_nz);
        const int wplanes = std::max(0, w1 - w0);
        const double faces = double(w0 == pml_lo && wplanes > 0) + double(w1 == pml_lo + window_nz && wplanes > 0);
        n.padded_points = std::max(n.padded_points, whole.padded_points * double(s.planes() + 2 * stencil::R) /
                                                        double(nz + 2 * stencil::R));
        n.window_points = std::max(n.window_points, wplanes * window_plane);
        n.band_points = std::max(n.band_points, std::min(whole.band_points, whole.band_points * wplanes / window_nz +
                                                                                 faces * band_depth * window_plane));
    }
    return n;
}

void set_physics(MemoryNeeds& n, ImagingCondition condition, bool anisotropic, bool tilted) {
    n.fields = anisotropic ? 2 : 1;
    n.state_arrays = 2 * n.fields;
    n.parameter_arrays = anisotropic ? 4 + (tilted ? 9 : 0) : 2;
    n.two_snapshots = condition == ImagingCondition::InverseScattering;
    n.window_scratch = condition == ImagingCondition::BornAdjoint && anisotropic ? (tilted ? 8 : 2) : 0;
}

double propagation_bytes(const MemoryNeeds& n) {
    // Per propagator: the state arrays of every member and the parameter arrays; then
    // image and illumination of every member, v^2 and the imaging scratch, window arrays
    // in double.
    return 2 * n.padded_points * n.value_bytes * (n.state_arrays * double(n.members) + n.parameter_arrays) +
           (2.0 * n.members + 1 + n.window_scratch) * 8 * n.window_points;
}

MemoryPlan try_plan_memory(const MemoryNeeds& n, SourceStorage requested, double budget) {
    MemoryPlan p;
    p.budget = budget;
    p.snapshot_bytes = double(n.states) * n.window_points * (n.bf16_snapshots ? 2 : n.value_bytes) *
                       (n.two_snapshots ? 2 : 1) * n.fields * n.members;
    p.band_bytes = double(n.steps + 1) * n.band_points * 4 * n.fields * n.members;
    p.state_bytes = n.padded_points * n.value_bytes * n.state_arrays * n.members;
    p.storage = requested;
    if (p.storage == SourceStorage::Auto)
        p.storage = p.snapshot_bytes <= budget ? SourceStorage::Snapshots
                    : p.band_bytes <= budget   ? SourceStorage::Boundary
                                               : SourceStorage::Checkpoints;
    switch (p.storage) {
        case SourceStorage::Snapshots:
            p.bytes_kept = p.snapshot_bytes;
            p.forward_steps = n.steps;
            break;
        case SourceStorage::Boundary:
            p.bytes_kept = p.band_bytes;
            p.forward_steps = 2L * n.steps - 1;  // forward, then rebuilt backwards to u[0]
            break;
        default: {
            // As many states as the budget holds, and the first, not stored; no more
            // checkpoints than states. Rebuilding the first costs first_state steps
            // every time the schedule restores it.
            const double stored = std::floor(budget / p.state_bytes);
            p.checkpoints = int(std::min<double>(std::max(n.states, 1), stored + 1));
            p.bytes_kept = (p.checkpoints - 1) * p.state_bytes;
            if (stored >= 1) {
                long rebuilds = 0;
                if (n.first_state > 0)
                    for (const auto& a : checkpoint_schedule(n.states, p.checkpoints))
                        rebuilds += a.kind == CheckpointAction::Restore && a.slot == 0;
                p.forward_steps = n.first_state * (1 + rebuilds) +
                                  long(n.state_every) * checkpoint_forward_steps(n.states, p.checkpoints);
            }
        }
    }
    p.recompute = n.steps > 0 ? double(p.forward_steps) / n.steps : 1;
    p.fits = !(p.bytes_kept > budget || (p.storage == SourceStorage::Checkpoints && !(budget >= p.state_bytes)));
    return p;
}

std::string other_storage(SourceStorage requested) {
    // (auto ends with checkpoints, which hold the least: nothing else to advise then.)
    return requested == SourceStorage::Snapshots || requested == SourceStorage::Boundary
               ? "use migration.storage auto or checkpoints, or "
               : "";
}

MemoryPlan plan_memory(const MemoryNeeds& n, SourceStorage requested, double budget, const std::string& shot,
                       const std::string& fix) {
    const MemoryPlan p = try_plan_memory(n, requested, budget);
    if (!p.fits) {
        std::ostringstream os;
        os.precision(3);
        os << shot << " cannot keep its source wavefield in the budget of " << budget / 1e9 << " GB by "
           << storage_name(p.storage) << ": snapshots would take " << p.snapshot_bytes / 1e9 << " GB, the boundary band "
           << p.band_bytes / 1e9 << " GB, one checkpoint " << p.state_bytes / 1e9 << " GB";
        fail("option migration.memory-budget", os.str(),
             !fix.empty() ? fix : "Raise the budget (auto: what the machine has free), " +
                                      (other_storage(requested).empty() ? "or " : other_storage(requested)) +
                                      "use a smaller aperture");
    }
    return p;
}

double free_memory(const Backend& backend) {
    if (backend.gpu) {
        const double free = device_free_bytes();
        if (!(free > 0))
            fail("option migration.memory-budget = auto", "the free memory of the GPU could not be read",
                 "Give the budget in GB, e.g. --migration.memory-budget 4");
        return free;
    }
    // On the CPU the node's ranks share the host's memory (each takes its part of it,
    // instead of each counting all of it as its own).
    const HostMemory m = host_memory(parallel::World::get().node_size());
    if (!(m.available > 0))
        fail("option migration.memory-budget = auto",
             "no host memory is free for this rank (its part of " + m.said() +
                 ", or MemAvailable in /proc/meminfo not reported)",
             "Free memory (or raise the limit), or give the budget in GB, e.g. --migration.memory-budget 4");
    return m.available;
}

double auto_memory_budget(double free, double not_yet_allocated) { return std::max(0.0, 0.9 * free - not_yet_allocated); }

}  // namespace rtm
