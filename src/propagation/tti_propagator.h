#pragma once
// Propagators of anisotropic domains (Domain::anisotropic(): pseudo-acoustic VTI/TTI).
// make_cpu_propagator and make_cuda_propagator hand such domains here.
#include <memory>
#include <utility>
#include <vector>

#include "kernels/cpu/inject_cpu.h"
#include "propagation/propagator.h"

namespace rtm {

std::unique_ptr<Propagator> make_tti_cpu_propagator(const Domain& domain, Precision precision, int batch = 1);
// The CUDA backend's (tti_cuda_propagator.cu; built with CUDA only).
std::unique_ptr<Propagator> make_tti_cuda_propagator(const Domain& domain, Precision precision, int batch = 1);

// What both backends inject: the sources' taps on p and on q, W B s = (v dt)^2 ((1 + 2 eps
// + b) / 2, (b + 1) / 2) s per tap, divided by 1 + k in a damping layer (as
// Domain::injection), times the tap's weight, grouped by target point (Injection::group).
std::pair<kernels::Injection, kernels::Injection> tti_injection(const Domain& d, const std::vector<PointStencil>& where,
                                                                const std::vector<std::vector<double>>& traces);

// What a unit source density adds to field 0 (p) or 1 (q) at padded point i: W B / (1 + k)
// = ((W_pp + W_pq) / 2, (W_pq + W_qq) / 2) / (1 + k) (the sources' taps, add_field).
double tti_injection_weight(const Domain& d, int field, long i);
// W_kj / (1 + k) at padded point i: what a unit density of field j adds to field k (the
// Born source, Propagator::add_born_source).
double tti_w(const Domain& d, int k, int j, long i);

// Both backends' TTI propagators hold p and q in one array per time level (p of every
// member, then q): the isotropic propagators' storage for migration (band, states,
// snapshots, image) then moves both fields as it moves the members of a batch, and
// images their mean (p + q) / 2, what receivers record (host_wavefields.h,
// device_wavefields.h).

}  // namespace rtm
