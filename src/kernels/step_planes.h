#pragma once
// A time step over a range of z planes: the step arguments of computed planes [z0, z1)
// of a box as a box of its own (a view into the same arrays), so that any step kernel,
// CPU or CUDA, updates those planes alone, knowing nothing of the rest. A z-slab's
// propagator steps its edge planes first and its interior after (the exchange with the
// neighbours hidden behind the interior, propagation/cuda_slab_exchange.h).
//
// Same arithmetic per point as the whole box when every cut (z0 or z1 strictly inside
// the box) lies at least R planes clear of the depth layers (plane_cut_clean):
//  - the layer planes and zones (layer + R planes) of the part are the box's own, so
//    every point takes the same code path (zone tests on the part's Box);
//  - the part reads its halo planes (the neighbouring planes of the box) as the box's
//    step would, and writes only its own planes of w and the memory variables;
//  - the C-PML memory psi is written on layer planes alone, and read across a cut only
//    by zone points within R of it: none, the cut being R clear of the zones' ends;
//  - under a free surface the part holding plane 0 mirrors planes 1 .. R into the halo
//    after its update: it must hold them (a cut below plane R).
// So stepping the parts of a box one after another, or at once (they write disjoint
// planes and read u alone across the cuts), gives the whole box's step bit for bit.
// One batch member (the members' stride is the box's padded size).
#include <algorithm>
#include <string>

#include "core/error.h"
#include "kernels/step_args.h"

namespace rtm::kernels {

// Whether a cut before plane c of `box` keeps the arithmetic of every point (see above).
inline bool plane_cut_clean(const Box& box, int c) {
    if (c <= 0 || c >= box.nz) return true;
    const int lo = box.pml_lo[2], hi = box.pml_hi[2];
    return (lo == 0 || c >= lo + stencil::R) && (hi == 0 || c <= box.nz - hi - stencil::R) &&
           (!box.free_surface || c > stencil::R);
}

template <class T>
StepArgs<T> step_planes(const StepArgs<T>& a, int z0, int z1) {
    const Box& b = a.box;
    if (a.batch != 1 || z0 < 0 || z1 > b.nz || z1 <= z0 || !plane_cut_clean(b, z0) || !plane_cut_clean(b, z1))
        fail("step_planes", "planes [" + std::to_string(z0) + ", " + std::to_string(z1) + ") of a box of " +
                                std::to_string(b.nz) + " planes (layers " + std::to_string(b.pml_lo[2]) + " and " +
                                std::to_string(b.pml_hi[2]) + ", batch " + std::to_string(a.batch) + ")",
             "Internal error: cut one member's box at least R planes clear of its layers' zones");
    StepArgs<T> p = a;
    const long shift = long(z0) * b.sz();
    p.box = planes_of(b, z0, z1);
    p.u += shift;
    p.w += shift;
    p.vdt2 += shift;
    if (p.damp) p.damp += shift;
    p.mem.z0 += z0;  // (the memory variables keep the whole box's index: StepArgs::mem_at)
    if (p.a[2]) p.a[2] += z0;  // the z profile is indexed by computed plane
    if (p.b[2]) p.b[2] += z0;
    return p;
}

}  // namespace rtm::kernels
