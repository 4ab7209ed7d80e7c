#include "propagation/cuda_slab_exchange.h"

#include <cstdlib>
#include <cstring>
#include <vector>

#include "kernels/cuda/cuda_check.h"
#include "parallel/world.h"
#include "physics/stencil.h"

namespace rtm {

namespace {

using stencil::R;

// What each rank tells the others once (allgather).
struct Info {
    int ok = 0;      // exported its buffers and events
    int device = 0;  // its CUDA device
    int nz = 0;      // its slab's computed planes
    char node[64] = {};
    cudaIpcMemHandle_t mem[2];
    cudaIpcEventHandle_t event[2];
};

std::string cuda_error(cudaError_t e) {
    cudaGetLastError();  // clear it: the host path goes on
    return cudaGetErrorString(e);
}

}  // namespace

std::unique_ptr<CudaSlabExchange> CudaSlabExchange::open(const parallel::World& group, void* const base[2], int nz,
                                                         std::size_t plane_bytes, std::string* why) {
    std::unique_ptr<CudaSlabExchange> x(new CudaSlabExchange(group));
    std::string reason;
    Info me;
    const char* env = std::getenv("RTM_SLAB_EXCHANGE");
    me.ok = !(env && std::string(env) == "host");
    if (!me.ok) reason = "RTM_SLAB_EXCHANGE=host";
    RTM_CUDA_CHECK(cudaGetDevice(&me.device));
    me.nz = nz;
    std::strncpy(me.node, group.node_name().c_str(), sizeof me.node - 1);
    for (int b = 0; b < 2 && me.ok; ++b) {
        x->base_[b] = static_cast<char*>(base[b]);
        cudaError_t e = cudaEventCreateWithFlags(&x->done_[b], cudaEventDisableTiming | cudaEventInterprocess);
        if (e == cudaSuccess) e = cudaIpcGetEventHandle(&me.event[b], x->done_[b]);
        if (e == cudaSuccess) e = cudaIpcGetMemHandle(&me.mem[b], base[b]);
        if (e != cudaSuccess) {
            me.ok = 0;
            reason = "CUDA IPC: " + cuda_error(e);
        }
    }
    const auto all = group.allgather(&me, sizeof me);
    const auto info = [&](int r) {
        Info i;
        std::memcpy(&i, all[std::size_t(r)].data(), sizeof i);
        return i;
    };
    const int r = group.rank();
    const auto reachable = [&](const Info& n) {
        if (std::strncmp(n.node, me.node, sizeof me.node) != 0) {
            reason = "rank " + std::to_string(r) + "'s neighbour is on another node (" + n.node + ")";
            return false;
        }
        int can = 1;
        if (n.device != me.device) RTM_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, me.device, n.device));
        if (!can) reason = "GPU " + std::to_string(me.device) + " cannot reach GPU " + std::to_string(n.device) + " (no peer access)";
        return can != 0;
    };
    bool ok = me.ok;
    for (int g = 0; g < group.size(); ++g) ok = ok && info(g).ok;
    if (ok && r > 0) ok = reachable(info(r - 1));
    if (ok && r + 1 < group.size()) ok = reachable(info(r + 1));
    if (!group.all(ok)) {
        if (why) *why = reason.empty() ? "another rank of the group cannot use CUDA IPC" : reason;
        return nullptr;
    }
    // Map the neighbours' buffers and events (peer access enabled as the copies need it).
    x->edge_bytes_ = std::size_t(R) * plane_bytes;
    x->first_ = long(R) * long(plane_bytes);
    x->last_ = long(nz) * long(plane_bytes);
    bool opened = true;
    const auto attach = [&](Neighbour& n, int rank, long ghosts_at) {
        const Info i = info(rank);
        n.rank = rank;
        for (int b = 0; b < 2 && opened; ++b) {
            cudaError_t e = cudaIpcOpenMemHandle(&n.opened[b], i.mem[b], cudaIpcMemLazyEnablePeerAccess);
            if (e == cudaSuccess) e = cudaIpcOpenEventHandle(&n.done[b], i.event[b]);
            if (e != cudaSuccess) {
                opened = false;
                reason = "CUDA IPC open: " + cuda_error(e);
                break;
            }
            n.ghosts[b] = static_cast<char*>(n.opened[b]) + ghosts_at;
        }
    };
    // Above: its bottom ghost planes (computed planes nz_above .. + R - 1); below: its top ones.
    if (r > 0) attach(x->up_, r - 1, long(info(r - 1).nz + R) * long(plane_bytes));
    if (r + 1 < group.size()) attach(x->down_, r + 1, 0);
    if (!group.all(opened)) {
        if (why) *why = reason.empty() ? "another rank of the group could not open the CUDA IPC handles" : reason;
        return nullptr;
    }
    return x;
}

CudaSlabExchange::~CudaSlabExchange() {
    // Copies into the neighbours' buffers finish before their mappings go.
    cudaDeviceSynchronize();
    for (Neighbour* n : {&up_, &down_})
        for (int b = 0; b < 2; ++b) {
            if (n->done[b]) cudaEventDestroy(n->done[b]);
            if (n->opened[b]) cudaIpcCloseMemHandle(n->opened[b]);
        }
    for (auto& e : done_)
        if (e) cudaEventDestroy(e);
}

void CudaSlabExchange::send(int which, cudaStream_t s) {
    if (above())
        RTM_CUDA_CHECK(cudaMemcpyAsync(up_.ghosts[which], base_[which] + first_, edge_bytes_, cudaMemcpyDefault, s));
    if (below())
        RTM_CUDA_CHECK(cudaMemcpyAsync(down_.ghosts[which], base_[which] + last_, edge_bytes_, cudaMemcpyDefault, s));
}

void CudaSlabExchange::finish(cudaStream_t s) {
    const int k = int(steps_++ % 2);
    RTM_CUDA_CHECK(cudaEventRecord(done_[k], s));
    // After the record: a neighbour's wait below then sees this step's.
    char mine = 1, got[2] = {0, 0};
    const int up = above() ? up_.rank : -1, down = below() ? down_.rank : -1;
    group_.sendrecv(&mine, down < 0 ? 0 : 1, down, &got[0], up < 0 ? 0 : 1, up);
    group_.sendrecv(&mine, up < 0 ? 0 : 1, up, &got[1], down < 0 ? 0 : 1, down);
    if (above()) RTM_CUDA_CHECK(cudaStreamWaitEvent(s, up_.done[k], 0));
    if (below()) RTM_CUDA_CHECK(cudaStreamWaitEvent(s, down_.done[k], 0));
}

}  // namespace rtm
