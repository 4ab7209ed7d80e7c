#pragma once
// Propagators of anisotropic domains (Domain::anisotropic(): pseudo-acoustic VTI/TTI).
// make_cpu_propagator and make_propagator hand such domains here; the CUDA backend
// has no TTI kernels yet and make_propagator refuses it, naming the missing feature.
#include <memory>

#include "propagation/propagator.h"

namespace rtm {

std::unique_ptr<Propagator> make_tti_cpu_propagator(const Domain& domain, Precision precision, int batch = 1);

}  // namespace rtm
