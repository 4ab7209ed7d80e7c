#pragma once
// Choosing where propagations run: the GPU when one is present (and rtm was built
// with CUDA), else the CPU; propagation.device = cpu|gpu overrides. The log says which and why.
#include <memory>
#include <string>

#include "propagation/propagator.h"

namespace rtm {

enum class DeviceChoice { Auto, Cpu, Gpu };

// Parses "auto", "cpu" or "gpu" (the propagation.device option); throws naming it.
DeviceChoice parse_device(const std::string& s);

struct Backend {
    bool gpu = false;
    std::string why;  // e.g. "GPU 0: NVIDIA H100 (80 GB) found" or "no CUDA device: ..."
    DeviceChoice choice = DeviceChoice::Auto;  // what was asked for (a GPU chosen by Auto may be declined)
};

// Resolves Auto; throws when Gpu is asked for but none can be used.
Backend choose_backend(DeviceChoice choice);

// batch: members propagated together (see Propagator).
std::unique_ptr<Propagator> make_propagator(const Domain& domain, Precision precision,
                                            const Backend& backend, int batch = 1);

// Implemented by the CUDA backend (propagation/cuda_propagator.cu) when built.
bool cuda_device_available(std::string* description);
std::unique_ptr<Propagator> make_cuda_propagator(const Domain& domain, Precision precision, int batch = 1);

}  // namespace rtm
