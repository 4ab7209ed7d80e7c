#pragma once
// CPU time step: the twin of the CUDA kernels (same function, tests hold them together).
#include "kernels/step_args.h"

namespace rtm::kernels {

// u[n+1] = 2 u[n] - u[n-1] + (v dt)^2 (Lap8 u[n] + C-PML terms), into args.w
// (or the damped update, see StepArgs::damp).
// Points farther than R from every absorbing layer take the plain update; the rest
// first advance psi (pass 1, layers only) and then the C-PML update (pass 2), each
// axis's terms only where the point lies in that axis's zone (layer + R cells; its
// memory is kept near its layers alone, StepArgs::mem). A row is cut into x-zone and
// other segments, each one branch-free, vectorised path.
// Then, with a free surface, sets w = 0 at iz = 0 and mirrors it antisymmetrically
// into the halo above. OpenMP over z, SIMD along x. Batch members (StepArgs::batch)
// one after another.
template <class T>
void step_cpu(const StepArgs<T>& args);

// The free-surface mirror on its own (propagators apply it to u[n] before each step,
// after whatever changed u[n] since the kernel's mirror: injection, volume sources).
template <class T>
void free_surface_cpu(const Box& box, T* f);

}  // namespace rtm::kernels
