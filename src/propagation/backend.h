#pragma once
// Choosing where propagations run: the GPU when one is present (and rtm was built
// with CUDA), else the CPU; propagation.device = cpu|gpu overrides. The log says which and why.
#include <memory>
#include <string>

#include "propagation/propagator.h"

namespace rtm {

namespace parallel {
class World;
}

enum class DeviceChoice { Auto, Cpu, Gpu };

// Parses "auto", "cpu" or "gpu" (the propagation.device option); throws naming it.
DeviceChoice parse_device(const std::string& s);

struct Backend {
    bool gpu = false;
    std::string why;  // e.g. "GPU 0: NVIDIA H100 (80 GB) found" or "no CUDA device: ..."
    DeviceChoice choice = DeviceChoice::Auto;  // what was asked for (a GPU chosen by Auto may be declined)
    // Where a shot runs: the ranks of its shot group (parallel/shot_groups.h), each
    // propagating a z-slab (propagation/slab_propagator.h); null or one rank: this rank alone.
    const parallel::World* group = nullptr;
};

// Resolves Auto; throws when Gpu is asked for but none can be used. A GPU is chosen
// for the process's node-local rank: GPU node_rank mod the GPUs it sees (one per rank).
Backend choose_backend(DeviceChoice choice, int node_rank = 0);
// Begins choose_backend's work on the GPU (the driver's and the device's context, about
// 0.2 s) on a thread of its own, so that what comes first (reading the model and the
// shots' headers) goes on beside it; choose_backend waits for it. Nothing for cpu.
void start_device(DeviceChoice choice, int node_rank = 0);

// The propagator of a shot on `backend`'s device and placement (over the ranks of
// backend.group when there are several); batch: members propagated together (see Propagator).
std::unique_ptr<Propagator> make_propagator(const Domain& domain, Precision precision,
                                            const Backend& backend, int batch = 1);

// Implemented by the CUDA backend (propagation/cuda_propagator.cu) when built.
// Makes GPU node_rank mod count the current device, when there is one.
bool cuda_device_available(std::string* description, int node_rank = 0);
// Free memory of the current CUDA device in bytes (0 without CUDA).
double device_free_bytes();
// Peak memory bandwidth of the current CUDA device in bytes/s, from its memory clock and
// bus width (0 without CUDA, or when the device does not report them).
double device_memory_bandwidth();
std::unique_ptr<Propagator> make_cuda_propagator(const Domain& domain, Precision precision, int batch = 1);

}  // namespace rtm
