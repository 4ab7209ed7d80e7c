#pragma once
// Hopper's bulk tensor copies (TMA) for the kernels that take whole tiles from the copy
// engine (step_cuda.cu's t32x16 and vector kernels, tti_cuda.cu's SWiC): mbarriers in
// shared memory, the copy of a tile, and the host's tensor maps over padded arrays.
#include <cuda.h>  // CUtensorMap (the encoder is fetched through the runtime: no -lcuda)
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/error.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/step_args.h"

namespace rtm::kernels::cuda {

__device__ __forceinline__ unsigned smem_addr(const void* p) {
    return unsigned(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(std::uint64_t* bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(std::uint64_t* bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes)
                 : "memory");
}
__device__ __forceinline__ void mbar_arrive(std::uint64_t* bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
}
__device__ __forceinline__ void mbar_wait(std::uint64_t* bar, unsigned parity) {
    unsigned done = 0;
    do {
        asm volatile(
            "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
            : "=r"(done)
            : "r"(smem_addr(bar)), "r"(parity)
            : "memory");
    } while (!done);
}
// Tile at padded coordinates (x, y, z) of `map` into shared memory, completing on `bar`.
__device__ __forceinline__ void tma_load(void* dst, const CUtensorMap* map, int x, int y, int z,
                                         std::uint64_t* bar) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
        "[%5];" ::"r"(smem_addr(dst)),
        "l"(reinterpret_cast<std::uint64_t>(map)), "r"(x), "r"(y), "r"(z), "r"(smem_addr(bar))
        : "memory");
}
// The same tile fetched into L2 only (no shared memory, no barrier): a later load finds it there.
__device__ __forceinline__ void tma_prefetch(const CUtensorMap* map, int x, int y, int z) {
    asm volatile("cp.async.bulk.prefetch.tensor.3d.L2.global.tile [%0, {%1, %2, %3}];" ::"l"(
                     reinterpret_cast<std::uint64_t>(map)),
                 "r"(x), "r"(y), "r"(z)
                 : "memory");
}

// Bulk tensor copies need compute capability 9.0 (Hopper) or later.
inline bool tma_supported() {
    static const bool ok = [] {
        int dev = 0, major = 0;
        RTM_CUDA_CHECK(cudaGetDevice(&dev));
        RTM_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
        return major >= 9;
    }();
    return ok;
}

// A 3D tensor map over a padded array (planes: nz + 2R per batch member) whose tiles
// are box_x x box_y x 1 values; out-of-bounds parts of a tile read as zeros. Encoded
// once per array and tile (a step launches with the same few: u and w alternate).
// `fallback`: what a user can run instead, should the driver refuse.
template <class T>
CUtensorMap tensor_map(const T* base, const Box& B, long planes, int box_x, int box_y, const char* fallback) {
    static std::mutex mu;
    static std::map<std::vector<long>, CUtensorMap> cache;
    const std::vector<long> key = {long(reinterpret_cast<std::uintptr_t>(base)), B.sy(), B.ny + 2L * B.halo_y(),
                                   planes, box_x, box_y};
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
    static const auto encode = []() -> PFN_cuTensorMapEncodeTiled_v12000 {
        void* fn = nullptr;
        cudaDriverEntryPointQueryResult q{};
        RTM_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q));
        return q == cudaDriverEntryPointSuccess ? reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn) : nullptr;
    }();
    if (!encode) fail("tensor_map", "the driver has no cuTensorMapEncodeTiled", fallback);
    CUtensorMap m;
    const cuuint64_t dims[3] = {cuuint64_t(B.sy()), cuuint64_t(B.ny + 2 * B.halo_y()), cuuint64_t(planes)};
    const cuuint64_t strides[2] = {cuuint64_t(B.sy()) * sizeof(T), cuuint64_t(B.sz()) * sizeof(T)};
    const cuuint32_t box[3] = {cuuint32_t(box_x), cuuint32_t(box_y), 1}, elem[3] = {1, 1, 1};
    const CUresult r = encode(&m, sizeof(T) == 4 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
                              3, const_cast<T*>(base), dims, strides, box, elem, CU_TENSOR_MAP_INTERLEAVE_NONE,
                              CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
        fail("tensor_map", "cuTensorMapEncodeTiled failed (" + std::to_string(int(r)) + ") for a " +
                              std::to_string(B.nx) + " x " + std::to_string(B.ny) + " x " + std::to_string(B.nz) +
                              " box",
             fallback);
    cache[key] = m;
    return m;
}

}  // namespace rtm::kernels::cuda
