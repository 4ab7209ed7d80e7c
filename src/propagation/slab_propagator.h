#pragma once
// One shot over the ranks of a shot group (parallel/shot_groups.h): each rank propagates
// one z-slab of the domain (parallel/slab_layout.h) with any backend's propagator of its
// slab (Domain::slab), and this decorator makes the group look like one Propagator of
// the whole domain, so that modelling and migration run unchanged on every member.
//
//  - Ghost planes: after anything that changes the current wavefield's owned values
//    (step, reset, recall, restore/load_band, load_state, add_field, reverse_time) its
//    R planes beside each inner face are stale in the neighbour; before anything reads
//    them (the step's Laplacian, receiver sampling, derivatives of an imaging condition)
//    they are exchanged (copy_planes_out/in and MPI over the group, every batch member).
//    u[n-1] and the C-PML memory are only read pointwise (faces keep R planes from the
//    layers), so they are never exchanged. VTI/TTI: p and q both (a plane is p's then
//    q's); the TTI step's pass-1 fluxes, which pass 2 differentiates across the faces,
//    are exchanged between its passes (Propagator::set_between_passes; on a GPU the TTI
//    slab steps with the two-pass kernel for it). Anisotropic slabs run without Born
//    modelling and the born-adjoint condition (their H p, V q across a face need 2 R
//    ghost planes): both refused.
//  - Sources: each slab injects the taps it owns, in the stencil's order; receivers: each
//    is sampled by the slab owning its stencil's middle plane, reading all its taps from
//    owned and ghost planes: the same sums in the same order as one box, bit for bit.
//  - Results (receiver traces, wavefields, the image) are assembled on every member, and
//    finite() is agreed over the group, so every member takes the same decisions.
//  - Errors: every member runs the same code on the same data, so errors of the data
//    or a blow-up happen on all at the same point; a member's own failure (its memory)
//    leaves the others in an exchange. rtm migrate's shot loop has the group agree on
//    each shot's outcome (WorkQueue::agree): a failure all members met is the shot's
//    (retried on another group, then recorded failed), one member's alone ends the job
//    after kGroupAgreeSeconds, naming the rank and the reason. In rtm model any error
//    ends the job at once, as with one rank per shot.
//  - GPU ranks: a CUDA slab exchanges in its own steps where the group allows
//    (Propagator::exchange_in_step: edge planes first, copied device to device by CUDA
//    IPC while the interior computes, propagation/cuda_slab_exchange.h); the exchange
//    here (host-staged through MPI) then runs only after other changes of the wavefield
//    (reset, add_field, recall, band and state loads), and always where the group cannot
//    (ranks on several nodes, batches, thin slabs, VTI/TTI). The derivative imaging
//    conditions read the ghost planes on the device (Propagator::window_continues); a
//    CPU slab's are computed here on the host.
#include <memory>

#include "parallel/slab_layout.h"
#include "parallel/world.h"
#include "propagation/backend.h"

namespace rtm {

// `group`: the ranks of the shot (more than one); the slabs as slab_layout cuts the
// domain's box; `domain` outlives the propagator.
std::unique_ptr<Propagator> make_slab_propagator(const Domain& domain, Precision precision, const Backend& backend,
                                                 const parallel::World& group, int batch);

}  // namespace rtm
