#pragma once
// The ghost-plane exchange of a CUDA z-slab with its neighbours, device to device
// (Micikevicius 2009): the slab's propagator steps its edge planes (the R planes beside
// each inner face) first on a high-priority stream, has them copied here straight into
// the neighbours' ghost planes (cudaMemcpyAsync to memory they exported through CUDA
// IPC: NVLink peer copies between GPUs, copy engines, no SMs; a plain device copy when
// two ranks share a GPU) while the interior computes, and meets them before the next step.
//
// Each rank's two wavefield buffers (u and w, which swap every step) are exported once;
// all ranks swap in step, so this rank's buffer `which` (0: the one that was u at the
// start, 1: the other) pairs with buffer `which` of each neighbour.
// Ordering across processes (stream-ordered, no host wait for the GPU): at the end of
// each step every rank records its interprocess event `done[k % 2]` (after its kernels,
// which read its ghost planes, and its copies into the neighbours' planes), meets the
// neighbours on the host (one MPI message each way, sent after the record), then has its
// stream wait for their `done[k % 2]`. So step k + 1 reads ghosts only after they arrived,
// and its copies overwrite a neighbour's planes only after the neighbour's step k, which
// read them, is done. Two events alternate: a neighbour cannot record `done[k % 2]` again
// (step k + 2) before this rank has sent its message of step k + 1, after its wait.
//
// Available where every rank of the group has its neighbours on its node, on its own GPU
// or one it can reach by peer access (else the slab propagator exchanges through the host
// and MPI: copy_planes_out/in). RTM_SLAB_EXCHANGE=host forces that path (benchmarks).
#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <string>

namespace rtm {

namespace parallel {
class World;
}

class CudaSlabExchange {
public:
    // Collective over `group` (its rank r holds slab r, the slabs in depth order): base
    // are this rank's two wavefield buffers (the starts of their allocations), nz the
    // slab's computed planes, plane_bytes one padded plane. Null, on every rank, where
    // the device path is not available on some rank (`why` says which and why).
    static std::unique_ptr<CudaSlabExchange> open(const parallel::World& group, void* const base[2], int nz,
                                                  std::size_t plane_bytes, std::string* why);
    ~CudaSlabExchange();
    CudaSlabExchange(const CudaSlabExchange&) = delete;
    CudaSlabExchange& operator=(const CudaSlabExchange&) = delete;

    bool above() const { return up_.ghosts[0] != nullptr; }
    bool below() const { return down_.ghosts[0] != nullptr; }
    // Queues on `s` the copies of this rank's edge planes of buffer `which` into the
    // neighbours' ghost planes of their buffer `which`.
    void send(int which, cudaStream_t s);
    // The end of a step on `s`: records this rank's event, meets the neighbours, and has
    // `s` wait for their events (see above).
    void finish(cudaStream_t s);

private:
    struct Neighbour {
        int rank = -1;
        void* opened[2] = {nullptr, nullptr};  // their buffers, mapped here
        char* ghosts[2] = {nullptr, nullptr};  // where this rank's planes go in them
        cudaEvent_t done[2] = {nullptr, nullptr};
    };
    CudaSlabExchange(const parallel::World& group) : group_(group) {}

    const parallel::World& group_;
    char* base_[2] = {nullptr, nullptr};
    std::size_t edge_bytes_ = 0;  // R planes
    long last_ = 0;               // offset of this rank's last R computed planes
    long first_ = 0;              // offset of its first computed plane
    Neighbour up_, down_;
    cudaEvent_t done_[2] = {nullptr, nullptr};
    long steps_ = 0;
};

}  // namespace rtm
