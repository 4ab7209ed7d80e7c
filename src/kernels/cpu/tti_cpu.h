#pragma once
// CPU time step of the pseudo-acoustic VTI/TTI system: the reference (twin) for the GPU
// TTI kernels. The system and why it is stable and self-adjoint: docs/anisotropy.md.
#include <functional>

#include "kernels/step_args.h"

namespace rtm::kernels {

template <class T>
struct TtiStepArgs {
    Box box;
    T inv_h2[3];                     // 1/dx^2, 1/dy^2, 1/dz^2 (inv_h2[1] = 0 in 2D)
    T inv_h[3];                      // 1/dx, 1/dy, 1/dz (inv_h[1] = 0 in 2D)
    const T* p = nullptr;            // u[n], both components, padded
    const T* q = nullptr;
    T* wp = nullptr;                 // in: u[n-1], out: u[n+1]
    T* wq = nullptr;
    // W = (v dt)^2 [[1 + 2 eps, b], [b, 1]] per padded point: W_pp, W_pq, W_qq.
    const T* cpp = nullptr;
    const T* cpq = nullptr;
    const T* cqq = nullptr;
    // TTI: the unit symmetry axis n per padded point (x, y, z; null: VTI) and six
    // padded scratch fields whose halo stays zero (the first derivatives of pass 1), but
    // for the z fluxes' halo above a free surface (their mirror).
    const T* axis[3] = {nullptr, nullptr, nullptr};
    T* flux[6] = {nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};
    // Damping k per padded point (0 in the window), as StepArgs::damp; null: none.
    const T* damp = nullptr;
    // Batch members: p, q, wp, wq one after another at a stride of box.padded_size().
    int batch = 1;
};

// u[n+1] = 2 u[n] - u[n-1] + W L u[n], u = (p, q), L = diag(H, V), into (wp, wq);
// with damping (2 u - (1 - k) u[n-1] + W L u) / (1 + k), as the isotropic step.
//
// VTI (axis null): H = Dxx + Dyy, V = Dzz, the compact 8th-order second derivatives.
//   Per point (fp32): reads p, q, wp, wq, cpp, cpq, cqq, damp, writes wp, wq: 40 B;
//   flops: 2D 2 x (8 adds + 4 mults + 2) + update 2 x 8 = about 44; 3D about 60.
// TTI (axis set): H = Lap_c - div(n n^T grad), V = Lap_c - div((I - n n^T) grad), Lap_c
//   the compact Laplacian, grad and div the 8th-order first-derivative stencils (G and
//   -G^T), in two passes through memory:
//   pass 1: f[0..2] = n (n . grad p), f[3..5] = (I - n n^T) grad q;
//   pass 2: H p = Lap_c p - div f[0..2], V q = Lap_c q - div f[3..5], then the update.
//   Per point (fp32), 3D: pass 1 reads p, q, n (5 values) and writes 6: 44 B; pass 2
//   reads 6 fluxes, p, q, wp, wq, cpp, cpq, cqq, damp and writes wp, wq: 72 B; 116 B in
//   all (2D: 32 + 56 = 88 B). Flops: pass 1 the first derivatives of p and q (11 each)
//   and the projections, pass 2 their divergences, two compact Laplacians (14 per axis)
//   and the update (16): about 270 in 3D, 180 in 2D.
// A free surface mirrors wp and wq afterwards as the isotropic step does; in TTI pass 1's
// z fluxes are also mirrored, evenly, into the halo above it (docs/anisotropy.md, "A free
// surface"). OpenMP over z, SIMD along x.
// between (TTI): called with the member's number after its pass 1 and before its pass 2
// (the z-slabs' exchange of the fluxes' ghost planes, which pass 2 differentiates).
template <class T>
void tti_step_cpu(const TtiStepArgs<T>& args, const std::function<void(int member)>& between = {});

}  // namespace rtm::kernels
